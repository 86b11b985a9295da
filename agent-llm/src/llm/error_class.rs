//! [`ErrorClass`]: what a failed model call means for what to do next — wait, ask another
//! provider, ask one with a larger context window, or stop — derived from a [`ProviderError`].

use super::ProviderError;

/// What a failed model call means for what to do next ([`ErrorClass::of`] classes an error).
///
/// | class | what it is | a [`Failover`](super::Failover) |
/// |---|---|---|
/// | [`RateLimited`](ErrorClass::RateLimited) | 429, 402, or a stream's `rate_limit_error` | asks the next provider at once |
/// | [`Overloaded`](ErrorClass::Overloaded) | 503, 529, `overloaded_error` | asks the next provider at once |
/// | [`ServerError`](ErrorClass::ServerError) | another 5xx, an answer that could not be read or broke off | after the provider's own retries, the next |
/// | [`Network`](ErrorClass::Network) | no connection, a timeout, 408 | after the provider's own retries, the next |
/// | [`ContextTooLong`](ErrorClass::ContextTooLong) | a 4xx whose words say the prompt is over the model's context window | the next provider with a larger window, else stops |
/// | [`Auth`](ErrorClass::Auth) | 401, 403 | stops |
/// | [`BadRequest`](ErrorClass::BadRequest) | any other 4xx, a configuration error, media the format cannot take | stops |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorClass {
    /// Too many requests, or the account's limit: another provider may take it now, this one
    /// later (`retry-after`).
    RateLimited,
    /// The service is overloaded or unavailable for a while.
    Overloaded,
    /// The server failed (another 5xx), or its answer could not be read or broke off.
    ServerError,
    /// The server could not be reached, or did not answer in time.
    Network,
    /// The conversation is longer than the model's context window.
    ContextTooLong,
    /// The key was refused (401) or lacks the permission (403).
    Auth,
    /// The request is wrong for this API, or the provider is configured wrongly: asking again,
    /// anywhere, gives the same answer.
    BadRequest,
}

impl ErrorClass {
    /// The class of `error`.
    ///
    /// ```
    /// use agent_llm::{ErrorClass, ProviderError};
    ///
    /// let error = ProviderError::Api {
    ///     provider: "openai".into(),
    ///     status: 400,
    ///     error_type: Some("context_length_exceeded".into()),
    ///     message: "This model's maximum context length is 128000 tokens.".into(),
    ///     retry_after: None,
    /// };
    /// assert_eq!(ErrorClass::of(&error), ErrorClass::ContextTooLong);
    /// ```
    pub fn of(error: &ProviderError) -> ErrorClass {
        match error {
            ProviderError::Api {
                status,
                error_type,
                message,
                ..
            } => of_api(*status, error_type.as_deref(), message),
            ProviderError::Connect { .. } | ProviderError::Timeout { .. } => ErrorClass::Network,
            ProviderError::Stream { error_type, .. } => match error_type.as_deref() {
                Some(kind) if is_overload(kind) => ErrorClass::Overloaded,
                Some(kind) if is_rate_limit(kind) => ErrorClass::RateLimited,
                _ => ErrorClass::ServerError,
            },
            ProviderError::Decode { .. } => ErrorClass::ServerError,
            ProviderError::Config(_) | ProviderError::Media { .. } => ErrorClass::BadRequest,
        }
    }

    /// Whether the API is busy (rate limited or overloaded): asking another provider helps at
    /// once, asking this one again only after a wait.
    pub fn is_busy(self) -> bool {
        matches!(self, ErrorClass::RateLimited | ErrorClass::Overloaded)
    }

    /// Whether the provider failed (busy, a server error, the network): what moves a
    /// [`Failover`](super::Failover) on to the next provider and counts against the provider's
    /// [`CircuitBreaker`](super::CircuitBreaker). A context that is too long, a refused key or
    /// a bad request are answers, not failures.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            ErrorClass::RateLimited
                | ErrorClass::Overloaded
                | ErrorClass::ServerError
                | ErrorClass::Network
        )
    }
}

fn of_api(status: u16, error_type: Option<&str>, message: &str) -> ErrorClass {
    if error_type.is_some_and(is_overload) {
        return ErrorClass::Overloaded;
    }
    match status {
        429 | 402 => ErrorClass::RateLimited,
        503 | 529 => ErrorClass::Overloaded,
        408 => ErrorClass::Network,
        500..=599 => ErrorClass::ServerError,
        401 | 403 => ErrorClass::Auth,
        400..=499 if is_context_too_long(error_type, message) => ErrorClass::ContextTooLong,
        _ => ErrorClass::BadRequest,
    }
}

fn is_overload(kind: &str) -> bool {
    let kind = kind.to_ascii_lowercase();
    kind.contains("overloaded") || kind == "unavailable"
}

fn is_rate_limit(kind: &str) -> bool {
    let kind = kind.to_ascii_lowercase();
    kind.contains("rate_limit") || kind == "resource_exhausted"
}

