//! The server's tasks: each one's A2A [`Task`], what its run is doing ([`Phase`]), and the
//! broadcast its live events go out on; the conversations (transcripts) of contexts; and the
//! bound on how many of both are kept.
//!
//! Every change to a task goes through [`TaskSlot::publish`], which applies the event to the
//! task and broadcasts it under the task's lock, and every subscriber takes its snapshot and its
//! receiver under the same lock ([`TaskSlot::subscribe`]): a stream never misses an event
//! between the snapshot it starts with and the live events after it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use agent_runtime::{PendingCall, RunState};

use crate::jsonrpc::{INTERNAL_ERROR, RpcError};
use crate::types::{Artifact, StreamResponse, Task, TaskState, TaskStatus};

/// How many events a slow subscriber may fall behind before it skips to the task's current
/// state.
const EVENT_BUFFER: usize = 512;

/// What a task's run is doing.
pub(crate) enum Phase {
    /// Running; the token stops it.
    Running { cancel: CancellationToken },
    /// Paused for decisions on these calls; the state continues it.
    Paused {
        state: Box<RunState>,
        pending: Vec<PendingCall>,
    },
    /// Ended (terminal state).
    Done,
}

/// A task and what goes with it, under one lock.
pub(crate) struct TaskData {
    pub(crate) task: Task,
    pub(crate) phase: Phase,
}

/// One task of the server.
pub(crate) struct TaskSlot {
    data: Mutex<TaskData>,
    events: broadcast::Sender<StreamResponse>,
}

impl TaskSlot {
    /// The task's data, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, TaskData> {
        self.data.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies `event` to the task and sends it to every subscriber; call with the lock held.
    pub(crate) fn publish(&self, data: &mut TaskData, event: StreamResponse) {
        apply(&mut data.task, &event);
        let _ = self.events.send(event);
    }

    /// The task as it is now and a receiver of every event after it.
    pub(crate) fn subscribe(&self) -> (Task, broadcast::Receiver<StreamResponse>) {
        let data = self.lock();
        (data.task.clone(), self.events.subscribe())
    }

    /// A receiver of every event from now on; call with the lock held to see every event after
    /// what the lock shows.
    pub(crate) fn events_receiver(&self) -> broadcast::Receiver<StreamResponse> {
        self.events.subscribe()
    }

    /// The task as it is now.
    pub(crate) fn snapshot(&self) -> Task {
        self.lock().task.clone()
    }
}

/// Applies a stream event to a task, as a client aggregating a stream does: a status replaces the
/// status (and an agent message of a state that ends the stream joins the history), an artifact
/// piece is added to the artifact of its id or replaces it.
pub fn apply(task: &mut Task, event: &StreamResponse) {
    match event {
        StreamResponse::Task(new) => *task = new.clone(),
        StreamResponse::Message(message) => task.history.push(message.clone()),
        StreamResponse::StatusUpdate(update) => {
            if update.status.state.ends_stream()
                && let Some(message) = &update.status.message
            {
                task.history.push(message.clone());
            }
            task.status = update.status.clone();
        }
        StreamResponse::ArtifactUpdate(update) => {
            let existing = task
                .artifacts
                .iter_mut()
                .find(|a| a.artifact_id == update.artifact.artifact_id);
            match existing {
                Some(artifact) if update.append => append_parts(artifact, &update.artifact),
                Some(artifact) => *artifact = update.artifact.clone(),
                None => task.artifacts.push(update.artifact.clone()),
            }
        }
    }
}

/// Adds `piece`'s parts to `artifact`, joining text to a text part at its end.
fn append_parts(artifact: &mut Artifact, piece: &Artifact) {
    for part in &piece.parts {
        match (artifact.parts.last_mut(), &part.text) {
            (Some(last), Some(text)) if last.text.is_some() && last.data.is_none() => {
                last.text.get_or_insert_default().push_str(text);
            }
            _ => artifact.parts.push(part.clone()),
        }
    }
}

/// The most messages one context's conversation may hold.
pub const MAX_CONTEXT_MESSAGES: usize = 1_000;

/// The most bytes (the messages' text, media and calls) one context's conversation may hold.
pub const MAX_CONTEXT_BYTES: usize = 16 * 1024 * 1024;

