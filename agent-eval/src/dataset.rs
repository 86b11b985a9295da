//! The cases an eval runs: a [`Dataset`] of [`Case`]s, built in Rust or read from YAML.
//!
//! ```yaml
//! name: geography          # optional; the file's name without its extension otherwise
//! repeat: 3                # optional: attempts per case that names none (default 1)
//! cases:
//!   - name: capital
//!     goal: What is the capital of France? Answer with the city alone.
//!     checks:
//!       - equals: Paris
//!       - rubric: The answer names Paris and nothing else.
//!   - name: ticket
//!     goal: File a ticket for the failing login test.
//!     repeat: 5
//!     output_schema:       # a typed run: it ends with a value that follows this schema
//!       type: object
//!       properties: {title: {type: string}, priority: {enum: [low, high]}}
//!       required: [title, priority]
//!     checks:
//!       - contains: login
//!       - json_schema: {properties: {priority: {const: high}}}
//! ```
//!
//! Every key is checked: a misspelt one, a missing `goal`, a check that is not one of `equals`,
//! `contains`, `json_schema` and `rubric`, a schema that does not compile, a `repeat` of 0, two
//! cases of one name or an empty `cases` list is a [`DatasetError`] naming the file, the line and
//! the column. Custom checks ([`Check::custom`]) exist only in Rust: add them to a loaded case
//! with [`Dataset::case_mut`].
//!
//! Bounds: a file of at most [`MAX_FILE_BYTES`], at most [`MAX_CASES`] cases, each repeated at
//! most [`MAX_REPEAT`] times. YAML aliases are expanded within the parser's own repetition limit,
//! so a small file cannot grow into a huge dataset.

use std::fmt;
use std::io::Read;
use std::marker::PhantomData;
use std::path::Path;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::check::Check;
use crate::schema::Schema;
use agent_runtime::OutputType;

/// The largest dataset file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The most cases a dataset may have.
pub const MAX_CASES: usize = 10_000;
/// The most attempts one case may ask for.
pub const MAX_REPEAT: usize = 1_000;
/// The longest case name, in characters.
pub const MAX_NAME_CHARS: usize = 256;

/// A dataset that cannot be read or is not a valid one. Its `Display` starts with the place:
/// `cases.yaml:12:7: cases[1]: unknown field `goall`, expected one of ...`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file cannot be read.
    #[error("{file}: cannot be read: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{file}: the file is over {max} bytes, more than a dataset may have")]
    TooLarge {
        /// The file.
        file: String,
        /// The limit.
        max: u64,
    },
    /// The file is not a valid dataset.
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What is wrong, with the path to the key (`cases[1].checks[0]`) when there is one.
        message: String,
    },
}

/// One case: a goal for the agent, what its answer must satisfy, how many attempts it gets.
#[derive(Debug, Clone)]
pub struct Case {
    name: String,
    goal: String,
    output: Option<OutputType>,
    output_schema: Option<Value>,
    checks: Vec<Check>,
    repeat: Option<usize>,
}

impl Case {
    /// A case named `name` (unique in its dataset) whose run is given `goal`.
    pub fn new(name: impl Into<String>, goal: impl Into<String>) -> Case {
        Case {
            name: name.into(),
            goal: goal.into(),
            output: None,
            output_schema: None,
            checks: Vec::new(),
            repeat: None,
        }
    }

    /// Adds a check; an attempt passes when its run finished and every check passed.
    pub fn check(mut self, check: Check) -> Case {
        self.checks.push(check);
        self
    }

    /// Makes the case a typed run that must end with a value following `schema` (a JSON
    /// Schema); `Err` when it is not a valid schema.
    pub fn output_schema(mut self, schema: Value) -> Result<Case, String> {
        let compiled = Schema::new(schema.clone())?;
        self.output = Some(compiled.output_type());
        self.output_schema = Some(schema);
        Ok(self)
    }

    /// Makes the case a typed run that must end with `output` (e.g. `OutputType::of::<T>()`).
    pub fn output(mut self, output: OutputType) -> Case {
        self.output_schema = Some(output.schema().clone());
        self.output = Some(output);
        self
    }

    /// Attempts for this case, whatever the eval's default (at least 1).
    pub fn repeat(mut self, attempts: usize) -> Case {
        self.repeat = Some(attempts);
        self
    }

    /// The case's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The goal its run is given.
    pub fn goal(&self) -> &str {
        &self.goal
    }

    /// The checks, in order.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// A typed case's output; `None` for an untyped one.
    pub fn output_type(&self) -> Option<&OutputType> {
        self.output.as_ref()
    }

    /// The schema a typed case's value follows, as the model is shown it.
    pub fn schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The case's own number of attempts, if it names one.
    pub fn attempts(&self) -> Option<usize> {
        self.repeat
    }
}

/// Cases to run. See the [module docs](self) for the YAML form.
#[derive(Debug, Clone)]
pub struct Dataset {
    name: String,
    repeat: Option<usize>,
    cases: Vec<Case>,
}

