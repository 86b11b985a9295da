//! The agent loop against providers talking to a real HTTP server on loopback: local
//! OpenAI-compatible servers' quirks through whole runs, typed runs in each output mode over
//! each wire format, and runs over the Responses API and Gemini paused and continued.

mod failover;
mod gemini;
mod openai_local;
mod responses;
mod ticket;
mod typed;
mod typed_stream;

use test_support::server;

use agent_llm::{ChatResponse, StreamEvent};

/// Every event of a stream, and the error that ended it, if any.
pub use agent_llm::all_events as drain;

/// The final response of a drained stream.
pub fn done(events: &[StreamEvent]) -> &ChatResponse {
    agent_llm::answer_of(events).expect("the stream ends with Done")
}
