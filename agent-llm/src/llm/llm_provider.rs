//! What a model provider is: the [`LlmProvider`] trait, the [`StreamEvent`]s of a streamed
//! answer and [`final_response`], which collects them. See [`super`] for the providers.

use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

use super::ProviderError;
use crate::message::{ChatRequest, ChatResponse, Usage};
use agent_core::call::ToolCall;

/// The events of a streamed answer. Text and tool calls arrive in pieces; the stream ends with
/// [`StreamEvent::Done`], which carries the whole answer.
// `Done` is the one large event, sent once at the end of a stream: boxing it would cost every
// stream an allocation to save a few bytes on the deltas.
#[allow(clippy::large_enum_variant)]
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

/// A model behind an API. See the [module docs](super).
#[async_trait]
pub trait LlmProvider: Send + Sync {
    /// A short name for logs and spans (`anthropic`, `openai`, `mock`).
    fn name(&self) -> &str;

    /// The model requests go to (`claude-sonnet-4-5`, `gpt-4.1`), when the provider knows it
    /// before asking: for spans (`gen_ai.request.model`) and for pricing a call before it is
    /// made. Default: `None`.
    fn model(&self) -> Option<&str> {
        None
    }

    /// The model's whole answer. The default collects [`LlmProvider::stream`].
    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        final_response(self.stream(request)).await
    }

    /// The model's answer as it is generated. The request is encoded before this returns, so the
    /// stream does not borrow it.
    fn stream(&self, request: &ChatRequest<'_>) -> EventStream;

    /// The model's whole answer, not streamed, as events: a [`StreamEvent::Retry`] for each
    /// failed attempt that another follows, as it happens, then [`StreamEvent::Done`]. What a
    /// runtime that does not stream reads, so that its retries are seen too
    /// (`AgentEvent::Retry`). The default answers [`LlmProvider::complete`] with one `Done`; the
    /// HTTP providers announce each retry.
    fn complete_events<'a>(
        &'a self,
        request: &'a ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        Box::pin(futures::stream::once(async move {
            self.complete(request).await.map(StreamEvent::Done)
        }))
    }

    /// Whether the model can call tools. Typed runs (agent-runtime's `OutputMode::Auto`)
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

/// Reads a stream to its end: every event in order, and the error that ended it, if any. For code
/// that wants the deltas as well as the answer; the answer is the last event when the stream
/// completed ([`answer_of`]).
pub async fn all_events(
    mut stream: BoxStream<'_, Result<StreamEvent, ProviderError>>,
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

/// The answer a stream's events end with ([`StreamEvent::Done`]), if they end with one.
pub fn answer_of(events: &[StreamEvent]) -> Option<&ChatResponse> {
    match events.last() {
        Some(StreamEvent::Done(response)) => Some(response),
        _ => None,
    }
}

/// Reads a stream to its [`StreamEvent::Done`] and returns that answer: what
/// [`LlmProvider::complete`] does by default.
pub async fn final_response(
    mut stream: BoxStream<'_, Result<StreamEvent, ProviderError>>,
) -> Result<ChatResponse, ProviderError> {
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
