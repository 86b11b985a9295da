//! One model's prices ([`ModelPrice`]): per token kind, flat or tiered by the request's input
//! size, and the [`Cost`] of a call's [`Usage`] at those prices.

use serde::{Deserialize, Deserializer};

use super::money::{Cost, Usd};
use crate::message::Usage;

/// A price per million tokens, checked when it is read: a number of dollars, at least 0.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PerMillion(f64);

impl<'de> Deserialize<'de> for PerMillion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(deserializer)?;
        if !value.is_finite() || value < 0.0 {
            return Err(serde::de::Error::custom(format!(
                "a price must be a number of dollars of at least 0, not {value}"
            )));
        }
        Ok(PerMillion(value))
    }
}

impl PerMillion {
    /// The price of one token: dollars per million tokens are picodollars per token.
    fn per_token(self) -> Usd {
        Usd::from_picodollars((self.0 * 1e6).round() as u64)
    }
}

/// A price that rises with the request's input tokens: past a tier's start, the tier's price
/// applies to every token of the call (the "cliff" providers bill by).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rate {
    /// The price of one token below the first tier.
    pub base: Usd,
    /// `(start, price per token)`, by ascending start: the price of each token of a call whose
    /// input tokens are more than `start`.
    pub tiers: Vec<(u64, Usd)>,
}

impl Rate {
    /// One price whatever the request's size, `per_million` dollars per million tokens.
    pub fn flat(per_million: f64) -> Rate {
        Rate {
            base: PerMillion(per_million.max(0.0)).per_token(),
            tiers: Vec::new(),
        }
    }

    /// The price of one token in a call with `input` input tokens (cache reads and writes
    /// included).
    pub fn at(&self, input: u64) -> Usd {
        self.tiers
            .iter()
            .rev()
            .find(|(start, _)| input > *start)
            .map_or(self.base, |(_, price)| *price)
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Tier {
            start: u64,
            price: PerMillion,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Tiered {
            base: PerMillion,
            tiers: Vec<Tier>,
        }
        struct RateVisitor;
        impl<'de> serde::de::Visitor<'de> for RateVisitor {
            type Value = Rate;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a number of dollars per million tokens, or {\"base\": …, \"tiers\": [{\"start\": …, \"price\": …}]}",
                )
            }
            fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Rate, E> {
                let price =
                    PerMillion::deserialize(serde::de::value::F64Deserializer::<E>::new(value))?;
                Ok(Rate {
                    base: price.per_token(),
                    tiers: Vec::new(),
                })
            }
            fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Rate, E> {
                self.visit_f64(value as f64)
            }
            fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Rate, E> {
                self.visit_f64(value as f64)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Rate, A::Error> {
                let tiered =
                    Tiered::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                let mut tiers: Vec<(u64, Usd)> = tiered
                    .tiers
                    .into_iter()
                    .map(|t| (t.start, t.price.per_token()))
                    .collect();
                tiers.sort_by_key(|(start, _)| *start);
                Ok(Rate {
                    base: tiered.base.per_token(),
                    tiers,
                })
            }
        }
        deserializer.deserialize_any(RateVisitor)
    }
}

/// What one model costs, by kind of token (each a [`Rate`]; a kind without one costs nothing),
/// in the shape of the genai-prices data (`input_mtok`, `output_mtok`, `cache_read_mtok`,
/// `cache_write_mtok`, `requests_kcount`, `input_audio_mtok`, `output_audio_mtok`) plus
/// `reasoning_mtok` for tables that bill reasoning apart from the output. Audio tokens (where the
/// provider reports them: [`Usage::audio_input_tokens`]) are billed at the audio rates where the
/// model has them, and taken out of the normal input and output; images are input tokens.
///
/// ```
/// use agent_llm::{ModelPrice, Usage};
/// let price = ModelPrice::per_million(3.0, 15.0).cache_read(0.3);
/// let usage = Usage { input_tokens: 1_000, output_tokens: 200, cache_read_tokens: 10_000, ..Usage::default() };
/// assert_eq!(price.cost(&usage).total().to_string(), "$0.009");
/// ```
// The one private field reads a price eugene has no tokens for (cached audio) and drops it; it
// is not there to keep the struct from being built with a literal.
#[allow(clippy::manual_non_exhaustive)]
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Input tokens at the normal rate.
    #[serde(default, rename = "input_mtok")]
    pub input: Option<Rate>,
    /// Output tokens.
    #[serde(default, rename = "output_mtok")]
    pub output: Option<Rate>,
    /// Input tokens read from the prompt cache.
    #[serde(default, rename = "cache_read_mtok")]
    pub cache_read: Option<Rate>,
    /// Input tokens written to the prompt cache.
    #[serde(default, rename = "cache_write_mtok")]
    pub cache_write: Option<Rate>,
    /// Reasoning tokens, billed apart from the output (they are then taken out of it).
    #[serde(default, rename = "reasoning_mtok")]
    pub reasoning: Option<Rate>,
    /// Dollars per thousand requests.
    #[serde(default, rename = "requests_kcount", deserialize_with = "per_thousand")]
    pub per_request: Option<Usd>,
    /// Audio input tokens.
    #[serde(default, rename = "input_audio_mtok")]
    pub input_audio: Option<Rate>,
    /// Audio output tokens.
    #[serde(default, rename = "output_audio_mtok")]
    pub output_audio: Option<Rate>,
    #[serde(
        default,
        rename = "cache_audio_read_mtok",
        deserialize_with = "ignored"
    )]
    _cache_audio_read: (),
}

