//! A JSON Schema, compiled once: what a `json_schema` check checks an answer against, and what a
//! typed case's `output_schema` makes its run end with.

use std::fmt;
use std::sync::Arc;

use agent_runtime::OutputType;
use jsonschema::Validator;
use serde_json::Value;

/// How many of a value's errors a message names (the rest are counted).
const ERRORS_SHOWN: usize = 5;

/// A compiled JSON Schema. `$ref`s resolve only inside the schema: nothing is fetched over the
/// network or read from files.
#[derive(Clone)]
pub struct Schema {
    schema: Value,
    validator: Arc<Validator>,
}

impl Schema {
    /// Compiles `schema`, or says what is wrong with it.
    ///
    /// ```
    /// use agent_eval::Schema;
    /// use serde_json::json;
    ///
    /// let schema = Schema::new(json!({"type": "object", "required": ["city"]})).unwrap();
    /// assert!(schema.check(&json!({"city": "Paris"})).is_ok());
    /// assert!(schema.check(&json!({})).unwrap_err().contains("city"));
    /// assert!(Schema::new(json!({"type": "no such type"})).is_err());
    /// ```
    pub fn new(schema: Value) -> Result<Schema, String> {
        let validator = jsonschema::validator_for(&schema).map_err(|error| {
            let at = error.instance_path().to_string();
            if at.is_empty() {
                format!("not a valid JSON Schema: {error}")
            } else {
                format!("not a valid JSON Schema: {error} (at {at})")
            }
        })?;
        Ok(Schema {
            schema,
            validator: Arc::new(validator),
        })
    }

    /// The schema as written.
    pub fn value(&self) -> &Value {
        &self.schema
    }

    /// Whether `value` follows the schema; `Err` names each error's place and what is wrong (the
    /// first five, and how many more).
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let mut words = Vec::new();
        let mut more = 0usize;
        for error in self.validator.iter_errors(value) {
            if words.len() == ERRORS_SHOWN {
                more += 1;
                continue;
            }
            let at = error.instance_path().to_string();
            words.push(if at.is_empty() {
                format!("(root): {error}")
            } else {
                format!("`{at}`: {error}")
            });
        }
        if words.is_empty() {
            return Ok(());
        }
        if more > 0 {
            words.push(format!("and {more} more"));
        }
        Err(words.join("; "))
    }

    /// A typed run's output that must follow this schema. The model is shown the schema without
    /// `$schema` (which tool and structured-output schemas do not take); the check uses it whole.
    pub fn output_type(&self) -> OutputType {
        let mut shown = self.schema.clone();
        if let Value::Object(map) = &mut shown {
            map.remove("$schema");
        }
        let schema = self.clone();
        OutputType::from_schema(shown, move |value| schema.check(value))
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Schema").field(&self.schema).finish()
    }
}
