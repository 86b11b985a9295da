//! A remote server's question for a person ([`Elicitation`]), how it appears in a paused run, and
//! how a [`Decision`] answers it ([`ElicitationAnswer`], or [`AnswerError`] when it cannot). See
//! the [module docs](super) for the whole flow.

use agent_core::{Decision, PendingCall, ToolCall};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::answer_error::AnswerError;

/// The name a pending elicitation's [`PendingCall::call`] carries, to tell it from a tool call.
pub const ELICITATION_CALL: &str = "elicitation/create";

/// The key of an [`Decision::Edit`] value that gives the answer in full (`accept` with
/// `content`, `decline`, `cancel`) instead of being the accepted content itself.
pub const ACTION_KEY: &str = "$action";

/// The most bytes an accepted answer's content may have once encoded as JSON.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Client side: what a remote MCP server asks a person while one of its tools runs
/// (`elicitation/create`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Elicitation {
    /// Fill in a form: an object with the properties `schema` describes.
    Form {
        /// The server's words for the person.
        message: String,
        /// The requested JSON Schema (an object with primitive properties).
        #[serde(rename = "requestedSchema")]
        schema: Value,
    },
    /// Open a page: the person does something there, out of band; the answer says only
    /// whether they agreed to go.
    Url {
        /// The server's words for the person.
        message: String,
        /// The page to open.
        url: String,
    },
}

impl Elicitation {
    /// The server's words for the person.
    pub fn message(&self) -> &str {
        match self {
            Elicitation::Form { message, .. } | Elicitation::Url { message, .. } => message,
        }
    }

    /// The requested schema, in form mode.
    pub fn schema(&self) -> Option<&Value> {
        match self {
            Elicitation::Form { schema, .. } => Some(schema),
            Elicitation::Url { .. } => None,
        }
    }

    /// The question a pending call carries, if it is an elicitation (its call is named
    /// [`ELICITATION_CALL`]); `None` for any other pending call.
    pub fn of(pending: &PendingCall) -> Option<Elicitation> {
        if pending.call.name != ELICITATION_CALL {
            return None;
        }
        serde_json::from_value(pending.call.arguments.clone()).ok()
    }

    pub(super) fn from_params(params: &ElicitRequestParams) -> Result<Self, String> {
        match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => Ok(Elicitation::Form {
                message: message.clone(),
                schema: serde_json::to_value(requested_schema)
                    .map_err(|e| format!("its requested schema does not encode: {e}"))?,
            }),
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                Ok(Elicitation::Url {
                    message: message.clone(),
                    url: url.clone(),
                })
            }
            #[allow(unreachable_patterns)]
            _ => Err("it is of a kind this client does not know".to_owned()),
        }
    }

    /// The pending call a paused run lists for this question, made by the skill `skill` of the
    /// server `server`; `id` is the question's id inside the call.
    pub(super) fn pending(&self, id: &str, skill: &str, server: &str) -> PendingCall {
        let reason = match self {
            Elicitation::Form { message, .. } => {
                format!("the MCP server {server} asks: {message}")
            }
            Elicitation::Url { message, url } => {
                format!("the MCP server {server} asks you to open {url}: {message}")
            }
        };
        PendingCall {
            call: ToolCall::new(
                id,
                ELICITATION_CALL,
                serde_json::to_value(self).unwrap_or(Value::Null),
            ),
            skill: skill.to_owned(),
            is_read_only: true,
            is_destructive: false,
            reason,
            via: Vec::new(),
        }
    }

    /// The answer `decision` gives to this question, checked: accepted content must be an
    /// object that the requested schema accepts, at most [`MAX_ANSWER_BYTES`] long. An error
    /// says what is wrong; nothing is sent then.
    pub fn answer(&self, decision: &Decision) -> Result<ElicitationAnswer, AnswerError> {
        let answer = ElicitationAnswer::from_decision(decision)?;
        if let ElicitationAnswer::Accept(content) = &answer {
            self.check(content)?;
        }
        Ok(answer)
    }

    fn check(&self, content: &Map<String, Value>) -> Result<(), AnswerError> {
        let instance = Value::Object(content.clone());
        let bytes = instance.to_string().len();
        if bytes > MAX_ANSWER_BYTES {
            return Err(AnswerError::TooLarge {
                bytes,
                limit: MAX_ANSWER_BYTES,
            });
        }
        let schema = match self {
            Elicitation::Url { .. } if content.is_empty() => return Ok(()),
            Elicitation::Url { .. } => return Err(AnswerError::ContentForUrl),
            Elicitation::Form { schema, .. } => schema,
        };
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| AnswerError::InvalidSchema(e.to_string()))?;
        let problems: Vec<String> = validator
            .iter_errors(&instance)
            .take(8)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(AnswerError::SchemaMismatch(problems))
        }
    }
}

