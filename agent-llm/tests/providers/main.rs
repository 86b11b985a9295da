//! Providers against a real HTTP server on loopback: recorded wire traffic replayed byte for byte,
//! quirks of compatible servers, exact request bodies, and faults (retries, broken streams, stalls).

mod anthropic;
mod faults;
mod mock;
mod openai;
mod thinking;
mod tls;

use test_support::server;

use agent_llm::{EventStream, ProviderError, StreamEvent};
use futures::StreamExt;

/// Every event of a stream, and the error that ended it, if any.
pub async fn drain(mut stream: EventStream) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

/// The final response of a drained stream.
pub fn done(events: &[StreamEvent]) -> &agent_llm::ChatResponse {
    match events.last() {
        Some(StreamEvent::Done(response)) => response,
        other => panic!("the stream did not end with Done: {other:?}"),
    }
}
