//! [`ProviderError`]: why a model call failed, in the provider's own words, and which failures
//! are worth retrying.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use agent_core::retry::RetryableError;

/// Why a model call failed. Messages keep the provider's own words.
///
/// Serialized as an object tagged by `kind` (`api`, `connect`, `timeout`, `stream`, `decode`,
/// `config`) with the variant's fields by their names (`Config`'s text as `message`), and
/// `Duration`s as serde writes them (`{"secs": 3, "nanos": 0}`): what a journal records of a
/// failed model call, so that a replay ends the same way.
///
/// ```
/// use agent_llm::ProviderError;
///
/// let error = ProviderError::Config("no API key".into());
/// let json = serde_json::to_value(&error).unwrap();
/// assert_eq!(json, serde_json::json!({"kind": "config", "message": "no API key"}));
/// let back: ProviderError = serde_json::from_value(json).unwrap();
/// assert_eq!(back.to_string(), error.to_string());
/// ```
#[derive(Debug, Clone, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProviderError {
    /// The API answered with an error status.
    #[error("{provider} API error {status}{}: {message}", error_type.as_deref().map(|t| format!(" ({t})")).unwrap_or_default())]
    Api {
        /// Which provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's `error.type` (or `error.code`), e.g. `overloaded_error`.
        error_type: Option<String>,
        /// The provider's message.
        message: String,
        /// The `retry-after` the server asked for.
        retry_after: Option<Duration>,
    },
    /// The server could not be reached, or the connection broke before an answer began.
    #[error("could not reach {provider}: {message}")]
    Connect {
        /// Which provider.
        provider: String,
        /// What the network layer said.
        message: String,
    },
    /// No answer began within the time limit.
    #[error("{provider} did not answer within {after:?}")]
    Timeout {
        /// Which provider.
        provider: String,
        /// The limit.
        after: Duration,
    },
    /// The answer began but its stream failed: an `error` event, a broken connection, a stall, or
    /// an end before the answer was complete. Never retried (events were already delivered).
    #[error("{provider} stream failed{}: {message}", error_type.as_deref().map(|t| format!(" ({t})")).unwrap_or_default())]
    Stream {
        /// Which provider.
        provider: String,
        /// The provider's error type, for an `error` event.
        error_type: Option<String>,
        /// What went wrong.
        message: String,
    },
    /// The answer could not be understood.
    #[error("invalid answer from {provider}: {message}")]
    Decode {
        /// Which provider.
        provider: String,
        /// What was wrong with it.
        message: String,
    },
    /// The provider is configured wrongly (a header that is not valid, a missing key).
    #[error("invalid provider configuration: {0}")]
    Config(#[serde(with = "message")] String),
    /// A part of the request (an image, a document, a sound) that this wire format or its
    /// limits cannot take; nothing was sent. Never retried.
    #[error("{provider} cannot take a part of this request: {message}")]
    Media {
        /// Which provider.
        provider: String,
        /// Which part (its message, type, size and name) and why.
        message: String,
    },
}

/// `Config`'s text as the field `message` (a tagged variant's content must be an object).
mod message {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Ref<'a> {
        message: &'a str,
    }

    #[derive(Deserialize)]
    struct Owned {
        message: String,
    }

    pub(super) fn serialize<S: Serializer>(
        message: &str,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        Ref { message }.serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<String, D::Error> {
        Owned::deserialize(deserializer).map(|owned| owned.message)
    }
}

