//! A task's run: the agent loop started (or continued after a pause) for a task, its
//! [`AgentEvent`]s turned into A2A stream events as they happen, and its outcome into the task's
//! final state.
//!
//! | the run | the task |
//! |---|---|
//! | starts | `TASK_STATE_WORKING` |
//! | streams text ([`AgentEvent::TextDelta`]) | artifact `answer`, appended piece by piece |
//! | calls a skill | a `WORKING` status whose message names it |
//! | ends with an answer | artifact `answer` replaced by the whole answer (`lastChunk`) and the files the run produced (see below), then `COMPLETED` |
//! | pauses for approval | `INPUT_REQUIRED`, the pending calls in the status message ([`crate::decision`]) |
//! | is cancelled (`CancelTask`) | `CANCELED` |
//! | runs past the run timeout | stopped, `FAILED` saying so |
//! | fails or ends without an answer (budget, stuck...) | `FAILED`, the reason in the status message |

//!
//! The files a run produced are the media of its tool results and of its final message (those
//! after the task's message), served as file parts of the `answer` artifact after its text
//! ([`crate::media::part_of_media`]), at most [`MAX_ANSWER_FILE_BYTES`] together; a file past
//! that is left out, and a text part says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use agent_runtime::{AgentError, AgentEvent, AgentRuntime, Decision, FinishReason, RunOutcome};

