//! What an attempt's answer must satisfy: [`Check`]s, and the [`Answer`] they look at.
//!
//! | check | passes when |
//! |---|---|
//! | [`Check::equals`] | a typed answer's value equals the check's (JSON equality); an untyped answer's text, trimmed, equals the check's string, or, for a value that is not a string, parses as JSON equal to it |
//! | [`Check::contains`] | the answer's [text](Answer::text_for_checks) holds the check's string (case-sensitive) |
//! | [`Check::json_schema`] | the answer's value (a typed answer's, or an untyped answer's text parsed as JSON) follows the schema |
//! | [`Check::rubric`] | the [judge](crate::Judge) model, given the goal, the answer and the rubric, answers `{"pass": true, ...}` |
//! | [`Check::custom`] | the closure returns `Ok(())` |

use std::fmt;
use std::sync::Arc;

use agent_llm::{Message, Usage};
use agent_runtime::FinishReason;
use serde_json::Value;

use crate::not_json::NotJson;
use crate::schema::Schema;
use crate::schema_error::SchemaError;

/// The longest a check's shown name quotes of its argument, in characters.
const NAME_QUOTE: usize = 60;

/// A finished run's answer, as checks see it.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The model's last text, if it wrote any.
    pub text: Option<String>,
    /// A typed case's value (its run's checked output); `None` for an untyped case.
    pub output: Option<Value>,
    /// Why the run ended (always [`FinishReason::NoMoreToolCalls`] when checks run: a run that
    /// ended otherwise fails its attempt without being checked).
    pub finish: FinishReason,
    /// Model calls the run made.
    pub steps: usize,
    /// Tokens the run used.
    pub usage: Usage,
    /// The whole conversation.
    pub transcript: Vec<Message>,
}

impl Answer {
    /// What `contains` searches and a judge reads: a typed answer's value as JSON (compact), else
    /// the model's last text (empty when it wrote none).
    pub fn text_for_checks(&self) -> String {
        match &self.output {
            Some(value) => value.to_string(),
            None => self.text.clone().unwrap_or_default(),
        }
    }

    /// The answer as a JSON value: a typed answer's value, or an untyped answer's text (trimmed,
    /// without a Markdown code fence around it) parsed as JSON.
    pub fn value(&self) -> Result<Value, NotJson> {
        if let Some(value) = &self.output {
            return Ok(value.clone());
        }
        let text = self.text.as_deref().unwrap_or_default();
        serde_json::from_str(unfenced(text)).map_err(|error| NotJson {
            reason: error.to_string(),
            text: clip(text.trim(), NAME_QUOTE),
        })
    }
}

/// `text` trimmed, without a Markdown code fence (```` ```json ... ``` ````) around it.
fn unfenced(text: &str) -> &str {
    let text = text.trim();
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text;
    };
    // The fence's first line may name a language (`json`); JSON itself never starts that way.
    match body.split_once('\n') {
        Some((language, rest)) if !language.contains(['{', '[', '"']) => rest.trim(),
        _ => body.trim(),
    }
}

type CustomFn = dyn Fn(&Answer) -> Result<(), String> + Send + Sync;

/// One thing an answer must satisfy. See the [module docs](self) for what each passes on.
#[derive(Clone)]
pub struct Check {
    name: String,
    pub(crate) kind: Kind,
}

#[derive(Clone)]
pub(crate) enum Kind {
    Equals(Value),
    Contains(String),
    JsonSchema(Schema),
    Rubric(String),
    Custom(Arc<CustomFn>),
}

impl Check {
    /// The answer equals `expected` (see the [module docs](self)).
    pub fn equals(expected: impl Into<Value>) -> Check {
        let expected = expected.into();
        Check {
            // As JSON: a string in its quotes, `42`, `{"city":"Paris"}`.
            name: format!("equals {}", clip(&expected.to_string(), NAME_QUOTE)),
            kind: Kind::Equals(expected),
        }
    }