impl RetryableError for ProviderError {
    fn is_transient(&self) -> bool {
        match self {
            ProviderError::Api {
                status,
                error_type,
                retry_after,
                ..
            } => match status {
                429 => retry_after.is_some() || !is_spending_cap(error_type.as_deref()),
                500 | 502 | 503 | 504 | 529 => true,
                _ => error_type.as_deref() == Some("overloaded_error"),
            },
            ProviderError::Connect { .. } | ProviderError::Timeout { .. } => true,
            ProviderError::Stream { .. }
            | ProviderError::Decode { .. }
            | ProviderError::Config(_)
            | ProviderError::Media { .. } => false,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// A 429 that means "you are out of credit", not "slow down": retrying cannot help.
fn is_spending_cap(error_type: Option<&str>) -> bool {
    error_type.is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        t.contains("quota") || t.contains("billing") || t.contains("spend") || t.contains("credit")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: u16, error_type: Option<&str>, retry_after: Option<u64>) -> ProviderError {
        ProviderError::Api {
            provider: "x".into(),
            status,
            error_type: error_type.map(str::to_owned),
            message: "m".into(),
            retry_after: retry_after.map(Duration::from_secs),
        }
    }

    #[test]
    fn transient_and_fatal_errors_are_told_apart() {
        for status in [429, 500, 502, 503, 504, 529] {
            assert!(api(status, None, None).is_transient(), "{status}");
        }
        for status in [400, 401, 403, 404, 413] {
            assert!(!api(status, None, None).is_transient(), "{status}");
        }
        assert!(api(400, Some("overloaded_error"), None).is_transient());
        assert!(
            !api(429, Some("insufficient_quota"), None).is_transient(),
            "a spending cap is final"
        );
        assert!(
            api(429, Some("insufficient_quota"), Some(3)).is_transient(),
            "unless the server says when to retry"
        );
        assert_eq!(
            api(429, None, Some(3)).retry_after(),
            Some(Duration::from_secs(3))
        );
    }

    /// One error of every variant, with every optional field both set and not.
    fn every_variant() -> Vec<ProviderError> {
        vec![
            api(429, Some("rate_limit_error"), Some(3)),
            ProviderError::Api {
                provider: "openai".into(),
                status: 400,
                error_type: None,
                message: "bad request: \"quoted\", é".into(),
                retry_after: Some(Duration::from_millis(1_500)),
            },
            api(500, None, None),
            ProviderError::Connect {
                provider: "anthropic".into(),
                message: "connection refused".into(),
            },
            ProviderError::Timeout {
                provider: "anthropic".into(),
                after: Duration::new(30, 5),
            },
            ProviderError::Stream {
                provider: "anthropic".into(),
                error_type: Some("overloaded_error".into()),
                message: "Overloaded".into(),
            },
            ProviderError::Stream {
                provider: "openai".into(),
                error_type: None,
                message: "the stream ended early".into(),
            },
            ProviderError::Decode {
                provider: "openai".into(),
                message: "missing `choices`".into(),
            },
            ProviderError::Config("the header `x-api-key` is not valid".into()),
            ProviderError::Media {
                provider: "anthropic".into(),
                message: "the anthropic format takes no audio".into(),
            },
        ]
    }

    #[test]
    fn every_variant_reads_back_as_it_was_written() {
        let variants = every_variant();
        let mut kinds: Vec<String> = Vec::new();
        for error in variants {
            let json = serde_json::to_string(&error).unwrap();
            let back: ProviderError = serde_json::from_str(&json).unwrap();
            assert_eq!(format!("{back:?}"), format!("{error:?}"), "{json}");
            assert_eq!(back.is_transient(), error.is_transient(), "{json}");
            assert_eq!(back.retry_after(), error.retry_after(), "{json}");
            let value: serde_json::Value = serde_json::from_str(&json).unwrap();
            kinds.push(value["kind"].as_str().unwrap().to_owned());
        }
        kinds.dedup();
        assert_eq!(
            kinds,
            [
                "api", "connect", "timeout", "stream", "decode", "config", "media"
            ]
        );
    }

    /// What journals recorded of a failed model call before `ProviderError` serialized itself:
    /// the runtime's `ProviderErrorRecord`, copied here as it was, so that those journals keep
    /// reading back.
    mod written_before {
        use std::time::Duration;

        use serde::{Deserialize, Serialize};

        use super::ProviderError;

        #[derive(Serialize, Deserialize)]
        #[serde(rename_all = "snake_case", tag = "kind")]
        pub(super) enum ProviderErrorRecord {
            Api {
                provider: String,
                status: u16,
                error_type: Option<String>,
                message: String,
                retry_after: Option<Duration>,
            },
            Connect {
                provider: String,
                message: String,
            },
            Timeout {
                provider: String,
                after: Duration,
            },
            Stream {
                provider: String,
                error_type: Option<String>,
                message: String,
            },
            Decode {
                provider: String,
                message: String,
            },
            Config {
                message: String,
            },
            Media {
                provider: String,
                message: String,
            },
        }

        impl From<ProviderError> for ProviderErrorRecord {
            fn from(error: ProviderError) -> Self {
                match error {
                    ProviderError::Api {
                        provider,
                        status,
                        error_type,
                        message,
                        retry_after,
                    } => ProviderErrorRecord::Api {
                        provider,
                        status,
                        error_type,
                        message,
                        retry_after,
                    },
                    ProviderError::Connect { provider, message } => {
                        ProviderErrorRecord::Connect { provider, message }
                    }
                    ProviderError::Timeout { provider, after } => {
                        ProviderErrorRecord::Timeout { provider, after }
                    }
                    ProviderError::Stream {
                        provider,
                        error_type,
                        message,
                    } => ProviderErrorRecord::Stream {
                        provider,
                        error_type,
                        message,
                    },
                    ProviderError::Decode { provider, message } => {
                        ProviderErrorRecord::Decode { provider, message }
                    }
                    ProviderError::Config(message) => ProviderErrorRecord::Config { message },
                    ProviderError::Media { provider, message } => {
                        ProviderErrorRecord::Media { provider, message }
                    }
                }
            }
        }
    }

    #[test]
    fn the_json_is_the_one_journals_recorded_before_and_those_read_back() {
        for error in every_variant() {
            let before =
                serde_json::to_string(&written_before::ProviderErrorRecord::from(error.clone()))
                    .unwrap();
            let now = serde_json::to_string(&error).unwrap();
            assert_eq!(now, before, "the same JSON, byte for byte");
            let back: ProviderError = serde_json::from_str(&before).unwrap();
            assert_eq!(format!("{back:?}"), format!("{error:?}"), "{before}");
        }
        // And as the record read it: fields in another order, a missing optional field.
        let back: ProviderError = serde_json::from_str(
            r#"{"message":"slow down","status":429,"provider":"x","kind":"api","error_type":null}"#,
        )
        .unwrap();
        assert_eq!(back.to_string(), "x API error 429: slow down");
        assert_eq!(back.retry_after(), None);
        let timeout: ProviderError = serde_json::from_str(
            r#"{"kind":"timeout","provider":"x","after":{"secs":2,"nanos":0}}"#,
        )
        .unwrap();
        assert_eq!(timeout.to_string(), "x did not answer within 2s");
    }

    #[test]
    fn what_is_not_a_provider_error_is_refused_with_the_reason() {
        for (json, words) in [
            (
                r#"{"kind":"teapot","provider":"x"}"#,
                "unknown variant `teapot`",
            ),
            (r#"{"provider":"x","message":"m"}"#, "missing field `kind`"),
            (r#"{"kind":"config"}"#, "missing field `message`"),
            (
                r#"{"kind":"api","provider":"x","message":"m"}"#,
                "missing field `status`",
            ),
        ] {
            let error = serde_json::from_str::<ProviderError>(json)
                .unwrap_err()
                .to_string();
            assert!(error.contains(words), "{json}: {error}");
        }
    }

    #[test]
    fn messages_keep_the_providers_words() {
        assert_eq!(
            api(529, Some("overloaded_error"), None).to_string(),
            "x API error 529 (overloaded_error): m"
        );
    }
}