/// The most bytes the kept conversations of all contexts may hold together; past it the least
/// recently saved are forgotten.
pub const MAX_CONVERSATION_BYTES: usize = 128 * 1024 * 1024;

/// The most bytes the messages that started the kept tasks may hold together; past it the
/// oldest tasks that are not running are forgotten.
pub const MAX_TASK_BYTES: usize = 128 * 1024 * 1024;

/// The tasks and conversations of one server, at most `max` of each.
pub(crate) struct TaskStore {
    inner: Mutex<Inner>,
    max: usize,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, (Arc<TaskSlot>, usize)>,
    /// Task ids, oldest first.
    order: VecDeque<String>,
    /// The bytes of the messages that started the kept tasks.
    task_bytes: usize,
    /// Each context's conversation, as its last finished run left it, and its bytes.
    contexts: HashMap<String, (Vec<agent_llm::Message>, usize)>,
    /// Context ids, least recently saved first.
    context_order: VecDeque<String>,
    /// The bytes of all kept conversations.
    context_bytes: usize,
}

/// The bytes a conversation holds: its messages' text, media and calls.
pub(crate) fn transcript_bytes(transcript: &[agent_llm::Message]) -> usize {
    transcript
        .iter()
        .map(|m| {
            m.content.len()
                + m.parts
                    .iter()
                    .map(|part| match part {
                        agent_core::content::Part::Text(text) => text.len(),
                        agent_core::content::Part::Media(media) => media.len(),
                    })
                    .sum::<usize>()
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.to_string().len())
                    .sum::<usize>()
        })
        .sum()
}

/// Whether a conversation of `messages` messages and `bytes` bytes is within a context's bounds;
/// `Err` says which it passes.
pub(crate) fn within_context_bounds(messages: usize, bytes: usize) -> Result<(), String> {
    if messages > MAX_CONTEXT_MESSAGES {
        return Err(format!(
            "the conversation holds {messages} messages, more than the {MAX_CONTEXT_MESSAGES} \
             a context may: start a new context"
        ));
    }
    if bytes > MAX_CONTEXT_BYTES {
        return Err(format!(
            "the conversation holds {bytes} bytes, more than the {MAX_CONTEXT_BYTES} a context \
             may: start a new context"
        ));
    }
    Ok(())
}

