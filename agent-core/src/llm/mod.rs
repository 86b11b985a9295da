//! Model providers: the [`LlmProvider`] trait and its implementations — the Anthropic Messages API
//! ([`AnthropicProvider`]), any OpenAI-compatible Chat Completions server ([`OpenAiProvider`]:
//! OpenAI, DeepSeek, Ollama, vLLM, llama.cpp) and a scripted [`MockProvider`] for tests.
//!
//! A provider turns a provider-neutral [`ChatRequest`] into its wire format and its answer back
//! into a [`ChatResponse`], either whole ([`LlmProvider::complete`]) or as a stream of
//! [`StreamEvent`]s ([`LlmProvider::stream`]) that ends with [`StreamEvent::Done`].
//!
//! # Errors and retries
//!
//! Failures are [`ProviderError`]s that keep the provider's own `error.type` and message.
//! Transient ones — HTTP 429 (unless it is a spending cap without `retry-after`), 500, 502, 503,
//! 504, 529 / `overloaded_error`, a connection that failed or was reset, a timeout before the
//! first byte — are retried with exponential backoff and jitter, honouring `retry-after`, up to
//! [`HttpOptions::retry`]. While streaming, each retry is announced with [`StreamEvent::Retry`].
//! A stream that already delivered events is never replayed: a failure mid-stream is an error.
//!
//! ```no_run
//! use agent_core::{AnthropicProvider, ChatRequest, LlmProvider, Message};
//!
//! # async fn run() -> Result<(), agent_core::ProviderError> {
//! let provider = AnthropicProvider::new(std::env::var("ANTHROPIC_API_KEY").unwrap(), "claude-sonnet-4-5");
//! let transcript = [Message::user("Say hello.")];
//! let response = provider.complete(&ChatRequest::new(&transcript)).await?;
//! println!("{}", response.message.content);
//! # Ok(()) }
//! ```

mod anthropic;
mod http;
mod mock;
mod openai;
mod sse;

use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;
use futures::{Stream, StreamExt};

pub use anthropic::{AnthropicProvider, CacheControl};
pub use http::HttpOptions;
pub use mock::{MockProvider, MockReply, RecordedRequest};
pub use openai::OpenAiProvider;

use crate::call::ToolCall;
use crate::message::{ChatRequest, ChatResponse, Usage};
use crate::retry::RetryableError;

/// The events of a streamed answer. Text and tool calls arrive in pieces; the stream ends with
/// [`StreamEvent::Done`], which carries the whole answer.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// A piece of the model's visible reasoning.
    ThinkingDelta(String),
    /// A tool call began.
    ToolCallStarted {
        /// The call's position in the answer (0-based).
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A piece of a tool call's arguments (JSON text).
    ToolCallDelta {
        /// The call's position in the answer.
        index: usize,
        /// The piece.
        arguments: String,
    },
    /// A tool call is complete.
    ToolCallFinished(ToolCall),
    /// Token counts so far.
    Usage(Usage),
    /// The request failed transiently and will be sent again after `delay`.
    Retry {
        /// The attempt that failed (1-based).
        attempt: u32,
        /// How long until the next one.
        delay: Duration,
        /// What went wrong.
        error: String,
    },
    /// The answer is complete.
    Done(ChatResponse),
}

/// A stream of [`StreamEvent`]s.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// A model behind an API. See the [module docs](self).
#[async_trait]
pub trait LlmProvider: Send + Sync {
    /// A short name for logs and spans (`anthropic`, `openai`, `mock`).
    fn name(&self) -> &str;

    /// The model's whole answer. The default collects [`LlmProvider::stream`].
    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        collect(self.stream(request)).await
    }

    /// The model's answer as it is generated. The request is encoded before this returns, so the
    /// stream does not borrow it.
    fn stream(&self, request: &ChatRequest<'_>) -> EventStream;
}

/// Decodes the server-sent events of one streamed answer: a pure state machine, no I/O.
pub(crate) trait SseDecoder: Send + 'static {
    /// Handles one event (`event` is its name, `data` its data).
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError>;
    /// Whether the answer's end marker arrived (reading stops there).
    fn is_complete(&self) -> bool;
    /// The whole answer, once the events have ended.
    fn finish(self) -> Result<ChatResponse, ProviderError>;
}

