//! Reading a model's arguments: [`parse_args`], which every skill's input goes through, and
//! [`kind_of`], the words its errors use for a JSON value of the wrong kind.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::SkillError;

/// Deserializes a model's arguments into `T`, with errors that name the offending field.
///
/// Empty arguments (`null`, `""`) are read as `{}`, so a skill without parameters accepts them;
/// arguments sent as a string holding a JSON object (some servers double-encode) are decoded first.
///
/// This is what [`Skill`](super::Skill)s get through the registry. It is public for
/// [`DynSkill`](super::DynSkill)s written by hand (agent-mcp's tools of an MCP server are one),
/// so that their [`DynSkill::parse`](super::DynSkill::parse) reads arguments, and words its
/// errors, as every other skill does.
///
/// ```
/// use agent_core::skill::parse_args;
/// use serde_json::{json, Map, Value};
///
/// let args: Map<String, Value> = parse_args(&json!("{\"path\": \"a.txt\"}")).unwrap();
/// assert_eq!(args["path"], "a.txt");
/// let empty: Map<String, Value> = parse_args(&Value::Null).unwrap();
/// assert!(empty.is_empty());
/// let error = parse_args::<Map<String, Value>>(&json!([1, 2])).unwrap_err();
/// assert!(error.to_string().contains("expected a JSON object of arguments, got an array"));
/// ```
pub fn parse_args<T: DeserializeOwned>(args: &Value) -> Result<T, SkillError> {
    let owned;
    let args = match args {
        Value::Object(_) => args,
        Value::Null => {
            owned = Value::Object(serde_json::Map::new());
            &owned
        }
        Value::String(s) => {
            owned = if s.trim().is_empty() {
                Value::Object(serde_json::Map::new())
            } else {
                match serde_json::from_str::<Value>(s) {
                    Ok(v @ Value::Object(_)) => v,
                    // Arguments the model meant as an object but wrote as broken JSON (a raw
                    // newline in a string, a missing brace): say what the parser found, and where.
                    Err(error) if s.trim_start().starts_with('{') => {
                        return Err(SkillError::bad_args(
                            "(root)",
                            format!(
                                "the arguments are not valid JSON: {error}; send one JSON object, \
                                 with newlines inside strings written as \\n"
                            ),
                        ));
                    }
                    Ok(other) => {
                        return Err(SkillError::bad_args(
                            "(root)",
                            format!(
                                "expected a JSON object of arguments, got {} inside a string",
                                kind_of(&other)
                            ),
                        ));
                    }
                    Err(_) => {
                        return Err(SkillError::bad_args(
                            "(root)",
                            "expected a JSON object of arguments, got a string",
                        ));
                    }
                }
            };
            &owned
        }
        other => {
            return Err(SkillError::bad_args(
                "(root)",
                format!(
                    "expected a JSON object of arguments, got {}",
                    kind_of(other)
                ),
            ));
        }
    };
    // The plain deserializer is faster; on failure, run again with path tracking for the message.
    if let Ok(input) = T::deserialize(args) {
        return Ok(input);
    }
    serde_path_to_error::deserialize(args).map_err(|err| {
        let path = err.path().to_string();
        let message = err.inner().to_string();
        bad_args_from_serde(&path, &message)
    })
}

/// What kind of JSON value `value` is, in words for an error message (`a string`, `an array`).
///
/// The words [`parse_args`]'s errors use; public so that code that answers a model or a client
/// about a JSON value of the wrong kind (agent-mcp's JSON-RPC errors, a hand-written
/// [`DynSkill`](super::DynSkill)) says it the same way.
///
/// ```
/// assert_eq!(agent_core::skill::kind_of(&serde_json::json!([1])), "an array");
/// ```
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Moves the field name out of serde's "missing field `x`" / "unknown field `x`, expected ..."
/// messages into the path, so the model reads `x: missing field`.
fn bad_args_from_serde(path: &str, message: &str) -> SkillError {
    let parent = if path == "." { "" } else { path };
    let join = |field: &str| {
        if parent.is_empty() {
            field.to_owned()
        } else {
            format!("{parent}.{field}")
        }
    };
    for (prefix, label) in [
        ("missing field `", "missing field"),
        ("unknown field `", "unknown field"),
    ] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some(end) = rest.find('`')
        {
            let field = &rest[..end];
            let tail = rest[end + 1..].trim_start_matches(',').trim();
            let message = if tail.is_empty() {
                label.to_owned()
            } else {
                format!("{label}; {tail}")
            };
            // serde_path_to_error already ends the path with an unknown field's name.
            let at_field = parent == field || parent.ends_with(&format!(".{field}"));
            let path = if at_field {
                parent.to_owned()
            } else {
                join(field)
            };
            return SkillError::bad_args(path, message);
        }
    }
    let path = if parent.is_empty() {
        "(root)".to_owned()
    } else {
        parent.to_owned()
    };
    SkillError::bad_args(path, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Opts {
        depth: u32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Input {
        path: String,
        opts: Option<Opts>,
        tags: Option<Vec<u8>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct NoParams {}

    fn err(args: Value) -> (String, String) {
        match parse_args::<Input>(&args).unwrap_err() {
            SkillError::BadArgs { path, message } => (path, message),
            other => panic!("expected BadArgs, got {other:?}"),
        }
    }

    #[test]
    fn missing_field_is_named_in_the_path() {
        assert_eq!(
            err(serde_json::json!({})),
            ("path".into(), "missing field".into())
        );
    }

    #[test]
    fn wrong_type_names_the_field_and_the_value() {
        let (path, message) = err(serde_json::json!({"path": 7}));
        assert_eq!(path, "path");
        assert!(
            message.contains("integer `7`") && message.contains("expected a string"),
            "{message}"
        );
    }

    #[test]
    fn nested_fields_get_a_dotted_path() {
        let (path, message) = err(serde_json::json!({"path": "a", "opts": {}}));
        assert_eq!(
            (path.as_str(), message.as_str()),
            ("opts.depth", "missing field")
        );
        let (path, _) = err(serde_json::json!({"path": "a", "tags": [1, "x"]}));
        assert_eq!(path, "tags[1]");
        let (path, _) = err(serde_json::json!({"path": "a", "opts": ""}));
        assert_eq!(path, "opts");
    }

    #[test]
    fn unknown_field_is_named_and_the_expected_ones_listed() {
        let (path, message) = err(serde_json::json!({"path": "a", "paht": 1}));
        assert_eq!(path, "paht");
        assert!(
            message.starts_with("unknown field; expected one of"),
            "{message}"
        );
    }

    #[test]
    fn non_object_arguments_are_rejected_at_the_root() {
        let (path, message) = err(serde_json::json!([1]));
        assert_eq!(
            (path.as_str(), message.as_str()),
            (
                "(root)",
                "expected a JSON object of arguments, got an array"
            )
        );
        let (path, _) = err(serde_json::json!("not json"));
        assert_eq!(path, "(root)");
    }

    #[test]
    fn empty_arguments_mean_an_empty_object() {
        assert!(parse_args::<NoParams>(&Value::Null).is_ok());
        assert!(parse_args::<NoParams>(&serde_json::json!("")).is_ok());
        assert!(parse_args::<NoParams>(&serde_json::json!({})).is_ok());
        assert_eq!(err(Value::Null), ("path".into(), "missing field".into()));
    }

    #[test]
    fn a_string_holding_an_object_is_decoded() {
        let input: Input = parse_args(&serde_json::json!("{\"path\": \"a\"}")).unwrap();
        assert_eq!(input.path, "a");
    }
}
