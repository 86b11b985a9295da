//! The streaming pipeline every wire format shares: send the request (retrying transient
//! failures, each announced), read the server-sent events with a limit on silence, and turn them
//! into [`StreamEvent`]s with the format's [`SseDecoder`], ending with [`StreamEvent::Done`].

use futures::StreamExt;

use super::http::Sent;
use super::{EventStream, ProviderError, StreamEvent};
use crate::message::ChatResponse;

/// Decodes the server-sent events of one streamed answer: a pure state machine, no I/O. Each wire
/// format has one ([`WireCodec::Decoder`](super::WireCodec::Decoder)).
pub trait SseDecoder: Send + 'static {
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
    http: Result<std::sync::Arc<super::http::Http>, ProviderError>,
    url: String,
    body: bytes::Bytes,
    decoder: D,
    final_error: impl Fn(&ProviderError) -> bool + Send + 'static,
) -> EventStream {
    Box::pin(async_stream::try_stream! {
        let http = http?;
        let mut sent = Box::pin(http.clone().send(url, body, final_error));
        let mut answer = None;
        while let Some(step) = sent.next().await {
            match step? {
                Sent::Retry(event) => yield event,
                Sent::Answer(response) => answer = Some(response),
            }
        }
        let Some(response) = answer else {
            Err(ProviderError::Stream {
                provider: http.provider.into(),
                error_type: None,
                message: "the request ended without an answer".into(),
            })?;
            return;
        };
        let events = super::sse::events(response, http.options.idle_timeout, http.provider);
        let mut decoded = Box::pin(decode(events, decoder));
        while let Some(event) = decoded.next().await {
            yield event?;
        }
    })
}

/// Turns server-sent events into [`StreamEvent`]s with `decoder`, ending with [`StreamEvent::Done`].
pub(crate) fn decode<D: SseDecoder>(
    events: impl futures::Stream<Item = Result<eventsource_stream::Event, ProviderError>>
    + Send
    + 'static,
    mut decoder: D,
) -> impl futures::Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
    async_stream::try_stream! {
        let mut events = Box::pin(events);
        let mut finished: Vec<agent_core::SharedStr> = Vec::new();
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
