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

#[cfg(feature = "http")]
mod anthropic;
mod error;
#[cfg(feature = "http")]
mod http;
mod mock;
#[cfg(feature = "http")]
mod openai;
#[cfg(feature = "http")]
mod provider;
#[cfg(feature = "http")]
mod sse;
#[cfg(feature = "http")]
mod stream;
#[cfg(feature = "http")]
mod wire;

use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;
use futures::{Stream, StreamExt};

#[cfg(feature = "http")]
pub use anthropic::{AnthropicProvider, AnthropicWire, CacheControl};
pub use error::ProviderError;
#[cfg(feature = "http")]
pub use http::{HttpOptions, tls_config};
pub use mock::{MockProvider, MockReply, RecordedRequest};
#[cfg(feature = "http")]
pub use openai::{OpenAiProvider, OpenAiWire};
#[cfg(feature = "http")]
pub use provider::{HttpProvider, WireCodec};
#[cfg(feature = "http")]
pub use stream::SseDecoder;
#[cfg(feature = "http")]
#[doc(hidden)]
pub use stream::{WireFormat, decode_recorded_stream};

use crate::call::ToolCall;
use crate::message::{ChatRequest, ChatResponse, Usage};

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
        final_response(self.stream(request)).await
    }

    /// The model's answer as it is generated. The request is encoded before this returns, so the
    /// stream does not borrow it.
    fn stream(&self, request: &ChatRequest<'_>) -> EventStream;

    /// Whether the model can call tools. Typed runs ([`OutputMode::Auto`](crate::OutputMode))
    /// fall back to asking for JSON in the instructions when it cannot. Default: `true`.
    fn supports_tools(&self) -> bool {
        true
    }

    /// Whether the provider sends [`ChatRequest::response_schema`] to the model (native
    /// structured output) rather than ignoring it. Default: `false`.
    fn supports_response_schema(&self) -> bool {
        false
    }
}

/// Reads a stream to its [`StreamEvent::Done`] and returns that answer: what
/// [`LlmProvider::complete`] does by default.
pub async fn final_response(mut stream: EventStream) -> Result<ChatResponse, ProviderError> {
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
