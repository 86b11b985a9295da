//! A JSON Schema, compiled once: what a `json_schema` check checks an answer against, and what a
//! typed case's `output_schema` makes its run end with.

use std::fmt;
use std::sync::Arc;

use agent_runtime::OutputType;
use jsonschema::Validator;
use serde_json::Value;

use crate::schema_error::SchemaError;

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
    /// use agent_eval::{Schema, SchemaError};
    /// use serde_json::json;
    ///
    /// let schema = Schema::new(json!({"type": "object", "required": ["city"]})).unwrap();
    /// assert!(schema.check(&json!({"city": "Paris"})).is_ok());
    /// assert!(schema.check(&json!({})).unwrap_err().to_string().contains("city"));
    /// assert!(matches!(
    ///     Schema::new(json!({"type": "no such type"})),
    ///     Err(SchemaError::Invalid { .. })
    /// ));
    /// ```
    pub fn new(schema: Value) -> Result<Schema, SchemaError> {
        let validator = jsonschema::validator_for(&schema).map_err(|error| {
            let at = error.instance_path().to_string();
            SchemaError::Invalid {
                reason: error.to_string(),
                at: (!at.is_empty()).then_some(at),
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

    /// Whether `value` follows the schema; [`SchemaError::Mismatch`] names each error's place and
    /// what is wrong (the first five, and how many more).
    pub fn check(&self, value: &Value) -> Result<(), SchemaError> {
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
        Err(SchemaError::Mismatch {
            errors: words,
            more,
        })
    }

    /// A typed run's output that must follow this schema. The model is shown the schema without
    /// `$schema` (which tool and structured-output schemas do not take); the check uses it whole.
    pub fn output_type(&self) -> OutputType {
        let mut shown = self.schema.clone();
        if let Value::Object(map) = &mut shown {
            map.remove("$schema");
        }
        let schema = self.clone();
        OutputType::from_schema(shown, move |value| {
            schema.check(value).map_err(|error| error.to_string())
        })
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Schema").field(&self.schema).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_that_does_not_compile_is_invalid_with_the_validators_words() {
        match Schema::new(json!({"type": "no such type"})) {
            Err(SchemaError::Invalid { reason, .. }) => {
                assert!(reason.contains("no such type"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_mismatch_names_the_first_five_errors_and_counts_the_rest() {
        let schema = Schema::new(json!({"type": "array", "items": {"type": "string"}})).unwrap();
        assert_eq!(schema.check(&json!(["a", "b"])), Ok(()));
        let error = schema.check(&json!([1, 2, 3, 4, 5, 6, 7])).unwrap_err();
        let SchemaError::Mismatch { errors, more } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(errors.len(), 5);
        assert_eq!(*more, 2);
        assert!(errors[0].starts_with("`/0`: "), "{errors:?}");
        assert!(error.to_string().ends_with("; and 2 more"), "{error}");
        let root = schema.check(&json!("a")).unwrap_err();
        assert!(root.to_string().starts_with("(root): "), "{root}");
    }
}
