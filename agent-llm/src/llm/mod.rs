//! Model providers: the [`LlmProvider`] trait and its implementations — the Anthropic Messages API
//! ([`AnthropicProvider`]), any OpenAI-compatible Chat Completions server ([`OpenAiProvider`]:
//! OpenAI, DeepSeek, Ollama, vLLM, llama.cpp), OpenAI's Responses API
//! ([`OpenAiResponsesProvider`]), Google's Gemini API ([`GeminiProvider`]) and a scripted
//! [`MockProvider`] for tests.
//!
//! A provider turns a provider-neutral [`ChatRequest`](crate::ChatRequest) into its wire format
//! and its answer back into a [`ChatResponse`](crate::ChatResponse), either whole
//! ([`LlmProvider::complete`]) or as a stream of [`StreamEvent`]s ([`LlmProvider::stream`]) that
//! ends with [`StreamEvent::Done`].
//!
//! # Errors and retries
//!
//! Failures are [`ProviderError`]s that keep the provider's own `error.type` and message.
//! Transient ones — HTTP 429 (unless it is a spending cap without `retry-after`), 500, 502, 503,
//! 504, 529 / `overloaded_error`, a connection that failed or was reset, a timeout before the
//! first byte — are retried with exponential backoff and jitter, honouring `retry-after` (never
//! longer than the policy's `max_delay`), up to [`HttpOptions::retry`]. A request whose
//! [`wait_when_busy`](crate::ChatRequest::wait_when_busy) is off returns a busy API's error at
//! once instead. [`ErrorClass`] says what a failure means for what to do next, and
//! [`Failover`] asks several providers in order as one (with a [`CircuitBreaker`] each). Each retry is announced with [`StreamEvent::Retry`], streamed or whole
//! ([`LlmProvider::complete_events`]), and is a `tracing` warning; [`WIRE`] is the target that
//! shows the requests and responses themselves.
//! A stream that already delivered events is never replayed: a failure mid-stream is an error.
//!
//! ```no_run
//! use agent_llm::{AnthropicProvider, ChatRequest, LlmProvider, Message};
//!
//! # async fn run() -> Result<(), agent_llm::ProviderError> {
//! let provider = AnthropicProvider::new(std::env::var("ANTHROPIC_API_KEY").unwrap(), "claude-sonnet-4-5");
//! let transcript = [Message::user("Say hello.")];
//! let response = provider.complete(&ChatRequest::new(&transcript)).await?;
//! println!("{}", response.message.content);
//! # Ok(()) }
//! ```

#[cfg(feature = "http")]
mod anthropic;
mod breaker;
mod error;
mod error_class;
#[cfg(feature = "http")]
mod failover;
#[cfg(feature = "http")]
mod gemini;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "cassette")]
pub(crate) use http::error_chain;
mod llm_provider;
#[cfg(feature = "http")]
mod media;
mod mock;
#[cfg(feature = "http")]
mod openai;
#[cfg(feature = "http")]
mod provider;
#[cfg(all(feature = "http", feature = "test-utils"))]
mod recorded;
#[cfg(feature = "http")]
mod responses;
#[cfg(feature = "http")]
mod sse;
#[cfg(feature = "http")]
mod stream;
#[cfg(feature = "http")]
mod wire;

/// The TLS settings of the providers' HTTP client (the `agent-tls` crate's).
#[cfg(feature = "http")]
pub use agent_tls::tls_config;

/// The `tracing` target of the HTTP providers' wire: each request (URL with keys redacted, size)
/// and response (status, time) at `debug`, their headers (secrets redacted) and bodies (clipped
/// to 4,000 characters) and each server-sent event at `trace`. Retries are warnings of this
/// crate's own target. `RUST_LOG=agent_llm::wire=trace` with a `tracing` subscriber shows it all;
/// `eugene -v` / `-vv` turns it on.
pub const WIRE: &str = "agent_llm::wire";
#[cfg(feature = "http")]
pub use anthropic::{AnthropicProvider, AnthropicWire, CacheControl};
pub use breaker::{BreakerPolicy, BreakerState, CircuitBreaker, Permit};
pub use error::ProviderError;
pub use error_class::ErrorClass;
#[cfg(feature = "http")]
pub use failover::Failover;
#[cfg(feature = "http")]
pub use gemini::{GeminiProvider, GeminiWire};
#[cfg(feature = "http")]
pub use http::HttpOptions;
pub use llm_provider::{
    EventStream, LlmProvider, StreamEvent, all_events, answer_of, final_response,
};
#[cfg(feature = "http")]
pub use media::MediaRules;
pub use mock::{MockProvider, MockReply, RecordedRequest};
#[cfg(feature = "http")]
pub use openai::{OpenAiProvider, OpenAiWire};
#[cfg(feature = "http")]
pub use provider::{HttpProvider, WireCodec};
#[cfg(all(feature = "http", feature = "test-utils"))]
pub use recorded::{WireFormat, decode_recorded_stream, replay_recorded_stream};
#[cfg(feature = "http")]
pub use responses::{OpenAiResponsesProvider, OpenAiResponsesWire, ResponsesState};
#[cfg(feature = "http")]
pub use stream::SseDecoder;
