//! Wire helpers every format's decoder uses.

use serde_json::{Value, json};

use super::ProviderError;

/// Tool arguments from streamed JSON text: empty means `{}`; text that is not valid JSON is kept
/// as a string, which the registry answers with a `BadArgs` result the model can correct.
pub(crate) fn parse_arguments(json: &str) -> Value {
    if json.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.to_owned()))
}

/// At most 200 characters of `text`, for error messages that quote the server.
pub(crate) fn truncate(text: &str) -> String {
    text.chars().take(200).collect()
}

/// A [`ProviderError::Decode`] from `provider` saying `what`.
pub(crate) fn decode_error(provider: &str, what: &str) -> ProviderError {
    ProviderError::Decode {
        provider: provider.into(),
        message: what.to_owned(),
    }
}

/// The string at `key` of a JSON object, if there is one.
pub(crate) fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}
