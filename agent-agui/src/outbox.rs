//! The bounded buffer between a run and its event stream. The run writes into it without ever
//! waiting (its sink is called on the run's own task), the response reads from it as fast as the
//! client reads.
//!
//! A client that reads more slowly than the run writes first gets fewer, larger events: while
//! unread, a piece of streamed text (`TEXT_MESSAGE_CONTENT`), reasoning
//! (`REASONING_MESSAGE_CONTENT`) or a call's arguments (`TOOL_CALL_ARGS`) is joined to the piece
//! of the same message or call buffered just before it, and a `STATE_SNAPSHOT` replaces the one
//! just before it. What the client assembles is the same; only the number of events differs.
//!
//! A client that falls behind by more than the bound all the same — [`BufferLimits::events`]
//! events or [`BufferLimits::bytes`] bytes of them, buffered — has its stream **cut**: what was
//! buffered is dropped, nothing more is written to it, and its response ends with an error (so
//! the client sees a broken stream, never a `RUN_FINISHED` it did not get). The run itself goes
//! on, is not slowed, and its outcome is kept in the thread.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::Notify;

/// How far a client's stream may fall behind its run before it is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferLimits {
    /// Events buffered at most.
    pub events: usize,
    /// Bytes of events (as sent) buffered at most.
    pub bytes: usize,
}

impl Default for BufferLimits {
    /// 4,096 events and 8 MiB.
    fn default() -> Self {
        BufferLimits {
            events: 4096,
            bytes: 8 * 1024 * 1024,
        }
    }
}

/// The run's side: events go in, never waiting.
pub(crate) struct Outbox {
    shared: Arc<Shared>,
}

/// The stream's side.
pub(crate) struct Inbox {
    shared: Arc<Shared>,
}

struct Shared {
    limits: BufferLimits,
    state: Mutex<State>,
    /// Wakes the reader: an event, the end, or the cut.
    ready: Notify,
}

/// One event buffered.
enum Item {
    /// Written out as JSON text.
    Written(String),
    /// Kept as a JSON value while it may be joined to (a piece, a snapshot), with its size as
    /// sent.
    Open(Value, usize),
}

impl Item {
    /// Its size as sent: its JSON and the 8 bytes of its SSE frame.
    fn len(&self) -> usize {
        match self {
            Item::Written(text) => text.len() + FRAME,
            Item::Open(_, len) => *len,
        }
    }
}

/// What an event's SSE frame adds to its JSON: `data: `, and the blank line after it.
const FRAME: usize = 8;

#[derive(Default)]
struct State {
    queue: VecDeque<Item>,
    /// The bytes of the events buffered, as sent.
    bytes: usize,
    closed: bool,
    cut: bool,
    /// The reader went away: nothing more is kept.
    gone: bool,
}

/// A buffer with these limits, as its two sides.
pub(crate) fn buffer(limits: BufferLimits) -> (Outbox, Inbox) {
    let shared = Arc::new(Shared {
        limits,
        state: Mutex::new(State::default()),
        ready: Notify::new(),
    });
    (
        Outbox {
            shared: shared.clone(),
        },
        Inbox { shared },
    )
}

/// The bytes `value` takes as sent, without writing it: its JSON and its frame's.
fn size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(FRAME);
    // Writing a `Value` to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Whether `event` may be joined to, or join, another: a piece of a message or a call, or a
/// state snapshot.
fn joinable(event: &Value) -> bool {
    matches!(
        event["type"].as_str(),
        Some(
            "TEXT_MESSAGE_CONTENT"
                | "REASONING_MESSAGE_CONTENT"
                | "TOOL_CALL_ARGS"
                | "STATE_SNAPSHOT"
        )
    )
}

/// Whether `later` joins `earlier` (both unread, both [`joinable`]): pieces of the same message
/// or call, or two state snapshots.
fn joins(earlier: &Value, later: &Value) -> bool {
    earlier["type"] == later["type"]
        && earlier["subagentRunId"] == later["subagentRunId"]
        && earlier["messageId"] == later["messageId"]
        && earlier["toolCallId"] == later["toolCallId"]
}

impl Outbox {
    /// Buffers `event` (joined to the one before when it may be); past a bound, cuts the stream
    /// instead.
    pub(crate) fn push(&self, event: Value) {
        let limits = self.shared.limits;
        let mut state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.closed || state.cut || state.gone {
            return;
        }
        if !joinable(&event) {
            let item = Item::Written(event.to_string());
            state.bytes += item.len();
            state.queue.push_back(item);
        } else if let Some(Item::Open(last, len)) = state.queue.back_mut()
            && joins(last, &event)
        {
            let (before, after) = match (last.get_mut("delta"), event["delta"].as_str()) {
                (Some(Value::String(joined)), Some(piece)) => {
                    joined.push_str(piece);
                    // The piece as it is written in JSON, without its quotes.
                    let added = size(&Value::from(piece)) - FRAME - 2;
                    (*len, *len + added)
                }
                _ => {
                    let replaced = size(&event);
                    *last = event;
                    (*len, replaced)
                }
            };
            *len = after;
            state.bytes = state.bytes - before + after;
        } else {
            let len = size(&event);
            state.bytes += len;
            state.queue.push_back(Item::Open(event, len));
        }
        if state.queue.len() > limits.events || state.bytes > limits.bytes {
            state.queue.clear();
            state.bytes = 0;
            state.cut = true;
            tracing::warn!("an AG-UI client fell behind its run: its stream is cut");
        }
        drop(state);
        self.shared.ready.notify_one();
    }

    /// Ends the stream after what is buffered.
    pub(crate) fn close(&self) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .closed = true;
        self.shared.ready.notify_one();
    }
}

impl Drop for Outbox {
    /// A run that stops writing without closing (its task was dropped) ends the stream all the
    /// same, so a reader is never left waiting.
    fn drop(&mut self) {
        self.close();
    }
}

impl Inbox {
    /// The next event, as JSON text: `Ok(None)` at the end, `Err` once the stream was cut.
    pub(crate) async fn next(&mut self) -> Result<Option<String>, StreamCut> {
        loop {
            let item = {
                let mut state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
                if state.cut {
                    return Err(StreamCut);
                }
                let item = state.queue.pop_front();
                if let Some(item) = &item {
                    state.bytes = state.bytes.saturating_sub(item.len());
                } else if state.closed {
                    return Ok(None);
                }
                item
            };
            // Written out here, on the reader's task, with the run free to go on.
            match item {
                Some(Item::Written(text)) => return Ok(Some(text)),
                Some(Item::Open(event, _)) => return Ok(Some(event.to_string())),
                None => self.shared.ready.notified().await,
            }
        }
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        let mut state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        state.gone = true;
        state.queue.clear();
    }
}

/// The stream fell behind its run by more than its [`BufferLimits`] and was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the client fell behind the run by more than the server buffers: the stream was cut")]
pub struct StreamCut;