/// Sends `body` (retrying transient failures, each announced with [`StreamEvent::Retry`]), then
/// decodes the answer's events.
/// `final_error` names failures that must not be retried although they look transient (a 500
/// that says the server cannot stream this request).
pub(crate) fn sse_stream<D: SseDecoder>(
    http: Result<std::sync::Arc<http::Http>, ProviderError>,
    url: String,
    body: bytes::Bytes,
    decoder: D,
    final_error: impl Fn(&ProviderError) -> bool + Send + 'static,
) -> EventStream {
    Box::pin(async_stream::try_stream! {
        let http = http?;
        let mut attempt = 1;
        let response = loop {
            match http.attempt(&url, body.clone()).await {
                Ok(response) => break response,
                Err(error) if http.may_retry(attempt, &error) && !final_error(&error) => {
                    let delay = http.retry_delay(attempt, &error);
                    yield StreamEvent::Retry { attempt, delay, error: error.to_string() };
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                Err(error) => Err(error)?,
            }
        };
        let events = sse::events(response, http.options.idle_timeout, http.provider);
        let mut decoded = Box::pin(decode(events, decoder));
        while let Some(event) = decoded.next().await {
            yield event?;
        }
    })
}

/// Turns server-sent events into [`StreamEvent`]s with `decoder`, ending with [`StreamEvent::Done`].
fn decode<D: SseDecoder>(
    events: impl futures::Stream<Item = Result<eventsource_stream::Event, ProviderError>>
    + Send
    + 'static,
    mut decoder: D,
) -> impl futures::Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
    async_stream::try_stream! {
        let mut events = Box::pin(events);
        let mut finished: Vec<crate::SharedStr> = Vec::new();
        while let Some(event) = events.next().await {
            let event = event?;
            for out in decoder.feed(&event.event, &event.data)? {
                if let StreamEvent::ToolCallFinished(call) = &out {
                    finished.push(call.id.clone());
                }
                yield out;
            }
            if decoder.is_complete() {
                break;
            }
        }
        let response = decoder.finish()?;
        // Wire formats that never mark a call as finished (Chat Completions) finish them here.
        for call in &response.message.tool_calls {
            if !finished.contains(&call.id) {
                yield StreamEvent::ToolCallFinished(call.clone());
            }
        }
        yield StreamEvent::Done(response);
    }
}

/// A streaming wire format, for [`decode_recorded_stream`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// Anthropic Messages server-sent events.
    Anthropic,
    /// OpenAI-compatible Chat Completions server-sent events.
    OpenAi,
}

/// Decodes a recorded server-sent-events body, cut into `chunks` as it might have arrived over the
/// network, exactly as a live stream is decoded: for replaying traffic and for fuzzing the
/// decoders. The events are returned up to the first error, which is returned too.
pub fn decode_recorded_stream(
    format: WireFormat,
    chunks: &[&[u8]],
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    use eventsource_stream::Eventsource;
    let owned: Vec<Result<bytes::Bytes, std::convert::Infallible>> = chunks
        .iter()
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect();
    let provider = match format {
        WireFormat::Anthropic => "anthropic",
        WireFormat::OpenAi => "openai",
    };
    let events = futures::stream::iter(owned).eventsource().map(move |item| {
        item.map_err(|e| ProviderError::Stream {
            provider: provider.into(),
            error_type: None,
            message: format!("the stream is malformed: {e}"),
        })
    });
    let decoded: EventStream = match format {
        WireFormat::Anthropic => Box::pin(decode(events, anthropic::StreamDecoder::default())),
        WireFormat::OpenAi => Box::pin(decode(events, openai::StreamDecoder::default())),
    };
    futures::executor::block_on(async move {
        let mut decoded = decoded;
        let mut out = Vec::new();
        while let Some(item) = decoded.next().await {
            match item {
                Ok(event) => out.push(event),
                Err(error) => return (out, Some(error)),
            }
        }
        (out, None)
    })
}

/// Reads a stream to its [`StreamEvent::Done`].
pub async fn collect(mut stream: EventStream) -> Result<ChatResponse, ProviderError> {
    while let Some(event) = stream.next().await {
        if let StreamEvent::Done(response) = event? {
            return Ok(response);
        }
    }
    Err(ProviderError::Stream {
        provider: "provider".into(),
        error_type: None,
        message: "the stream ended without a complete answer".into(),
    })
}

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