/// A price eugene has no tokens for, read and dropped.
fn ignored<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| ())
}

fn per_thousand<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Usd>, D::Error> {
    let per_thousand = PerMillion::deserialize(deserializer)?;
    Ok(Some(Usd::dollars(per_thousand.0) / 1000))
}

impl ModelPrice {
    /// `input` and `output` dollars per million tokens, flat.
    pub fn per_million(input: f64, output: f64) -> ModelPrice {
        ModelPrice {
            input: Some(Rate::flat(input)),
            output: Some(Rate::flat(output)),
            ..ModelPrice::default()
        }
    }

    /// With cache reads at `per_million` dollars per million tokens.
    pub fn cache_read(mut self, per_million: f64) -> ModelPrice {
        self.cache_read = Some(Rate::flat(per_million));
        self
    }

    /// With cache writes at `per_million` dollars per million tokens.
    pub fn cache_write(mut self, per_million: f64) -> ModelPrice {
        self.cache_write = Some(Rate::flat(per_million));
        self
    }

    /// With reasoning tokens billed apart, at `per_million` dollars per million tokens.
    pub fn reasoning(mut self, per_million: f64) -> ModelPrice {
        self.reasoning = Some(Rate::flat(per_million));
        self
    }

    /// What a call that used `usage` costs at these prices.
    pub fn cost(&self, usage: &Usage) -> Cost {
        let size = usage.prompt_tokens();
        let at = |rate: &Option<Rate>, tokens: u64| {
            rate.as_ref()
                .map_or(Usd::ZERO, |rate| rate.at(size) * tokens)
        };
        let (output_tokens, reasoning) = match &self.reasoning {
            Some(_) => {
                let reasoning = usage.reasoning_tokens.min(usage.output_tokens);
                (
                    usage.output_tokens - reasoning,
                    at(&self.reasoning, reasoning),
                )
            }
            None => (usage.output_tokens, Usd::ZERO),
        };
        // Audio at its own rates, where the model has them, out of the normal input and output.
        let (input_tokens, audio_in) = match &self.input_audio {
            Some(_) => {
                let audio = usage.audio_input_tokens.min(usage.input_tokens);
                (usage.input_tokens - audio, at(&self.input_audio, audio))
            }
            None => (usage.input_tokens, Usd::ZERO),
        };
        let (output_tokens, audio_out) = match &self.output_audio {
            Some(_) => {
                let audio = usage.audio_output_tokens.min(output_tokens);
                (output_tokens - audio, at(&self.output_audio, audio))
            }
            None => (output_tokens, Usd::ZERO),
        };
        Cost {
            input: at(&self.input, input_tokens),
            output: at(&self.output, output_tokens),
            audio: audio_in + audio_out,
            cache_read: at(&self.cache_read, usage.cache_read_tokens),
            cache_write: at(&self.cache_write, usage.cache_write_tokens),
            reasoning,
            requests: self.per_request.unwrap_or(Usd::ZERO),
            unpriced_calls: 0,
        }
    }