impl Dataset {
    /// An empty dataset named `name` (reports and JUnit's test suite carry the name).
    pub fn new(name: impl Into<String>) -> Dataset {
        Dataset {
            name: name.into(),
            repeat: None,
            cases: Vec::new(),
        }
    }

    /// Adds a case (names are checked for being unique when the eval starts).
    pub fn case(mut self, case: Case) -> Dataset {
        self.cases.push(case);
        self
    }

    /// Attempts for each case that names none ([`Eval::repeat`](crate::Eval::repeat) overrides
    /// it).
    pub fn repeat(mut self, attempts: usize) -> Dataset {
        self.repeat = Some(attempts);
        self
    }

    /// The dataset's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its default number of attempts, if it names one.
    pub fn default_repeat(&self) -> Option<usize> {
        self.repeat
    }

    /// Its cases, in order.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// The case named `name`, to add checks of your own to a loaded one.
    ///
    /// ```
    /// use agent_eval::{Check, Dataset};
    ///
    /// let yaml = "cases:\n  - name: hello\n    goal: Say hello.\n";
    /// let mut dataset = Dataset::from_yaml("cases.yaml", yaml).unwrap();
    /// let case = dataset.case_mut("hello").unwrap();
    /// *case = case.clone().check(Check::custom("short", |a| {
    ///     if a.text_for_checks().len() < 40 { Ok(()) } else { Err("too long".into()) }
    /// }));
    /// assert_eq!(dataset.cases()[0].checks().len(), 1);
    /// ```
    pub fn case_mut(&mut self, name: &str) -> Option<&mut Case> {
        self.cases.iter_mut().find(|case| case.name == name)
    }

    /// Reads a dataset from a YAML file (at most [`MAX_FILE_BYTES`]); errors name the file as
    /// given.
    pub fn load(path: impl AsRef<Path>) -> Result<Dataset, DatasetError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let read = |source| DatasetError::Read {
            file: file.clone(),
            source,
        };
        let opened = std::fs::File::open(path).map_err(read)?;
        let mut text = String::new();
        opened
            .take(MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(read)?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(DatasetError::TooLarge {
                file,
                max: MAX_FILE_BYTES,
            });
        }
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.clone());
        let mut dataset = Dataset::from_yaml(&file, &text)?;
        if dataset.name.is_empty() {
            dataset.name = stem;
        }
        Ok(dataset)
    }

    /// Reads a dataset from YAML text; `file` is the name errors give. Without a `name` key the
    /// dataset's name is `file`'s (`load` uses the file's name without its extension).
    pub fn from_yaml(file: &str, text: &str) -> Result<Dataset, DatasetError> {
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(DatasetError::TooLarge {
                file: file.to_owned(),
                max: MAX_FILE_BYTES,
            });
        }
        let raw: RawDataset = serde_yaml_ng::from_str(text).map_err(|error| {
            let (line, column) = error
                .location()
                .map(|at| (at.line(), at.column()))
                .unwrap_or((1, 1));
            let message = error.to_string();
            // The parser's message ends with the place, which the error's own prefix gives.
            let message = match message.rfind(" at line ") {
                Some(at) => message[..at].to_owned(),
                None => message,
            };
            DatasetError::Invalid {
                file: file.to_owned(),
                line,
                column,
                message,
            }
        })?;
        Ok(Dataset {
            name: raw.name.unwrap_or_default(),
            repeat: raw.repeat.map(|r| r.0),
            cases: raw.cases.0,
        })
    }
}

// ---------------------------------------------------------------- YAML
//
// Checks that a field's type cannot express (a schema that compiles, unique names) run inside
// the visitor of the mapping they concern, so the parser places their error at that mapping's
// line, as it does its own.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDataset {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    repeat: Option<Repeat>,
    cases: Cases,
}

/// A number of attempts: 1 to [`MAX_REPEAT`].
struct Repeat(usize);

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

struct Cases(Vec<Case>);

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
        while let Some(case) = seq.next_element_seed(CaseSeed { before: &cases })? {
            if cases.len() == MAX_CASES {
                return Err(de::Error::custom(format!(
                    "a dataset may have at most {MAX_CASES} cases"
                )));
            }
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
    output_schema: Option<Value>,
    #[serde(default)]
    checks: Vec<YamlCheck>,
    #[serde(default)]
    repeat: Option<Repeat>,
}

/// A case, read knowing the cases before it (for unique names).
struct CaseSeed<'a> {
    before: &'a [Case],
}