    /// The answer's text holds `needle`.
    pub fn contains(needle: impl Into<String>) -> Check {
        let needle = needle.into();
        Check {
            name: format!("contains {}", quote(&needle, NAME_QUOTE)),
            kind: Kind::Contains(needle),
        }
    }

    /// The answer's value follows the JSON Schema `schema`; [`SchemaError::Invalid`] when it is
    /// not a valid schema.
    pub fn json_schema(schema: Value) -> Result<Check, SchemaError> {
        Ok(Check {
            name: "json_schema".to_owned(),
            kind: Kind::JsonSchema(Schema::new(schema)?),
        })
    }

    /// A judge model finds that the answer meets `rubric` (the eval needs a
    /// [judge](crate::Eval::judge)).
    pub fn rubric(rubric: impl Into<String>) -> Check {
        let rubric = rubric.into();
        Check {
            name: format!("rubric {}", quote(&rubric, NAME_QUOTE)),
            kind: Kind::Rubric(rubric),
        }
    }

    /// A check of your own: `check` returns `Err` with what is wrong. `name` is how reports show
    /// it.
    ///
    /// ```
    /// use agent_eval::Check;
    ///
    /// let short = Check::custom("under 20 words", |answer| {
    ///     let words = answer.text_for_checks().split_whitespace().count();
    ///     if words < 20 { Ok(()) } else { Err(format!("{words} words")) }
    /// });
    /// assert_eq!(short.name(), "under 20 words");
    /// ```
    pub fn custom(
        name: impl Into<String>,
        check: impl Fn(&Answer) -> Result<(), String> + Send + Sync + 'static,
    ) -> Check {
        Check {
            name: name.into(),
            kind: Kind::Custom(Arc::new(check)),
        }
    }

    /// How reports show the check: `contains "Paris"`, `json_schema`, a custom check's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether this check asks the judge.
    pub fn is_rubric(&self) -> bool {
        matches!(self.kind, Kind::Rubric(_))
    }

    /// Runs a check that needs no judge; `None` for a rubric.
    pub(crate) fn run_local(&self, answer: &Answer) -> Option<Result<(), String>> {
        Some(match &self.kind {
            Kind::Equals(expected) => equals(expected, answer),
            Kind::Contains(needle) => {
                let text = answer.text_for_checks();
                if text.contains(needle.as_str()) {
                    Ok(())
                } else {
                    Err(format!(
                        "the answer does not contain {}: {}",
                        quote(needle, NAME_QUOTE),
                        quote(&text, 200)
                    ))
                }
            }
            Kind::JsonSchema(schema) => match answer.value() {
                Ok(value) => schema.check(&value).map_err(|error| error.to_string()),
                Err(not_json) => Err(not_json.to_string()),
            },
            Kind::Custom(check) => check(answer),
            Kind::Rubric(_) => return None,
        })
    }
}

fn equals(expected: &Value, answer: &Answer) -> Result<(), String> {
    let got = match (&answer.output, expected) {
        (Some(value), _) => value.clone(),
        (None, Value::String(_)) => {
            Value::String(answer.text.as_deref().unwrap_or_default().trim().to_owned())
        }
        (None, _) => answer.value().map_err(|not_json| not_json.to_string())?,
    };
    if &got == expected {
        Ok(())
    } else {
        Err(format!(
            "expected {}, got {}",
            clip(&expected.to_string(), 200),
            clip(&got.to_string(), 200)
        ))
    }
}

impl fmt::Debug for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Check").field(&self.name).finish()
    }
}

/// `text` in double quotes, clipped to `max` characters (with `…`); inner quotes stay as they
/// are (this is for people to read, not to parse).
pub(crate) fn quote(text: &str, max: usize) -> String {
    format!("\"{}\"", clip(text, max))
}