impl TaskStore {
    pub(crate) fn new(max: usize) -> Self {
        TaskStore {
            inner: Mutex::new(Inner::default()),
            max,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task with this id.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<TaskSlot>> {
        self.lock().tasks.get(id).map(|(slot, _)| slot.clone())
    }

    /// Every task, newest first.
    pub(crate) fn all(&self) -> Vec<Arc<TaskSlot>> {
        let inner = self.lock();
        inner
            .order
            .iter()
            .rev()
            .filter_map(|id| inner.tasks.get(id).map(|(slot, _)| slot.clone()))
            .collect()
    }

    /// Keeps a new task (in `phase`), forgetting the oldest tasks that are not running while
    /// the store is full (in count, or in the bytes of the messages that started them, `bytes`
    /// for this one); refused when every kept task is running.
    pub(crate) fn insert(
        &self,
        task: Task,
        phase: Phase,
        bytes: usize,
    ) -> Result<Arc<TaskSlot>, RpcError> {
        let mut inner = self.lock();
        while inner.order.len() >= self.max
            || (inner.task_bytes + bytes > MAX_TASK_BYTES && !inner.order.is_empty())
        {
            let idle = inner.order.iter().position(|id| {
                inner
                    .tasks
                    .get(id)
                    .is_none_or(|(slot, _)| !matches!(slot.lock().phase, Phase::Running { .. }))
            });
            let Some(index) = idle else {
                return Err(RpcError::new(
                    INTERNAL_ERROR,
                    format!(
                        "the agent is busy: it keeps at most {} tasks ({MAX_TASK_BYTES} bytes of \
                         messages) and all of them are running; try again later",
                        self.max
                    ),
                ));
            };
            if let Some(id) = inner.order.remove(index)
                && let Some((_, freed)) = inner.tasks.remove(&id)
            {
                inner.task_bytes -= freed;
            }
        }
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let id = task.id.clone();
        let slot = Arc::new(TaskSlot {
            data: Mutex::new(TaskData { task, phase }),
            events,
        });
        inner.tasks.insert(id.clone(), (slot.clone(), bytes));
        inner.task_bytes += bytes;
        inner.order.push_back(id);
        Ok(slot)
    }

    /// The conversation of a context, if a run in it finished and it is still kept.
    pub(crate) fn conversation(&self, context_id: &str) -> Option<Vec<agent_llm::Message>> {
        self.lock().contexts.get(context_id).map(|(t, _)| t.clone())
    }

    /// Keeps a context's conversation, forgetting the least recently saved ones while the store
    /// is full (in count, or in bytes). A conversation past a context's own bounds is not kept:
    /// the context's next message starts over.
    pub(crate) fn save_conversation(&self, context_id: &str, transcript: Vec<agent_llm::Message>) {
        let bytes = transcript_bytes(&transcript);
        let mut inner = self.lock();
        inner.context_order.retain(|c| c != context_id);
        if let Some((_, old)) = inner.contexts.remove(context_id) {
            inner.context_bytes -= old;
        }
        if within_context_bounds(transcript.len(), bytes).is_err() {
            return;
        }
        while inner.context_order.len() >= self.max
            || (inner.context_bytes + bytes > MAX_CONVERSATION_BYTES
                && !inner.context_order.is_empty())
        {
            if let Some(old) = inner.context_order.pop_front()
                && let Some((_, freed)) = inner.contexts.remove(&old)
            {
                inner.context_bytes -= freed;
            }
        }
        inner.context_order.push_back(context_id.to_owned());
        inner.context_bytes += bytes;
        inner
            .contexts
            .insert(context_id.to_owned(), (transcript, bytes));
    }
}

/// A new task in the submitted state.
pub(crate) fn new_task(id: String, context_id: String, first: crate::types::Message) -> Task {
    Task {
        id,
        context_id,
        status: TaskStatus::now(TaskState::Submitted, None),
        artifacts: Vec::new(),
        history: vec![first],
        metadata: None,
    }
}

/// The task with only its newest `length` history messages (all of them for `None`).
pub(crate) fn with_history(mut task: Task, length: Option<i32>) -> Task {
    if let Some(length) = length {
        let keep = usize::try_from(length.max(0)).unwrap_or(0);
        let skip = task.history.len().saturating_sub(keep);
        task.history.drain(..skip);
    }
    task
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, Part, TaskArtifactUpdateEvent};

    fn task(id: &str) -> Task {
        new_task(id.into(), "ctx".into(), Message::user_text("hi"))
    }

    #[test]
    fn a_full_store_forgets_the_oldest_idle_task_and_refuses_when_all_run() {
        let store = TaskStore::new(2);
        let running = || Phase::Running {
            cancel: CancellationToken::new(),
        };
        store.insert(task("a"), running(), 0).unwrap();
        store.insert(task("b"), Phase::Done, 0).unwrap();
        store.insert(task("c"), running(), 0).unwrap();
        assert!(store.get("b").is_none() && store.get("a").is_some());
        let refused = store.insert(task("d"), running(), 0).err().unwrap();
        assert!(
            refused.message.contains("at most 2 tasks"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn appended_text_joins_the_artifact() {
        let mut t = task("a");
        let piece = |text: &str, append| {
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: "a".into(),
                context_id: "ctx".into(),
                artifact: Artifact {
                    artifact_id: "answer".into(),
                    name: String::new(),
                    description: String::new(),
                    parts: vec![Part::text(text)],
                    metadata: None,
                },
                append,
                last_chunk: false,
                metadata: None,
            })
        };
        apply(&mut t, &piece("Hel", false));
        apply(&mut t, &piece("lo", true));
        assert_eq!(t.artifacts[0].parts, vec![Part::text("Hello")]);
        apply(&mut t, &piece("Bye", false));
        assert_eq!(t.artifacts[0].parts, vec![Part::text("Bye")]);
        assert_eq!(with_history(t, Some(0)).history.len(), 0);
    }
}