impl<'de> DeserializeSeed<'de> for CaseSeed<'_> {
    type Value = Case;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Case, D::Error> {
        let before = self.before;
        deserializer.deserialize_map(Checked::new("a case", move |raw: RawCase| {
            let name = raw.name.trim();
            if name.is_empty() {
                return Err("a case's name must not be empty".to_owned());
            }
            if name.chars().count() > MAX_NAME_CHARS {
                return Err(format!(
                    "a case's name may have at most {MAX_NAME_CHARS} characters"
                ));
            }
            if before.iter().any(|case| case.name == name) {
                return Err(format!(
                    "two cases are named `{name}`: names must be unique"
                ));
            }
            if raw.goal.trim().is_empty() {
                return Err(format!("case `{name}`: the goal must not be empty"));
            }
            let mut case = Case::new(name, raw.goal);
            if let Some(schema) = raw.output_schema {
                case = case
                    .output_schema(schema)
                    .map_err(|error| format!("case `{name}`: output_schema is {error}"))?;
            }
            case.checks = raw.checks.into_iter().map(|c| c.0).collect();
            case.repeat = raw.repeat.map(|r| r.0);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(text: &str) -> (usize, usize, String) {
        match Dataset::from_yaml("cases.yaml", text) {
            Err(DatasetError::Invalid {
                line,
                column,
                message,
                ..
            }) => (line, column, message),
            other => panic!("expected an invalid dataset, got {other:?}"),
        }
    }

    #[test]
    fn a_dataset_reads_its_cases_checks_and_repeats() {
        let yaml = "\
name: geo
repeat: 3
cases:
  - name: capital
    goal: What is the capital of France?
    checks:
      - equals: Paris
      - contains: Par
      - rubric: Names Paris.
  - name: typed
    goal: Give a city.
    repeat: 2
    output_schema: {type: object, required: [city]}
    checks:
      - json_schema: {properties: {city: {const: Paris}}}
";
        let dataset = Dataset::from_yaml("cases.yaml", yaml).unwrap();
        assert_eq!(dataset.name(), "geo");
        assert_eq!(dataset.default_repeat(), Some(3));
        let names: Vec<_> = dataset.cases().iter().map(Case::name).collect();
        assert_eq!(names, ["capital", "typed"]);
        let checks: Vec<_> = dataset.cases()[0]
            .checks()
            .iter()
            .map(Check::name)
            .collect();
        assert_eq!(
            checks,
            [
                "equals \"Paris\"",
                "contains \"Par\"",
                "rubric \"Names Paris.\""
            ]
        );
        assert_eq!(dataset.cases()[0].attempts(), None);
        assert_eq!(dataset.cases()[1].attempts(), Some(2));
        assert!(dataset.cases()[1].output_type().is_some());
    }

    #[test]
    fn each_mistake_is_placed_at_its_line() {
        let (line, _, message) = invalid("cases:\n  - name: a\n    goall: x\n");
        assert_eq!(line, 3, "{message}");
        assert!(message.contains("unknown field `goall`"), "{message}");

        let (line, _, message) = invalid("cases:\n  - name: a\n    goal: x\n  - goal: y\n");
        assert_eq!(line, 4, "{message}");
        assert!(message.contains("missing field `name`"), "{message}");

        let yaml = "cases:\n  - name: a\n    goal: x\n    checks:\n      - contains: a\n      - containz: b\n";
        let (line, _, message) = invalid(yaml);
        assert_eq!(line, 6, "{message}");
        assert!(message.contains("unknown variant `containz`"), "{message}");

        let yaml =
            "cases:\n  - name: a\n    goal: x\n    checks:\n      - json_schema: {type: 7}\n";
        let (line, _, message) = invalid(yaml);
        assert_eq!(line, 5, "{message}");
        assert!(
            message.contains("json_schema is not a valid JSON Schema"),
            "{message}"
        );

        let yaml = "cases:\n  - name: a\n    goal: x\n  - name: a\n    goal: y\n";
        let (line, _, message) = invalid(yaml);
        assert_eq!(line, 4, "{message}");
        assert!(message.contains("two cases are named `a`"), "{message}");

        let (line, _, message) = invalid("cases:\n  - name: a\n    goal: x\n    repeat: 0\n");
        assert_eq!(line, 4, "{message}");
        assert!(message.contains("repeat must be 1 to 1000"), "{message}");

        let (line, _, message) = invalid("cases: []\n");
        assert_eq!(line, 1, "{message}");
        assert!(message.contains("at least one case"), "{message}");

        let (line, _, message) = invalid("cases:\n  - name: a\n    goal: [x]\n");
        assert_eq!(line, 3, "{message}");
        assert!(message.contains("expected a string"), "{message}");

        // Not YAML at all: the parser's own error, placed where it found the fault.
        let (line, _, message) = invalid("cases:\n  - name: a\n    goal: x\n   bad: [\n");
        assert_eq!(line, 4, "{message}");
        assert!(!message.is_empty());
    }

    #[test]
    fn the_error_names_file_line_and_column() {
        let error = Dataset::from_yaml("evals/cases.yaml", "cases:\n  - name: a\n    goall: x\n")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("evals/cases.yaml:3:5: "), "{error}");
        assert!(!error.contains(" at line "), "{error}");
    }

    #[test]
    fn an_alias_bomb_is_refused_not_expanded() {
        // Ten levels of ten aliases each: 10^10 strings if it were expanded.
        let mut yaml = String::from(
            "cases:\n  - name: a\n    goal: x\n    output_schema:\n      a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n",
        );
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            yaml.push_str(&format!(
                "      a{i}: &a{i} [{}]\n",
                std::iter::repeat_n(prev.as_str(), 10)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let error = Dataset::from_yaml("bomb.yaml", &yaml)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("bomb.yaml:"), "{error}");
        assert!(error.contains("repetition limit"), "{error}");
    }
}