/// `text` clipped to `max` characters, with `…` when it was longer.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(text: &str, output: Option<Value>) -> Answer {
        Answer {
            text: Some(text.to_owned()),
            output,
            finish: FinishReason::NoMoreToolCalls,
            steps: 1,
            usage: Usage::default(),
            transcript: Vec::new(),
        }
    }

    #[test]
    fn equals_compares_text_trimmed_values_as_json_and_typed_values_exactly() {
        let text = answer("  Paris\n", None);
        assert!(Check::equals("Paris").run_local(&text).unwrap().is_ok());
        assert!(Check::equals("paris").run_local(&text).unwrap().is_err());
        let number = answer("```json\n42\n```", None);
        assert!(Check::equals(42).run_local(&number).unwrap().is_ok());
        let error = Check::equals(43).run_local(&number).unwrap().unwrap_err();
        assert_eq!(error, "expected 43, got 42");
        let typed = answer("", Some(json!({"city": "Paris", "n": 1})));
        assert!(
            Check::equals(json!({"n": 1, "city": "Paris"}))
                .run_local(&typed)
                .unwrap()
                .is_ok()
        );
        assert!(
            Check::equals(json!({"city": "Paris"}))
                .run_local(&typed)
                .unwrap()
                .is_err()
        );
        let not_json = answer("forty-two", None);
        let error = Check::equals(42).run_local(&not_json).unwrap().unwrap_err();
        assert!(error.starts_with("the answer is not JSON"), "{error}");
    }

    #[test]
    fn contains_searches_the_text_or_a_typed_value_as_json() {
        let text = answer("The capital is Paris.", None);
        assert!(Check::contains("Paris").run_local(&text).unwrap().is_ok());
        let error = Check::contains("Lyon")
            .run_local(&text)
            .unwrap()
            .unwrap_err();
        assert!(
            error.contains("\"Lyon\"") && error.contains("capital"),
            "{error}"
        );
        let typed = answer("", Some(json!({"city": "Paris"})));
        assert!(
            Check::contains("\"city\":\"Paris\"")
                .run_local(&typed)
                .unwrap()
                .is_ok()
        );
    }

    #[test]
    fn json_schema_checks_text_parsed_as_json_and_names_the_field() {
        let check = Check::json_schema(json!({"type": "object", "required": ["city"]})).unwrap();
        assert!(
            check
                .run_local(&answer("{\"city\": \"Paris\"}", None))
                .unwrap()
                .is_ok()
        );
        let error = check
            .run_local(&answer("{\"town\": 1}", None))
            .unwrap()
            .unwrap_err();
        assert!(error.contains("city"), "{error}");
        assert!(check.run_local(&answer("Paris", None)).unwrap().is_err());
        assert!(matches!(
            Check::json_schema(json!({"type": 12})),
            Err(SchemaError::Invalid { .. })
        ));
    }

    #[test]
    fn an_untyped_answer_that_is_not_json_has_no_value_and_says_why() {
        let long = format!("  {}  ", "Paris ".repeat(20));
        let error = answer(&long, None).value().unwrap_err();
        assert!(error.reason.starts_with("expected value"), "{error:?}");
        assert_eq!(error.text.chars().count(), NAME_QUOTE + 1, "{error:?}");
        assert!(error.text.starts_with("Paris Paris") && error.text.ends_with('…'));
        assert!(
            error
                .to_string()
                .starts_with("the answer is not JSON (expected value"),
            "{error}"
        );
        assert_eq!(answer("```json\n[1]\n```", None).value(), Ok(json!([1])));
    }

    #[test]
    fn names_are_clipped_on_character_boundaries() {
        let long = "é".repeat(100);
        let name = Check::contains(long).name().to_owned();
        assert_eq!(
            name.chars().count(),
            "contains \"\"…".chars().count() + NAME_QUOTE
        );
        assert!(Check::rubric("x").is_rubric());
        assert!(Check::rubric("x").run_local(&answer("", None)).is_none());
    }
}
