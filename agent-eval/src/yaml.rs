//! The YAML form of a dataset (described in [`crate::dataset`]), read with `serde_yaml_ng`.
//!
//! Checks that a field's type cannot express (a schema that compiles, unique names, a `repeat`
//! in bounds) run inside the visitor of the node they concern, so the parser places their error
//! at that node's line and column, as it does its own.

use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::attach::MAX_ATTACHMENTS;
use crate::case::{Case, MAX_NAME_CHARS, MAX_REPEAT};
use crate::check::Check;

/// The most cases a dataset may have.
pub const MAX_CASES: usize = 10_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDataset {
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) repeat: Option<Repeat>,
    pub(crate) cases: Cases,
}

/// A number of attempts: 1 to [`MAX_REPEAT`].
pub(crate) struct Repeat(pub(crate) usize);

impl<'de> Deserialize<'de> for Repeat {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Repeat, D::Error> {
        // Checked in the visitor, so the parser places the error at the number itself.
        struct RepeatVisitor;
        impl Visitor<'_> for RepeatVisitor {
            type Value = Repeat;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a number of attempts, 1 to {MAX_REPEAT}")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Repeat, E> {
                match usize::try_from(n) {
                    Ok(n) if (1..=MAX_REPEAT).contains(&n) => Ok(Repeat(n)),
                    _ => Err(E::custom(format!(
                        "repeat must be 1 to {MAX_REPEAT}, not {n}"
                    ))),
                }
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Repeat, E> {
                match u64::try_from(n) {
                    Ok(n) => self.visit_u64(n),
                    Err(_) => Err(E::custom(format!(
                        "repeat must be 1 to {MAX_REPEAT}, not {n}"
                    ))),
                }
            }
        }
        deserializer.deserialize_u64(RepeatVisitor)
    }
}

pub(crate) struct Cases(pub(crate) Vec<Case>);

impl<'de> Deserialize<'de> for Cases {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Cases, D::Error> {
        deserializer.deserialize_seq(CasesVisitor)
    }
}

struct CasesVisitor;

impl<'de> Visitor<'de> for CasesVisitor {
    type Value = Cases;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of cases")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cases, A::Error> {
        let mut cases: Vec<Case> = Vec::new();
        let mut names = HashSet::new();
        while let Some(case) = seq.next_element_seed(CaseSeed { names: &names })? {
            names.insert(case.name().to_owned());
            cases.push(case);
        }
        if cases.is_empty() {
            return Err(de::Error::custom("a dataset needs at least one case"));
        }
        Ok(Cases(cases))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: String,
    goal: String,
    #[serde(default)]
    attach: Vec<String>,
    #[serde(default)]
    output_schema: Option<Value>,
    #[serde(default)]
    checks: Vec<YamlCheck>,
    #[serde(default)]
    repeat: Option<Repeat>,
}

/// A case, read knowing the names of the cases before it.
struct CaseSeed<'a> {
    names: &'a HashSet<String>,
}

impl<'de> DeserializeSeed<'de> for CaseSeed<'_> {
    type Value = Case;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Case, D::Error> {
        let names = self.names;
        deserializer.deserialize_map(Checked::new("a case", move |raw: RawCase| {
            if names.len() == MAX_CASES {
                return Err(format!("a dataset may have at most {MAX_CASES} cases"));
            }
            let name = raw.name.trim();
            if name.is_empty() {
                return Err("a case's name must not be empty".to_owned());
            }
            if name.chars().count() > MAX_NAME_CHARS {
                return Err(format!(
                    "a case's name may have at most {MAX_NAME_CHARS} characters"
                ));
            }
            if names.contains(name) {
                return Err(format!(
                    "two cases are named `{name}`: names must be unique"
                ));
            }
            if raw.goal.trim().is_empty() {
                return Err(format!("case `{name}`: the goal must not be empty"));
            }
            if raw.attach.len() > MAX_ATTACHMENTS {
                return Err(format!(
                    "case `{name}`: at most {MAX_ATTACHMENTS} files may be attached"
                ));
            }
            if raw.attach.iter().any(|path| path.trim().is_empty()) {
                return Err(format!("case `{name}`: an attached path must not be empty"));
            }
            let mut case = Case::new(name, raw.goal);
            case.attach_paths = raw.attach;
            if let Some(schema) = raw.output_schema {
                case = case
                    .output_schema(schema)
                    .map_err(|error| format!("case `{name}`: output_schema is {error}"))?;
            }
            for check in raw.checks {
                case = case.check(check.0);
            }
            if let Some(repeat) = raw.repeat {
                case = case.repeat(repeat.0);
            }
            Ok(case)
        }))
    }
}

/// One check as YAML writes it: a mapping with one key.
struct YamlCheck(Check);

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum RawCheck {
    Equals(Value),
    Contains(String),
    JsonSchema(Value),
    Rubric(String),
}

impl<'de> Deserialize<'de> for YamlCheck {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<YamlCheck, D::Error> {
        deserializer.deserialize_map(Checked::new(
            "a check (equals, contains, json_schema or rubric)",
            |raw: RawCheck| {
                Ok(YamlCheck(match raw {
                    RawCheck::Equals(value) => Check::equals(value),
                    RawCheck::Contains(needle) if needle.is_empty() => {
                        return Err("contains needs a text to look for".to_owned());
                    }
                    RawCheck::Contains(needle) => Check::contains(needle),
                    RawCheck::JsonSchema(schema) => Check::json_schema(schema)
                        .map_err(|error| format!("json_schema is {error}"))?,
                    RawCheck::Rubric(rubric) if rubric.trim().is_empty() => {
                        return Err("a rubric must not be empty".to_owned());
                    }
                    RawCheck::Rubric(rubric) => Check::rubric(rubric),
                }))
            },
        ))
    }
}

/// A mapping read as `R`, then turned into `T` by `then`, whose error is reported at the
/// mapping's place.
struct Checked<R, F> {
    expecting: &'static str,
    then: F,
    raw: PhantomData<fn() -> R>,
}

impl<R, F> Checked<R, F> {
    fn new(expecting: &'static str, then: F) -> Self {
        Checked {
            expecting,
            then,
            raw: PhantomData,
        }
    }
}

impl<'de, R, T, F> Visitor<'de> for Checked<R, F>
where
    R: Deserialize<'de>,
    F: FnOnce(R) -> Result<T, String>,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        let raw = R::deserialize(de::value::MapAccessDeserializer::new(map))?;
        (self.then)(raw).map_err(de::Error::custom)
    }
}
