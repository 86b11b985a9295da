//! [`NotJson`]: an untyped answer whose text does not parse as JSON.

/// An untyped answer's text is not JSON, so it has no value
/// ([`Answer::value`](crate::Answer::value)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the answer is not JSON ({reason}): \"{text}\"")]
pub struct NotJson {
    /// Why it does not parse, in the JSON parser's words.
    pub reason: String,
    /// The answer's text, trimmed and clipped to 60 characters (with `…`).
    pub text: String,
}
