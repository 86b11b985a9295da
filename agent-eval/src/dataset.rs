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
//!   - name: receipt
//!     goal: What is the total on this receipt? Answer with the number alone.
//!     attach: [receipt.png]  # files sent with the goal, relative to this file
//!     checks:
//!       - equals: 42.5
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
//! `attach:` lists files (images, PDFs, sounds; at most [`MAX_ATTACHMENTS`] a case) sent with the
//! case's goal, as `AgentRuntime::run(goal).attach(..)` sends them. They are read when the dataset
//! is, relative to the dataset file's directory, through the same bounded loader as `read_file`'s
//! media and `eugene --attach` ([`agent_core::content::file`]): at most
//! [`DEFAULT_MAX_MEDIA_BYTES`](agent_core::content::file::DEFAULT_MAX_MEDIA_BYTES) a file, checked
//! from its size before it is read, [`MAX_ATTACHED_BYTES`] for all of a dataset's files, the type
//! read from the bytes (never the name), a corrupt image or a decompression bomb refused. A file
//! that cannot be read or sent is a [`DatasetError::Attachment`] naming the case and the file.
//!
//! Every key is checked: a misspelt one, a missing `goal`, a check that is not one of `equals`,
//! `contains`, `json_schema` and `rubric`, a schema that does not compile, a `repeat` of 0, two
//! cases of one name or an empty `cases` list is a [`DatasetError`] naming the file, the line and
//! the column. Custom checks ([`Check::custom`](crate::Check::custom)) exist only in Rust: add them to a loaded case
//! with [`Dataset::case_mut`].
//!
//! Bounds: a file of at most [`MAX_FILE_BYTES`], at most [`MAX_CASES`] cases, each repeated at
//! most [`MAX_REPEAT`] times. YAML aliases are expanded within the parser's own repetition limit,
//! so a small file cannot grow into a huge dataset.

use std::io::Read;
use std::path::Path;

use crate::attach::load_attachments;
pub use crate::attach::{MAX_ATTACHED_BYTES, MAX_ATTACHMENTS};
pub use crate::case::{Case, MAX_NAME_CHARS, MAX_REPEAT};
pub use crate::dataset_error::DatasetError;
pub use crate::yaml::MAX_CASES;
use crate::yaml::RawDataset;

/// The largest dataset file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

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
        self.cases.iter_mut().find(|case| case.name() == name)
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

    /// Reads a dataset from YAML text; `file` is the name errors give, and its directory the one
    /// `attach:` paths are relative to (the current one for a bare name). Without a `name` key
    /// the dataset's name is `file`'s (`load` uses the file's name without its extension).
    pub fn from_yaml(file: &str, text: &str) -> Result<Dataset, DatasetError> {
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(DatasetError::TooLarge {
                file: file.to_owned(),
                max: MAX_FILE_BYTES,
            });
        }
        // What would cost the parser far more than the text (deep nesting, a wide fan of
        // aliases) is refused before it builds anything.
        agent_llm::yaml_bounds::check(text).map_err(|error| DatasetError::Invalid {
            file: file.to_owned(),
            line: error.line,
            column: 1,
            message: error.message,
        })?;
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
        let mut cases = raw.cases.0;
        load_attachments(file, &mut cases)?;
        Ok(Dataset {
            name: raw.name.unwrap_or_default(),
            repeat: raw.repeat.map(|r| r.0),
            cases,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Check;

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

    #[test]
    fn a_wide_fan_of_aliases_and_deep_nesting_are_refused_before_parsing() {
        // The shape of a 70 KB `output_schema` that was killed at 6 GiB: one anchor of 1,000
        // items, named 20,000 times.
        let items = vec!["x"; 1_000].join(", ");
        let mut yaml = format!(
            "cases:\n  - name: a\n    goal: x\n    output_schema:\n      big: &big [{items}]\n      refs:\n"
        );
        for _ in 0..20_000 {
            yaml.push_str("        - *big\n");
        }
        let error = Dataset::from_yaml("fan.yaml", &yaml)
            .unwrap_err()
            .to_string();
        assert!(error.contains("aliases"), "{error}");
        // 100,000 deep (195 KiB): refused in one pass, not after the parser's quadratic walk.
        let deep = format!(
            "cases:\n  - name: a\n    goal: x\n    output_schema: {}x\n",
            "- ".repeat(100_000)
        );
        let deep = deep.replace("output_schema: ", "output_schema:\n      ");
        let error = Dataset::from_yaml("deep.yaml", &deep)
            .unwrap_err()
            .to_string();
        assert!(error.contains("levels deep"), "{error}");
    }

    #[test]
    fn more_cases_than_the_bound_are_refused() {
        let mut yaml = String::from("cases:\n");
        for i in 0..=MAX_CASES {
            yaml.push_str(&format!("  - {{name: c{i}, goal: g}}\n"));
        }
        let (line, _, message) = invalid(&yaml);
        assert!(message.contains("at most 10000 cases"), "{message}");
        assert_eq!(line, MAX_CASES + 2, "{message}");
    }
}
