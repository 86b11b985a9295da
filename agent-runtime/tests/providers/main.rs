//! The agent loop against providers talking to a real HTTP server on loopback: local
//! OpenAI-compatible servers' quirks through whole runs, and typed runs in each output mode over
//! both wire formats.

mod openai_local;
mod typed;

use test_support::server;

use agent_llm::{ChatResponse, EventStream, ProviderError, StreamEvent};
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
pub fn done(events: &[StreamEvent]) -> &ChatResponse {
    match events.last() {
        Some(StreamEvent::Done(response)) => response,
        other => panic!("the stream did not end with Done: {other:?}"),
    }
}
