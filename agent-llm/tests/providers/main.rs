//! Providers against a real HTTP server on loopback: recorded wire traffic replayed byte for byte,
//! quirks of compatible servers, exact request bodies, and faults (retries, broken streams, stalls).

mod anthropic;
mod cache_cost;
mod failover;
mod faults;
mod gemini;
mod gemini_answers;
mod gemini_faults;
mod gemini_schema;
mod gemini_wire;
mod media;
mod mock;
mod openai;
mod prompt_cache;
mod responses;
mod responses_faults;
mod responses_turns;
mod responses_wire;
mod thinking;
mod tls;

use test_support::server;

use agent_llm::StreamEvent;

/// Every event of a stream, and the error that ended it, if any.
pub use agent_llm::all_events as drain;

/// The final response of a drained stream.
pub fn done(events: &[StreamEvent]) -> &agent_llm::ChatResponse {
    agent_llm::answer_of(events).expect("the stream ends with Done")
}

/// The retries a stream announced: each one's attempt and wait.
pub fn retries(events: &[StreamEvent]) -> Vec<(u32, std::time::Duration)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retry { attempt, delay, .. } => Some((*attempt, *delay)),
            _ => None,
        })
        .collect()
}
