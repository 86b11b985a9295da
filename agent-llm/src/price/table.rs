//! A [`PriceTable`]: providers, their models' names and their prices, read from JSON in the
//! genai-prices shape; finding a model's price and pricing a call.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

use super::matcher::Matcher;
use super::model_price::ModelPrice;
use super::money::Cost;
use crate::message::Usage;

/// The built-in table: genai-prices' `prices/data_slim.json` (see `agent-llm/prices/README.md`).
const BUILTIN: &str = include_str!("../../prices/genai-prices.json");

/// The name errors in the built-in table are reported under.
const BUILTIN_NAME: &str = "agent-llm/prices/genai-prices.json";

/// A price table that cannot be used: it could not be read, or it is not a table.
#[derive(Debug, thiserror::Error)]
pub enum PriceTableError {
    /// The file could not be read.
    #[error("cannot read the price table {file}: {error}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        error: std::io::Error,
    },
    /// The text is not a price table: where, and what is wrong.
    #[error("{file}:{line}:{column}: not a price table: {message}")]
    Invalid {
        /// The file (or the name the text was given).
        file: String,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What is wrong there.
        message: String,
    },
}

/// One provider of a table: the names it goes by, and its models.
#[derive(Debug, Clone, Deserialize)]
struct ProviderEntry {
    id: String,
    #[serde(default)]
    provider_match: Option<Matcher>,
    /// Which models a provider named by no table entry is likely to mean.
    #[serde(default)]
    model_match: Option<Matcher>,
    /// Providers whose models this one also serves at the same price.
    #[serde(default)]
    fallback_model_providers: Vec<String>,
    models: Vec<ModelEntry>,
}

/// One model of a provider.
#[derive(Debug, Clone, Deserialize)]
struct ModelEntry {
    id: String,
    /// Without one, the model's own id, exactly.
    #[serde(default, rename = "match")]
    matcher: Option<Matcher>,
    prices: Prices,
}

impl ModelEntry {
    fn matches(&self, model: &str) -> bool {
        match &self.matcher {
            Some(matcher) => matcher.matches(model),
            None => self.id.eq_ignore_ascii_case(model),
        }
    }
}

