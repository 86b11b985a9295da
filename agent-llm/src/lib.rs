//! The conversation and the models of the eugene agent framework: the provider-neutral
//! [`Message`] types ([`message`]), the [`LlmProvider`] trait, the Anthropic, OpenAI-compatible,
//! OpenAI Responses and Gemini providers with their wire codecs (feature `http`, default), the
//! scripted [`MockProvider`], recorded model traffic for your own tests (module `cassette`, feature
//! `cassette`), and recorded-traffic replay for this crate's tests (feature `test-utils`).
//!
//! # What it owns, and what it must not depend on
//!
//! | module | central type | what it is for |
//! |---|---|---|
//! | [`message`] | [`Message`], [`ChatRequest`], [`ChatResponse`] | the provider-neutral conversation |
//! | [`llm`] | [`LlmProvider`] | Anthropic, OpenAI-compatible, OpenAI Responses, Gemini and scripted models, whole and streamed |
//! | `llm/failover` (feature `http`), `llm/breaker.rs`, `llm/error_class.rs` | `Failover`, [`CircuitBreaker`], [`ErrorClass`] | several providers asked in order as one, moving on as each failure's class says, skipping one that keeps failing |
//! | `llm/media.rs` (feature `http`) | `MediaRules` | what media each wire format takes; every request's parts checked before it is sent; base64 written once into the body |
//! | [`model_use`] | [`ModelUseReporter`] | a skill that asks a model on the run's behalf counts it in the run ([`report_model_use`]) |
//! | `cassette` (feature `cassette`) | `Cassette` | record real exchanges once (secrets redacted), replay them offline in tests |
//!
//! It depends on `agent-core` (tool calls, tool definitions, retries) and, with `http`, on
//! `agent-tls` for the TLS settings. It must not depend on `agent-runtime`: the agent loop uses
//! the providers, never the other way round, so an edit to the loop does not rebuild them.
//!
//! # Dependencies, and why
//!
//! `serde`/`serde_json` (messages and wire formats), `async-trait` (the object-safe
//! [`LlmProvider`]), `futures` and `tokio` (streams, timers), `thiserror` ([`ProviderError`]).
//! Feature `http` (default) adds the HTTP providers and what only they use: `reqwest` (the HTTP
//! client; the version rmcp uses, so a build with MCP has one HTTP stack), `rustls` with its
//! `ring` provider checked against the system's certificates (through `agent-tls`, no system
//! TLS library), `eventsource-stream` (the server-sent-events parser of the streaming APIs),
//! `async-stream` (the provider streams written as plain loops), `bytes` (request bodies shared
//! across retries), `fastrand` (retry jitter, and the nonce of a body's media markers), `base64`
//! (media as the wire formats carry it). Without `http` the crate compiles no HTTP or TLS
//! crate. Feature `cassette` (off by default; implies `http`) adds what only the cassettes use:
//! `serde_yaml_ng` (the YAML of vcrpy's cassettes; the maintained fork of `serde_yaml`, whose
//! repetition and recursion limits keep an alias bomb or a deep nesting from exhausting memory
//! or the stack), `hyper` with `hyper-util` and `http-body-util` (the loopback replay server and
//! recording proxy, HTTP/1 on tokio's sockets, with bodies that stream and can break off; all
//! three already in the workspace's graph through `agent-serve`), and `tempfile` (a cassette is
//! written beside its place and renamed into it, so it is never half written).

#![warn(missing_docs)]

#[cfg(feature = "cassette")]
pub mod cassette;
pub mod llm;
pub mod message;
pub mod model_use;
pub mod price;
#[cfg(feature = "http")]
pub mod sse;
pub mod usage;
pub mod yaml_bounds;

#[cfg(feature = "http")]
pub use llm::{
    AnthropicProvider, AnthropicWire, CacheControl, Failover, GeminiProvider, GeminiWire,
    HttpOptions, HttpProvider, MediaRules, OpenAiProvider, OpenAiWire, SseDecoder, WireCodec,
};
pub use llm::{
    BreakerPolicy, BreakerState, CircuitBreaker, ErrorClass, EventStream, LlmProvider,
    MockProvider, MockReply, Permit, ProviderError, RecordedRequest, StreamEvent, WIRE, all_events,
    answer_of,
};
#[cfg(feature = "http")]
pub use llm::{OpenAiResponsesProvider, OpenAiResponsesWire, ResponsesState};
#[cfg(all(feature = "http", feature = "test-utils"))]
pub use llm::{WireFormat, decode_recorded_stream, replay_recorded_stream};
pub use message::{
    ChatRequest, ChatResponse, Effort, Message, PartRef, ProviderItem, ResponseSchema, Role,
    StopReason, Thinking, ThinkingConfig, ToolChoice, TruncatedToolCall, Usage,
};
pub use model_use::{ModelUseFn, ModelUseReporter, report_model_use};
pub use price::{Cost, ModelPrice, PriceTable, PriceTableError, Rate, Usd};
