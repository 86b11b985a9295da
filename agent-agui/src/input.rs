//! What a request asks for: an AG-UI `RunAgentInput` read into a request — the thread, the
//! run's id, and either the person's next message or decisions for the thread's pause.
//!
//! The thread's conversation is kept on the server, so of the `messages` a client sends (AG-UI
//! clients send the whole history each time) only the last one, which must be the user's, is
//! read: its text (a string, or the `text` parts of an array) is the run's goal. `state`,
//! `tools`, `context` and `forwardedProps` are accepted and not used. A request with `resume`
//! entries continues the thread's paused run with the decisions they make
//! ([`crate::interrupt`]), and its messages are not read.

use serde::Deserialize;
use serde_json::Value;

use agent_core::pending::{CallRef, Decision};

use crate::interrupt::{self, ResumeEntry};

/// The longest `threadId` and `runId` accepted, in bytes.
pub const MAX_ID_BYTES: usize = 256;

/// `RunAgentInput`, the fields read.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunAgentInput {
    thread_id: String,
    run_id: String,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    resume: Option<Vec<ResumeEntry>>,
}

/// What a run starts from.
#[derive(Debug)]
pub(crate) enum Start {
    /// The person's next message.
    Goal(String),
    /// Decisions for the thread's paused run.
    Decide(Vec<(CallRef, Decision)>),
}

/// A request, read.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) thread_id: String,
    pub(crate) run_id: String,
    /// What to start from, or why the request cannot start a run (sent as `RUN_ERROR`).
    pub(crate) start: Result<Start, String>,
    /// For decisions, what identifies them as an answer ([`interrupt::fingerprint`]).
    pub(crate) answer: Option<String>,
}

/// Reads `body`; an error (the body is not a `RunAgentInput`, an id too long) is answered
/// `400` before any stream starts.
pub(crate) fn read(body: &[u8]) -> Result<Request, String> {
    let input: RunAgentInput = serde_json::from_slice(body)
        .map_err(|error| format!("the body is not an AG-UI RunAgentInput: {error}"))?;
    for (name, id) in [("threadId", &input.thread_id), ("runId", &input.run_id)] {
        if id.is_empty() || id.len() > MAX_ID_BYTES {
            return Err(format!(
                "`{name}` must have 1 to {MAX_ID_BYTES} bytes, not {}",
                id.len()
            ));
        }
    }
    let (start, answer) = match &input.resume {
        Some(entries) if !entries.is_empty() => {
            let start = interrupt::decisions(entries).map(Start::Decide);
            let answer = start.is_ok().then(|| interrupt::fingerprint(entries));
            (start, answer)
        }
        _ => (goal(&input.messages).map(Start::Goal), None),
    };
    Ok(Request {
        thread_id: input.thread_id,
        run_id: input.run_id,
        start,
        answer,
    })
}

/// The text of the last message, which must be the user's.
fn goal(messages: &[Value]) -> Result<String, String> {
    let Some(last) = messages.last() else {
        return Err("the request has no messages and no resume: nothing to run".into());
    };
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return Err("the last message is not the user's: nothing to run".into());
    }
    let text = match last.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if text.trim().is_empty() {
        return Err("the user's message has no text".into());
    }
    Ok(text)
}