    /// The least a request with `input` tokens of input can cost (each token at the cheapest
    /// input rate this model has, cache reads included, and no output): what a budget can know
    /// before the call.
    pub fn least_for_input(&self, input: u64) -> Usd {
        let rates = [&self.input, &self.cache_read];
        let cheapest = rates
            .iter()
            .filter_map(|rate| rate.as_ref().map(|rate| rate.at(0)))
            .min()
            .unwrap_or(Usd::ZERO);
        cheapest * input + self.per_request.unwrap_or(Usd::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> ModelPrice {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn past_a_tier_every_token_pays_its_price() {
        let price = read(
            r#"{"input_mtok": {"base": 3, "tiers": [{"start": 200000, "price": 6}]}, "output_mtok": 15}"#,
        );
        let usage = |input| Usage {
            input_tokens: input,
            output_tokens: 0,
            ..Usage::default()
        };
        assert_eq!(
            price.cost(&usage(200_000)).input,
            Usd::dollars(0.6),
            "at the start: base"
        );
        assert_eq!(
            price.cost(&usage(200_001)).input,
            Usd::dollars(6.0) / 1_000_000 * 200_001
        );
        // Cache reads count towards the size that picks the tier.
        let cached = Usage {
            input_tokens: 1,
            cache_read_tokens: 200_000,
            ..Usage::default()
        };
        assert_eq!(price.cost(&cached).input, Usd::dollars(6.0) / 1_000_000);
    }

    #[test]
    fn reasoning_billed_apart_leaves_the_output() {
        let price = ModelPrice::per_million(1.0, 10.0).reasoning(20.0);
        let cost = price.cost(&Usage {
            output_tokens: 1_000,
            reasoning_tokens: 400,
            ..Usage::default()
        });
        assert_eq!(cost.output, Usd::dollars(0.006));
        assert_eq!(cost.reasoning, Usd::dollars(0.008));
    }

    #[test]
    fn audio_tokens_are_billed_at_the_audio_rates_where_the_model_has_them() {
        let price: ModelPrice = serde_json::from_str(
            r#"{"input_mtok": 2.5, "output_mtok": 10, "input_audio_mtok": 40, "output_audio_mtok": 80}"#,
        )
        .unwrap();
        let usage = Usage {
            input_tokens: 1_000,
            audio_input_tokens: 400,
            output_tokens: 100,
            audio_output_tokens: 50,
            ..Usage::default()
        };
        let cost = price.cost(&usage);
        // 600 × $2.5/M and 50 × $10/M; audio: 400 × $40/M + 50 × $80/M.
        assert_eq!(cost.input, Usd::dollars(0.0015));
        assert_eq!(cost.output, Usd::dollars(0.0005));
        assert_eq!(cost.audio, Usd::dollars(0.02));
        assert_eq!(cost.total(), Usd::dollars(0.022));
        // Without audio rates, audio is input like any other.
        let plain = ModelPrice::per_million(2.5, 10.0).cost(&usage);
        assert_eq!(
            (plain.input, plain.audio),
            (Usd::dollars(0.0025), Usd::ZERO)
        );
    }

    #[test]
    fn prices_that_cannot_be_are_refused() {
        for bad in [
            r#"{"input_mtok": -1}"#,
            r#"{"input_mtok": "3"}"#,
            r#"{"input_mtoks": 3}"#,
            r#"{"input_mtok": {"base": 1, "tiers": [{"start": -5, "price": 2}]}}"#,
        ] {
            assert!(serde_json::from_str::<ModelPrice>(bad).is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<ModelPrice>(r#"{"input_audio_mtok": 3}"#).is_ok());
    }

    #[test]
    fn the_least_before_a_call_is_at_the_cheapest_input_rate() {
        let price = ModelPrice::per_million(3.0, 15.0).cache_read(0.3);
        assert_eq!(price.least_for_input(1_000_000), Usd::dollars(0.3));
    }
}
