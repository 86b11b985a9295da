//! [`ProviderError`]: why a model call failed, in the provider's own words, and which failures
//! are worth retrying.

use std::time::Duration;

use crate::retry::RetryableError;

/// Why a model call failed. Messages keep the provider's own words.
#[derive(Debug, Clone, thiserror::Error)]
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
    Config(String),
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
            | ProviderError::Config(_) => false,
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

    #[test]
    fn messages_keep_the_providers_words() {
        assert_eq!(
            api(529, Some("overloaded_error"), None).to_string(),
            "x API error 529 (overloaded_error): m"
        );
    }
}
