//! `--json-schema FILE`: the schema a run's result must follow, read and checked once, and the
//! check each answer goes through (its errors are what the model reads when it must try again).

use std::path::Path;
use std::sync::Arc;

use eugene::run::OutputType;
use jsonschema::Validator;
use serde_json::Value;

/// How many of an answer's errors the model is told (the rest are counted).
const ERRORS_SHOWN: usize = 5;

/// A JSON Schema from a file, compiled.
#[derive(Clone)]
pub struct Schema {
    schema: Value,
    validator: Arc<Validator>,
}

impl Schema {
    /// Reads and compiles the schema in `path`, or says what is wrong with the file (naming it).
    pub fn load(path: &Path) -> Result<Schema, String> {
        let shown = path.display();
        let text = std::fs::read_to_string(path).map_err(|error| {
            format!(
                "the schema file {shown} cannot be read ({error}): give --json-schema a JSON \
                 Schema file"
            )
        })?;
        let schema: Value = serde_json::from_str(&text)
            .map_err(|error| format!("the schema file {shown} is not JSON: {error}"))?;
        let validator = jsonschema::validator_for(&schema).map_err(|error| {
            let at = error.instance_path();
            let at = if at.is_empty() {
                String::new()
            } else {
                format!(" (at {at})")
            };
            format!("the schema file {shown} is not a valid JSON Schema: {error}{at}")
        })?;
        Ok(Schema {
            schema,
            validator: Arc::new(validator),
        })
    }

    /// What the run must end with: the schema as the model is shown it, and this schema's check.
    pub fn output_type(&self) -> OutputType {
        // The model is shown the schema without `$schema`, which tool and structured-output
        // schemas do not take; the check uses the file's schema as it is.
        let mut shown = self.schema.clone();
        if let Value::Object(map) = &mut shown {
            map.remove("$schema");
        }
        let schema = self.clone();
        OutputType::from_schema(shown, move |value| schema.check(value))
    }

    /// Whether `value` follows the schema; `Err` says what is wrong, for the model: each error's
    /// place and message. (The `null`s the strict form of a schema makes the model write for
    /// the properties it leaves out, in native mode, are dropped by agent-core before this.)
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let errors: Vec<_> = self.validator.iter_errors(value).collect();
        if errors.is_empty() {
            return Ok(());
        }
        let mut words: Vec<String> = errors
            .iter()
            .take(ERRORS_SHOWN)
            .map(|error| {
                let at = error.instance_path();
                if at.is_empty() {
                    format!("(root): {error}")
                } else {
                    format!("`{at}`: {error}")
                }
            })
            .collect();
        if errors.len() > ERRORS_SHOWN {
            words.push(format!("and {} more", errors.len() - ERRORS_SHOWN));
        }
        Err(words.join("; "))
    }
}
