//! [`AnswerError`]: why a person's answer to a server's question was not sent.

use serde_json::Value;

/// Client side: why a [`Decision`](agent_core::Decision) could not answer a server's
/// [`Elicitation`](super::Elicitation), from
/// [`ElicitationAnswer::from_decision`](super::ElicitationAnswer::from_decision) (the decision
/// is no answer) or [`Elicitation::answer`](super::Elicitation::answer) (the answer does not fit
/// the question). Nothing is sent to the server then; a paused run pauses again on the same
/// question with this error's text as the reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// `Decision::Edit` with a value that is not an object (of the requested properties, or a
    /// full answer with [`ACTION_KEY`](super::ACTION_KEY)).
    #[error("an answer must be an object of the requested properties, not `{0}`")]
    NotAnObject(Value),
    /// The value of [`ACTION_KEY`](super::ACTION_KEY) is not a string.
    #[error("`$action` must be a string")]
    ActionNotAString,
    /// [`ACTION_KEY`](super::ACTION_KEY) names none of `accept`, `decline`, `cancel`; the name
    /// it gave.
    #[error("`$action` is `{0}`; it must be `accept`, `decline` or `cancel`")]
    UnknownAction(String),
    /// A full answer that accepts with a `content` that is not an object.
    #[error("`content` of an accepted answer must be an object")]
    ContentNotAnObject,
    /// The accepted content is over the limit ([`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES))
    /// once encoded as JSON.
    #[error("the answer has {bytes} bytes, over the limit of {limit}")]
    TooLarge {
        /// The content's size, in bytes of JSON.
        bytes: usize,
        /// The most bytes an answer may have.
        limit: usize,
    },
    /// Content given to a URL-mode question, which is accepted without any.
    #[error("a URL elicitation is accepted without content")]
    ContentForUrl,
    /// The schema the server requested is not a valid JSON Schema, so no answer can be checked
    /// against it; the validator's words.
    #[error("the server's requested schema is not valid: {0}")]
    InvalidSchema(String),
    /// The content does not match the requested schema: each problem (at most eight), with
    /// where in the content it is.
    #[error("the answer does not match the requested schema: {}", .0.join("; "))]
    SchemaMismatch(Vec<String>),
}