use crate::tasks::{Phase, TaskSlot, TaskStore};
use crate::types::{
    Artifact, Message, Part, StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

/// The id of the artifact a run's answer is written to.
pub const ANSWER_ARTIFACT: &str = "answer";

/// The most bytes of files (before base64) one task's answer carries.
pub const MAX_ANSWER_FILE_BYTES: usize = 8 * 1024 * 1024;

/// How long a cancelled run (by `CancelTask` or the run timeout) has to stop by itself before it
/// is dropped.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Where a run starts.
pub(crate) enum Start {
    /// A conversation whose last message is the user's.
    Conversation(Vec<agent_llm::Message>),
    /// A paused run and the decisions that continue it.
    Paused(
        Box<agent_runtime::RunState>,
        Vec<(agent_runtime::CallRef, Decision)>,
    ),
}

/// What a run needs from the server.
#[derive(Clone)]
pub(crate) struct RunContext {
    pub(crate) runtime: AgentRuntime,
    pub(crate) store: Arc<TaskStore>,
    pub(crate) run_timeout: Duration,
    /// What the files of incoming messages are checked against.
    pub(crate) media_limits: agent_core::content::MediaLimits,
}

/// Marks the task working and starts its run on a task of its own. Call with the task's lock
/// held (`data`), after subscribing whoever must see every event.
pub(crate) fn start(
    context: &RunContext,
    slot: &Arc<TaskSlot>,
    data: &mut crate::tasks::TaskData,
    from: Start,
) {
    let cancel = CancellationToken::new();
    data.phase = Phase::Running {
        cancel: cancel.clone(),
    };
    let status = TaskStatus::now(TaskState::Working, None);
    slot.publish(data, status_event(&data.task, status));
    let sink_slot = slot.clone();
    let streamed = Arc::new(AtomicBool::new(false));
    let sink_streamed = streamed.clone();
    let runtime = context
        .runtime
        .clone()
        .cancellation(cancel.clone())
        .event_sink(move |event: &AgentEvent| on_event(&sink_slot, &sink_streamed, event));
    let slot = slot.clone();
    let context = context.clone();
    tokio::spawn(async move {
        let run = async {
            match from {
                Start::Conversation(transcript) => runtime.resume(transcript).await,
                Start::Paused(state, decisions) => runtime.continue_paused(*state, decisions).await,
            }
        };
        let ended = bounded(run, &cancel, context.run_timeout).await;
        finish(&context, &slot, ended);
    });
}

/// How a run ended, as far as its bounds are concerned.
enum Ended {
    /// It ended by itself (or stopped when cancelled).
    Run(Box<Result<RunOutcome, AgentError>>, bool),
    /// It did not stop within the grace period after being cancelled.
    Dropped(bool),
}

/// Runs `run` until it ends, cancelling it at `timeout`; a cancelled run that does not stop
/// within [`STOP_GRACE`] is dropped. The flag says whether the timeout fired.
async fn bounded(
    run: impl Future<Output = Result<RunOutcome, AgentError>>,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Ended {
    let mut run = std::pin::pin!(run);
    let mut timed_out = false;
    tokio::select! {
        ended = &mut run => return Ended::Run(Box::new(ended), false),
        () = tokio::time::sleep(timeout) => { timed_out = true; cancel.cancel(); }
        () = cancel.cancelled() => {}
    }
    match tokio::time::timeout(STOP_GRACE, run).await {
        Ok(ended) => Ended::Run(Box::new(ended), timed_out),
        Err(_) => Ended::Dropped(timed_out),
    }
}

/// Turns one event of the run into the task's stream events.
fn on_event(slot: &TaskSlot, streamed: &AtomicBool, event: &AgentEvent) {
    let mut data = slot.lock();
    if !matches!(data.phase, Phase::Running { .. }) {
        return;
    }
    match event {
        AgentEvent::TextDelta { text, .. } if !text.is_empty() => {
            let append = streamed.swap(true, Ordering::Relaxed);
            let update = artifact_event(&data.task, vec![Part::text(text.clone())], append, false);
            slot.publish(&mut data, update);
        }
        AgentEvent::ToolCall { call, .. } => {
            let message = agent_message(&data.task, format!("Calling the skill `{}`.", call.name));
            let status = TaskStatus::now(TaskState::Working, Some(message));
            let update = status_event(&data.task, status);
            slot.publish(&mut data, update);
        }
        _ => {}
    }
}

/// Sets the task's final state from how its run ended.
fn finish(context: &RunContext, slot: &TaskSlot, ended: Ended) {
    let mut data = slot.lock();
    let (state, text, answer) = match ended {
        Ended::Run(ended, timed_out) => match *ended {
            Ok(outcome) => match outcome.finish {
                FinishReason::NoMoreToolCalls => {
                    let mut answer = vec![Part::text(outcome.final_text.unwrap_or_default())];
                    answer.extend(produced_files(&outcome.transcript));
                    context
                        .store
                        .save_conversation(&data.task.context_id, outcome.transcript);
                    (TaskState::Completed, None, Some(answer))
                }
                FinishReason::PlanPending { plan } => {
                    (TaskState::Completed, None, Some(vec![Part::text(plan)]))
                }
                FinishReason::AwaitingApproval { pending } => match outcome.state {
                    Some(state) => {
                        let message = crate::decision::input_required_message(&pending);
                        data.phase = Phase::Paused { state, pending };
                        let message = in_task(&data.task, message);
                        let status = TaskStatus::now(TaskState::InputRequired, Some(message));
                        let update = status_event(&data.task, status);
                        slot.publish(&mut data, update);
                        return;
                    }
                    None => (
                        TaskState::Failed,
                        Some("the run paused for approval but kept no state to continue".into()),
                        None,
                    ),
                },
                FinishReason::Cancelled if timed_out => (
                    TaskState::Failed,
                    Some(timeout_text(context.run_timeout)),
                    None,
                ),
                FinishReason::Cancelled => (TaskState::Canceled, None, None),
                other => (
                    TaskState::Failed,
                    Some(format!(
                        "the run ended without an answer: {other:?}{}",
                        outcome
                            .final_text
                            .map(|t| format!("; its last text: {t}"))
                            .unwrap_or_default()
                    )),
                    None,
                ),
            },
            Err(error) => (TaskState::Failed, Some(error.to_string()), None),
        },
        Ended::Dropped(true) => (
            TaskState::Failed,
            Some(timeout_text(context.run_timeout)),
            None,
        ),
        Ended::Dropped(false) => (TaskState::Canceled, None, None),
    };
    data.phase = Phase::Done;
    if let Some(answer) = answer {
        let update = artifact_event(&data.task, answer, false, true);
        slot.publish(&mut data, update);
    }
    let message = text.map(|text| agent_message(&data.task, text));
    let update = status_event(&data.task, TaskStatus::now(state, message));
    slot.publish(&mut data, update);
}

/// The file parts of the media the run produced after the task's message (its tool results and
/// final message), within [`MAX_ANSWER_FILE_BYTES`].
fn produced_files(transcript: &[agent_llm::Message]) -> Vec<Part> {
    let start = transcript
        .iter()
        .rposition(|m| m.role == agent_llm::Role::User)
        .map_or(0, |at| at + 1);
    let mut parts = Vec::new();
    let mut bytes = 0;
    let mut left_out = Vec::new();
    for media in transcript[start..]
        .iter()
        .flat_map(agent_llm::Message::media)
    {
        if bytes + media.len() > MAX_ANSWER_FILE_BYTES {
            left_out.push(media.describe());
            continue;
        }
        bytes += media.len();
        parts.push(crate::media::part_of_media(media));
    }
    if !left_out.is_empty() {
        parts.push(Part::text(format!(
            "[left out, over the {MAX_ANSWER_FILE_BYTES} bytes of files an answer carries: {}]",
            left_out.join("; ")
        )));
    }
    parts
}

fn timeout_text(timeout: Duration) -> String {
    format!(
        "the run took longer than the server's run timeout ({}s) and was stopped",
        timeout.as_secs_f64()
    )
}

/// An agent message of this task.
pub(crate) fn agent_message(task: &crate::types::Task, text: String) -> Message {
    in_task(task, Message::agent_text(text))
}

fn in_task(task: &crate::types::Task, mut message: Message) -> Message {
    message.task_id = task.id.clone();
    message.context_id = task.context_id.clone();
    message
}

/// A status event of this task.
pub(crate) fn status_event(task: &crate::types::Task, status: TaskStatus) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status,
        metadata: None,
    })
}

fn artifact_event(
    task: &crate::types::Task,
    parts: Vec<Part>,
    append: bool,
    last_chunk: bool,
) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        artifact: Artifact {
            artifact_id: ANSWER_ARTIFACT.into(),
            name: "answer".into(),
            description: String::new(),
            parts,
            metadata: None,
        },
        append,
        last_chunk,
        metadata: None,
    })
}