/// Client side: a person's answer to a server's [`Elicitation`], and the [`Decision`] that
/// carries it (a skill served over MCP gets its client's answer as
/// [`server::ClientAnswer`](crate::server::ClientAnswer)).
///
/// | answer | decision |
/// |---|---|
/// | accept with content | `Decision::Edit(content)` (an object), or `Decision::Edit({"$action": "accept", "content": {...}})` |
/// | accept without content (a URL, an empty form) | `Decision::Approve` |
/// | decline | `Decision::Deny(reason)`, or `Decision::Edit({"$action": "decline"})` |
/// | cancel (dismissed without choosing) | `Decision::Edit({"$action": "cancel"})` |
///
/// ```
/// use agent_core::Decision;
/// use agent_mcp::client::ElicitationAnswer;
/// use serde_json::json;
///
/// let accept = ElicitationAnswer::accept(json!({"guests": 2}).as_object().unwrap().clone());
/// assert_eq!(Decision::from(accept), Decision::Edit(json!({"guests": 2})));
/// assert_eq!(
///     ElicitationAnswer::from_decision(&Decision::from(ElicitationAnswer::Cancel)),
///     Ok(ElicitationAnswer::Cancel)
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// The person answered with this content.
    Accept(Map<String, Value>),
    /// The person said no.
    Decline,
    /// The person dismissed the question without choosing.
    Cancel,
}

impl ElicitationAnswer {
    /// Accepts with `content`.
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitationAnswer::Accept(content)
    }

    /// The answer a decision gives (see the table above); an `Edit` value that is neither an
    /// object nor a full answer is an error.
    pub fn from_decision(decision: &Decision) -> Result<Self, AnswerError> {
        match decision {
            Decision::Approve => Ok(ElicitationAnswer::Accept(Map::new())),
            Decision::Deny(_) => Ok(ElicitationAnswer::Decline),
            Decision::Edit(Value::Object(object)) => match object.get(ACTION_KEY) {
                None => Ok(ElicitationAnswer::Accept(object.clone())),
                Some(Value::String(action)) => match action.as_str() {
                    "accept" => match object.get("content") {
                        Some(Value::Object(content)) => {
                            Ok(ElicitationAnswer::Accept(content.clone()))
                        }
                        None => Ok(ElicitationAnswer::Accept(Map::new())),
                        Some(_) => Err(AnswerError::ContentNotAnObject),
                    },
                    "decline" => Ok(ElicitationAnswer::Decline),
                    "cancel" => Ok(ElicitationAnswer::Cancel),
                    other => Err(AnswerError::UnknownAction(other.to_owned())),
                },
                Some(_) => Err(AnswerError::ActionNotAString),
            },
            Decision::Edit(other) => Err(AnswerError::NotAnObject(other.clone())),
        }
    }

    pub(super) fn to_result(&self) -> ElicitResult {
        match self {
            ElicitationAnswer::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(Value::Object(content.clone())),
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        }
    }
}