/// A model's prices: one set, or several that each apply from a date or at times of day (the
/// last one that applies wins).
#[derive(Debug, Clone)]
enum Prices {
    One(Box<ModelPrice>),
    Conditional(Vec<Conditional>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Conditional {
    #[serde(default)]
    constraint: Option<Constraint>,
    prices: ModelPrice,
}

/// When a set of prices applies: from a day on (UTC), or between two times of each day (UTC).
#[derive(Debug, Clone, Copy)]
enum Constraint {
    /// Days since 1970-01-01.
    From(i64),
    /// Seconds since midnight: `start <= now < end`.
    Daily(u32, u32),
}

impl<'de> Deserialize<'de> for Constraint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Written {
            start_date: Option<String>,
            start_time: Option<String>,
            end_time: Option<String>,
        }
        let written = Written::deserialize(deserializer)?;
        let bad = |what: &str, text: &str| serde::de::Error::custom(format!("{what} `{text}`"));
        match (written.start_date, written.start_time, written.end_time) {
            (Some(date), None, None) => day_number(&date)
                .map(Constraint::From)
                .ok_or_else(|| bad("start_date is not a date YYYY-MM-DD:", &date)),
            (None, Some(start), Some(end)) => match (second_of_day(&start), second_of_day(&end)) {
                (Some(s), Some(e)) => Ok(Constraint::Daily(s, e)),
                _ => Err(bad("a time is not HH:MM:SS:", &format!("{start}–{end}"))),
            },
            _ => Err(serde::de::Error::custom(
                "a constraint is {\"start_date\": \"YYYY-MM-DD\"} or {\"start_time\": \"HH:MM:SSZ\", \"end_time\": \"HH:MM:SSZ\"}",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Prices {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PricesVisitor;
        impl<'de> Visitor<'de> for PricesVisitor {
            type Value = Prices;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "prices: an object of prices, or a list of {\"constraint\", \"prices\"}",
                )
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Prices, A::Error> {
                ModelPrice::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(|price| Prices::One(Box::new(price)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Prices, A::Error> {
                let list = Vec::<Conditional>::deserialize(
                    serde::de::value::SeqAccessDeserializer::new(seq),
                )?;
                if list.is_empty() {
                    return Err(serde::de::Error::custom("a list of prices is empty"));
                }
                Ok(Prices::Conditional(list))
            }
        }
        deserializer.deserialize_any(PricesVisitor)
    }
}

impl Prices {
    /// The prices that apply at `at`.
    fn at(&self, at: SystemTime) -> &ModelPrice {
        match self {
            Prices::One(price) => price,
            Prices::Conditional(list) => {
                let seconds = at
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()) as i64;
                let (day, second) = (
                    seconds.div_euclid(86_400),
                    seconds.rem_euclid(86_400) as u32,
                );
                list.iter()
                    .rev()
                    .find(|c| match c.constraint {
                        None => true,
                        Some(Constraint::From(from)) => day >= from,
                        Some(Constraint::Daily(start, end)) => start <= second && second < end,
                    })
                    .map_or(&list[0].prices, |c| &c.prices)
            }
        }
    }
}

/// `YYYY-MM-DD` as days since 1970-01-01 (the proleptic Gregorian calendar).
fn day_number(date: &str) -> Option<i64> {
    let mut parts = date.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: i64 = parts.next()?.parse().ok()?;
    let day: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // Days from civil, counting years from March so the leap day comes last.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some(era * 146_097 + day_of_era - 719_468)
}

/// `HH:MM:SS`, with an optional `Z`, as seconds since midnight.
fn second_of_day(time: &str) -> Option<u32> {
    let time = time.strip_suffix('Z').unwrap_or(time);
    let mut parts = time.splitn(3, ':');
    let h: u32 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let s: u32 = parts.next().unwrap_or("0").parse().ok()?;
    (h <= 24 && m < 60 && s < 60)
        .then_some(h * 3600 + m * 60 + s)
        .filter(|&t| t <= 86_400)
}

/// Where a model's price was found.
#[derive(Debug, Clone, Copy)]
enum Found {
    /// An override set with [`PriceTable::with_model`].
    Override(usize),
    /// A provider's model.
    Table(usize, usize),
}

/// Prices of models, by provider: what [`Usage`] costs. The built-in table
/// ([`PriceTable::builtin`]) is genai-prices' data; a table of your own is the same JSON
/// (a list of providers, each `{"id", "provider_match"?, "models": [{"id", "match"?, "prices"}]}`,
/// prices in dollars per million tokens), read with [`PriceTable::from_file`] and put in front
/// of another with [`PriceTable::before`], or single models set with [`PriceTable::with_model`].
///
/// A model is looked up first among the overrides (by exact name), then among the providers
/// named like the call's provider (`anthropic`, `openai`, `gemini` → google; in order, then
/// their fallback providers); a provider the table does not name is looked up by model name in
/// every provider. A model found nowhere is unpriced: [`Cost::UNPRICED`], never $0.
///
/// ```
/// use agent_llm::{ModelPrice, PriceTable, Usage};
/// let usage = Usage { input_tokens: 1_000_000, output_tokens: 100_000, ..Usage::default() };
/// let table = PriceTable::builtin();
/// assert!(table.cost("anthropic", "claude-3-5-haiku-20241022", &usage).is_complete());
/// assert!(!table.cost("mock", "no-such-model", &usage).is_complete());
///
/// let mine = PriceTable::empty().with_model("house-model", ModelPrice::per_million(1.0, 2.0));
/// assert_eq!(mine.cost("anything", "house-model", &usage).total().to_string(), "$1.20");
/// ```
#[derive(Debug, Default)]
pub struct PriceTable {
    overrides: Vec<(String, ModelPrice)>,
    providers: Vec<ProviderEntry>,
    /// Lookups already made, by lowercase (provider, model).
    found: Mutex<HashMap<(String, String), Option<Found>>>,
}

impl Clone for PriceTable {
    fn clone(&self) -> Self {
        PriceTable {
            overrides: self.overrides.clone(),
            providers: self.providers.clone(),
            found: Mutex::default(),
        }
    }
}

impl PriceTable {
    /// A table with no prices: every model is unpriced.
    pub fn empty() -> PriceTable {
        PriceTable::default()
    }

    /// The built-in table, read once: pydantic's genai-prices data (MIT), as of the date its
    /// `agent-llm/prices/README.md` gives.
    pub fn builtin() -> &'static PriceTable {
        static TABLE: OnceLock<PriceTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            PriceTable::from_json(BUILTIN_NAME, BUILTIN)
                .expect("the built-in price table reads (a test reads it)")
        })
    }

    /// A table from JSON text; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<PriceTable, PriceTableError> {
        let providers: Vec<ProviderEntry> =
            serde_json::from_str(text).map_err(|e| PriceTableError::Invalid {
                file: file.to_owned(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })?;
        Ok(PriceTable {
            providers,
            ..PriceTable::default()
        })
    }

    /// A table from a JSON file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<PriceTable, PriceTableError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| PriceTableError::Read {
            file: file.clone(),
            error,
        })?;
        PriceTable::from_json(&file, &text)
    }

    /// This table in front of `rest`: its overrides and providers are looked in first.
    pub fn before(mut self, rest: &PriceTable) -> PriceTable {
        self.overrides.extend(rest.overrides.iter().cloned());
        self.providers.extend(rest.providers.iter().cloned());
        self.found = Mutex::default();
        self
    }

    /// Prices `model` (its exact name, any case, from any provider) at `price`, ahead of
    /// everything else in the table.
    pub fn with_model(mut self, model: &str, price: ModelPrice) -> PriceTable {
        self.overrides.insert(0, (model.to_lowercase(), price));
        self.found = Mutex::default();
        self
    }

    /// The price of `model` from `provider` now, if the table has one.
    pub fn price(&self, provider: &str, model: &str) -> Option<&ModelPrice> {
        self.price_at(provider, model, SystemTime::now())
    }

    /// The price of `model` from `provider` at `at`, if the table has one.
    pub fn price_at(&self, provider: &str, model: &str, at: SystemTime) -> Option<&ModelPrice> {
        match self.find(provider, model)? {
            Found::Override(i) => Some(&self.overrides[i].1),
            Found::Table(p, m) => Some(self.providers[p].models[m].prices.at(at)),
        }
    }

    /// What a call to `model` from `provider` that used `usage` costs now:
    /// [`Cost::UNPRICED`] when the table has no price for it.
    pub fn cost(&self, provider: &str, model: &str, usage: &Usage) -> Cost {
        self.cost_at(provider, model, usage, SystemTime::now())
    }

    /// [`PriceTable::cost`] at the prices of `at`.
    pub fn cost_at(&self, provider: &str, model: &str, usage: &Usage, at: SystemTime) -> Cost {
        self.price_at(provider, model, at)
            .map_or(Cost::UNPRICED, |price| price.cost(usage))
    }

    /// Where `model` is, remembered per (provider, model).
    fn find(&self, provider: &str, model: &str) -> Option<Found> {
        let key = (provider.to_lowercase(), model.to_lowercase());
        let mut found = self.found.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = found.get(&key) {
            return *hit;
        }
        let hit = self.search(&key.0, &key.1);
        // A table is asked about few models; this bounds what a caller naming endless models
        // can make it keep.
        if found.len() < 4096 {
            found.insert(key, hit);
        }
        hit
    }

    fn search(&self, provider: &str, model: &str) -> Option<Found> {
        if let Some(i) = self.overrides.iter().position(|(name, _)| name == model) {
            return Some(Found::Override(i));
        }
        let in_provider = |p: usize| {
            self.providers[p]
                .models
                .iter()
                .position(|m| m.matches(model))
                .map(|m| Found::Table(p, m))
        };
        let named: Vec<usize> = (0..self.providers.len())
            .filter(|&p| {
                let entry = &self.providers[p];
                entry.id.eq_ignore_ascii_case(provider)
                    || entry
                        .provider_match
                        .as_ref()
                        .is_some_and(|m| m.matches(provider))
            })
            .collect();
        if !named.is_empty() {
            let fallbacks = named.iter().flat_map(|&p| {
                self.providers[p]
                    .fallback_model_providers
                    .iter()
                    .filter_map(|id| {
                        self.providers
                            .iter()
                            .position(|e| e.id.eq_ignore_ascii_case(id))
                    })
            });
            return named.iter().copied().chain(fallbacks).find_map(in_provider);
        }
        // A provider the table does not know (a mock, your own): the providers whose models
        // the name looks like first, then any.
        let likely = (0..self.providers.len()).filter(|&p| {
            self.providers[p]
                .model_match
                .as_ref()
                .is_some_and(|m| m.matches(model))
        });
        likely.chain(0..self.providers.len()).find_map(in_provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(date: &str) -> SystemTime {
        SystemTime::UNIX_EPOCH
            + std::time::Duration::from_secs(day_number(date).unwrap() as u64 * 86_400)
    }

    #[test]
    fn days_are_counted_from_1970() {
        assert_eq!(day_number("1970-01-01"), Some(0));
        assert_eq!(day_number("2000-03-01"), Some(11_017));
        assert_eq!(day_number("2024-02-29"), Some(19_782));
        assert_eq!(day_number("2024-13-01"), None);
        assert_eq!(second_of_day("16:30:00Z"), Some(59_400));
        assert_eq!(second_of_day("25:00:00"), None);
    }

    #[test]
    fn the_last_price_that_applies_wins() {
        let table = PriceTable::from_json(
            "t.json",
            r#"[{"id": "p", "models": [{"id": "m", "prices": [
                {"prices": {"input_mtok": 10}},
                {"constraint": {"start_date": "2025-06-10"}, "prices": {"input_mtok": 2}}
            ]}]}]"#,
        )
        .unwrap();
        let usage = Usage {
            input_tokens: 1_000_000,
            ..Usage::default()
        };
        assert_eq!(
            table
                .cost_at("p", "m", &usage, day("2025-06-09"))
                .total()
                .to_string(),
            "$10.00"
        );
        assert_eq!(
            table
                .cost_at("p", "m", &usage, day("2025-06-10"))
                .total()
                .to_string(),
            "$2.00"
        );
    }

    #[test]
    fn the_builtin_table_reads_and_knows_the_usual_models() {
        let table = PriceTable::builtin();
        let usage = Usage {
            input_tokens: 1_000_000,
            ..Usage::default()
        };
        for (provider, model) in [
            ("anthropic", "claude-sonnet-4-5"),
            ("openai", "gpt-4.1"),
            ("openai-responses", "o3-mini"),
            ("gemini", "gemini-2.5-pro"),
        ] {
            assert!(table.price(provider, model).is_some(), "{provider} {model}");
            assert!(table.cost(provider, model, &usage).total() > super::super::Usd::ZERO);
        }
        assert!(
            table.price("openai", "llama3.2:3b").is_none(),
            "a local model is unpriced"
        );
    }

    #[test]
    fn a_broken_table_says_where() {
        let text = "[\n  {\"id\": \"p\", \"models\": [\n    {\"id\": \"m\", \"prices\": {\"input_mtok\": -1}}\n  ]}\n]";
        let error = PriceTable::from_json("mine.json", text)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("mine.json:3:"), "{error}");
        assert!(error.contains("at least 0"), "{error}");
    }
}
