//! Server-sent events from a streaming HTTP response, with a time limit on silence. Parsing is the
//! `eventsource-stream` crate's.

use std::time::Duration;

use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};

use super::ProviderError;

/// The events of `response`. A gap longer than `idle` between two events, a broken connection or
/// malformed bytes end the stream with a [`ProviderError::Stream`].
pub(crate) fn events(
    response: reqwest::Response,
    idle: Duration,
    provider: &'static str,
) -> impl Stream<Item = Result<Event, ProviderError>> + Send + 'static {
    let inner = response.bytes_stream().eventsource();
    futures::stream::unfold(Some(Box::pin(inner)), move |state| async move {
        let mut inner = state?;
        let failure = |message: String| ProviderError::Stream {
            provider: provider.into(),
            error_type: None,
            message,
        };
        match tokio::time::timeout(idle, inner.next()).await {
            Err(_) => Some((
                Err(failure(format!(
                    "no data for {idle:?}; the connection stalled"
                ))),
                None,
            )),
            Ok(None) => None,
            Ok(Some(Ok(event))) => {
                tracing::trace!(
                    target: super::WIRE,
                    provider,
                    event = %event.event,
                    data = %super::http::clip(&event.data, 4000),
                    "server-sent event"
                );
                Some((Ok(event), Some(inner)))
            }
            Ok(Some(Err(error))) => {
                Some((Err(failure(format!("the connection broke: {error}"))), None))
            }
        }
    })
}