impl From<ElicitationAnswer> for Decision {
    fn from(answer: ElicitationAnswer) -> Self {
        match answer {
            ElicitationAnswer::Accept(content) => Decision::Edit(Value::Object(content)),
            ElicitationAnswer::Decline => Decision::Edit(json!({ ACTION_KEY: "decline" })),
            ElicitationAnswer::Cancel => Decision::Edit(json!({ ACTION_KEY: "cancel" })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Elicitation {
        Elicitation::Form {
            message: "Who is the table for?".into(),
            schema: json!({
                "type": "object",
                "properties": {"name": {"type": "string"}, "guests": {"type": "integer", "maximum": 8}},
                "required": ["name", "guests"]
            }),
        }
    }

    fn url() -> Elicitation {
        Elicitation::Url {
            message: "Sign in".into(),
            url: "https://example.com/login".into(),
        }
    }

    fn edit(value: Value) -> Decision {
        Decision::Edit(value)
    }

    #[test]
    fn a_decision_that_is_no_answer_says_which_way_it_is_not() {
        let cases = [
            (edit(json!("Ada")), AnswerError::NotAnObject(json!("Ada"))),
            (edit(json!({"$action": 1})), AnswerError::ActionNotAString),
            (
                edit(json!({"$action": "maybe"})),
                AnswerError::UnknownAction("maybe".into()),
            ),
            (
                edit(json!({"$action": "accept", "content": [1]})),
                AnswerError::ContentNotAnObject,
            ),
        ];
        for (decision, expected) in cases {
            assert_eq!(
                ElicitationAnswer::from_decision(&decision),
                Err(expected.clone())
            );
            assert_eq!(form().answer(&decision), Err(expected));
        }
    }

    #[test]
    fn an_answer_that_does_not_fit_the_question_says_why() {
        let big = "A".repeat(MAX_ANSWER_BYTES);
        match form().answer(&edit(json!({"name": big, "guests": 2}))) {
            Err(AnswerError::TooLarge { bytes, limit }) => {
                assert_eq!(limit, MAX_ANSWER_BYTES);
                assert!(bytes > MAX_ANSWER_BYTES, "{bytes}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            url().answer(&edit(json!({"done": true}))),
            Err(AnswerError::ContentForUrl)
        );
        let broken = Elicitation::Form {
            message: "?".into(),
            schema: json!({"type": 5}),
        };
        assert!(matches!(
            broken.answer(&edit(json!({"a": 1}))),
            Err(AnswerError::InvalidSchema(_))
        ));
        match form().answer(&edit(json!({"name": 7, "guests": 40}))) {
            Err(AnswerError::SchemaMismatch(problems)) => {
                assert_eq!(problems.len(), 2, "{problems:?}");
                assert!(
                    problems.iter().any(|p| p.starts_with("/name")),
                    "{problems:?}"
                );
                assert!(
                    problems.iter().any(|p| p.starts_with("/guests")),
                    "{problems:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_fitting_answer_passes_and_the_error_text_is_what_the_run_shows() {
        let content = json!({"name": "Ada", "guests": 2});
        assert_eq!(
            form().answer(&edit(content.clone())),
            Ok(ElicitationAnswer::Accept(
                content.as_object().unwrap().clone()
            ))
        );
        assert_eq!(
            url().answer(&Decision::Approve),
            Ok(ElicitationAnswer::Accept(Map::new()))
        );
        assert_eq!(
            form().answer(&Decision::Deny("no".into())),
            Ok(ElicitationAnswer::Decline)
        );
        assert_eq!(
            AnswerError::UnknownAction("maybe".into()).to_string(),
            "`$action` is `maybe`; it must be `accept`, `decline` or `cancel`"
        );
        assert_eq!(
            AnswerError::TooLarge {
                bytes: 70_000,
                limit: MAX_ANSWER_BYTES
            }
            .to_string(),
            "the answer has 70000 bytes, over the limit of 65536"
        );
    }
}
