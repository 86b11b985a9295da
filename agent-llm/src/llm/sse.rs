//! Server-sent events from a streaming HTTP response, with a time limit on silence and a bound on
//! each event's size checked as its bytes arrive ([`crate::sse`]).

use std::time::Duration;

use eventsource_stream::Event;
use futures::{Stream, StreamExt};

use super::ProviderError;
use crate::sse::{SseError, SseLimits};

/// The largest event a provider's stream may send: an answer's delta is far smaller.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// The events of `response`. A gap longer than `idle` between two chunks, an event over 16 MiB,
/// a broken connection or malformed bytes end the stream with a [`ProviderError::Stream`].
pub(crate) fn events(
    response: reqwest::Response,
    idle: Duration,
    provider: &'static str,
) -> impl Stream<Item = Result<Event, ProviderError>> + Send + 'static {
    let limits = SseLimits {
        max_event_bytes: MAX_EVENT_BYTES,
        idle: Some(idle),
        deadline: None,
        max_stream_bytes: None,
    };
    crate::sse::events(response.bytes_stream(), limits).map(move |event| {
        let event = event.map_err(|error| ProviderError::Stream {
            provider: provider.into(),
            error_type: None,
            message: match error {
                SseError::Idle(_) => format!("no data for {idle:?}; the connection stalled"),
                other => other.to_string(),
            },
        })?;
        tracing::trace!(
            target: super::WIRE,
            provider,
            event = %event.event,
            data = %super::http::clip(&event.data, 4000),
            "server-sent event"
        );
        Ok(Event {
            event: event.event,
            data: event.data,
            id: event.id.unwrap_or_default(),
            retry: None,
        })
    })
}