/// How each API words a prompt over the context window, lowercased: OpenAI and the servers that
/// copy it (vLLM, DeepSeek, Groq: `context_length_exceeded`, "maximum context length"), the
/// Responses API ("exceeds the context window"), Anthropic ("prompt is too long", "exceed
/// context limit"), Gemini ("exceeds the maximum number of tokens allowed"), llama.cpp
/// (`exceed_context_size_error`), Mistral ("maximum context length"), Bedrock ("input is too
/// long").
const CONTEXT_WORDS: &[&str] = &[
    "context_length_exceeded",
    "context length",
    "context_length",
    "context window",
    "context limit",
    "context size",
    "exceed_context_size",
    "prompt is too long",
    "input is too long",
    "maximum number of tokens allowed",
];

fn is_context_too_long(error_type: Option<&str>, message: &str) -> bool {
    let words = format!("{} {}", error_type.unwrap_or_default(), message).to_ascii_lowercase();
    CONTEXT_WORDS.iter().any(|w| words.contains(w))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn api(status: u16, error_type: Option<&str>, message: &str) -> ProviderError {
        ProviderError::Api {
            provider: "x".into(),
            status,
            error_type: error_type.map(str::to_owned),
            message: message.into(),
            retry_after: Some(Duration::from_secs(1)),
        }
    }

    #[test]
    fn statuses_are_classed() {
        for (status, class) in [
            (429, ErrorClass::RateLimited),
            (402, ErrorClass::RateLimited),
            (503, ErrorClass::Overloaded),
            (529, ErrorClass::Overloaded),
            (500, ErrorClass::ServerError),
            (502, ErrorClass::ServerError),
            (504, ErrorClass::ServerError),
            (408, ErrorClass::Network),
            (401, ErrorClass::Auth),
            (403, ErrorClass::Auth),
            (400, ErrorClass::BadRequest),
            (404, ErrorClass::BadRequest),
            (413, ErrorClass::BadRequest),
        ] {
            assert_eq!(ErrorClass::of(&api(status, None, "m")), class, "{status}");
        }
        assert_eq!(
            ErrorClass::of(&api(400, Some("overloaded_error"), "Overloaded")),
            ErrorClass::Overloaded
        );
    }

    /// Each API's words for a prompt over the context window, as its error bodies say them.
    #[test]
    fn each_apis_words_for_a_long_context_are_understood() {
        for (error_type, message) in [
            (
                Some("invalid_request_error"),
                "prompt is too long: 208310 tokens > 200000 maximum",
            ),
            (
                Some("invalid_request_error"),
                "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, \
                 decrease input length or `max_tokens` and try again",
            ),
            (
                Some("context_length_exceeded"),
                "This model's maximum context length is 128000 tokens. However, your messages \
                 resulted in 130412 tokens. Please reduce the length of the messages.",
            ),
            (
                Some("context_length_exceeded"),
                "Your input exceeds the context window of this model. Please adjust your input \
                 and try again.",
            ),
            (
                Some("INVALID_ARGUMENT"),
                "The input token count (1200000) exceeds the maximum number of tokens allowed \
                 (1048576).",
            ),
            (
                Some("exceed_context_size_error"),
                "the request exceeds the available context size, try increasing it",
            ),
            (
                None,
                "This model's maximum context length is 4096 tokens. However, you requested 5000 \
                 tokens (4000 in the messages, 1000 in the completion).",
            ),
        ] {
            assert_eq!(
                ErrorClass::of(&api(400, error_type, message)),
                ErrorClass::ContextTooLong,
                "{message}"
            );
        }
        assert_eq!(
            ErrorClass::of(&api(
                400,
                Some("invalid_request_error"),
                "max_tokens: too large"
            )),
            ErrorClass::BadRequest
        );
        // A rate limit that counts tokens per minute is a rate limit, not a long context.
        assert_eq!(
            ErrorClass::of(&api(
                429,
                Some("rate_limit_exceeded"),
                "Request too large: maximum context length is limited by tokens per min"
            )),
            ErrorClass::RateLimited
        );
    }

    #[test]
    fn other_errors_are_classed() {
        let stream = |kind: Option<&str>| ProviderError::Stream {
            provider: "x".into(),
            error_type: kind.map(str::to_owned),
            message: "m".into(),
        };
        assert_eq!(
            ErrorClass::of(&stream(Some("overloaded_error"))),
            ErrorClass::Overloaded
        );
        assert_eq!(
            ErrorClass::of(&stream(Some("rate_limit_error"))),
            ErrorClass::RateLimited
        );
        assert_eq!(ErrorClass::of(&stream(None)), ErrorClass::ServerError);
        let timeout = ProviderError::Timeout {
            provider: "x".into(),
            after: Duration::from_secs(1),
        };
        assert_eq!(ErrorClass::of(&timeout), ErrorClass::Network);
        assert_eq!(
            ErrorClass::of(&ProviderError::Config("no key".into())),
            ErrorClass::BadRequest
        );
        let failing: Vec<bool> = [
            ErrorClass::RateLimited,
            ErrorClass::Overloaded,
            ErrorClass::ServerError,
            ErrorClass::Network,
            ErrorClass::ContextTooLong,
            ErrorClass::Auth,
            ErrorClass::BadRequest,
        ]
        .iter()
        .map(|c| c.is_failure())
        .collect();
        assert_eq!(failing, [true, true, true, true, false, false, false]);
    }
}
