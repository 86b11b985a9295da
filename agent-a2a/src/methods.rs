//! The JSON-RPC methods of the server: what each does with the tasks, and what it answers —
//! a result, an error, or a stream of events.
//!
//! | method | what it does |
//! |---|---|
//! | `SendMessage` | a new task (no `taskId`) runs the agent on the message's text and files (attached to the goal as media, checked as [`crate::media`] says; a file refused refuses the message), in its context's conversation; a message with the `taskId` of an input-required task carries its decisions (a file in it is refused: files go in a new message). Answers once the task completes, fails or waits for input (`returnImmediately` answers at once) |
//! | `SendStreamingMessage` | the same, answered with a stream: the task, then its status and artifact updates, until it ends or waits for input |
//! | `GetTask` | the task (`historyLength` newest history messages) |
//! | `ListTasks` | the tasks kept, newest first, by `contextId` and `status`, in pages |
//! | `CancelTask` | stops the task's run (or its wait for input); answers the canceled task |
//! | `SubscribeToTask` | the task's live stream: the task as it is, then every event after it |
//! | push notifications, `GetExtendedAgentCard` | not supported (their A2A errors) |

use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::jsonrpc::{
    EXTENDED_CARD_NOT_CONFIGURED, INVALID_PARAMS, METHOD_NOT_FOUND,
    PUSH_NOTIFICATION_NOT_SUPPORTED, RpcError, TASK_NOT_CANCELABLE, TASK_NOT_FOUND,
    UNSUPPORTED_OPERATION,
};
use agent_core::content::Part;

use crate::media::media_of_parts;
use crate::run::{self, RunContext, Start};
use crate::tasks::{self, Phase, TaskSlot};
use crate::types::{
    ListTasksRequest, ListTasksResponse, Role, SendMessageRequest, SendMessageResponse,
    StreamResponse, Task, TaskIdParams, TaskState, TaskStatus,
};

/// How long `CancelTask` waits for the run to stop before it answers with the task as it is.
const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// What a method answers.
pub(crate) enum Answer {
    /// A result.
    Result(Value),
    /// A stream of results (server-sent events).
    Stream(BoxStream<'static, StreamResponse>),
}

/// Calls `method` with `params`.
pub(crate) async fn call(
    context: &RunContext,
    method: &str,
    params: Value,
) -> Result<Answer, RpcError> {
    match method {
        "SendMessage" => send(context, parse(params)?, false).await,
        "SendStreamingMessage" => send(context, parse(params)?, true).await,
        "GetTask" => {
            let params: TaskIdParams = parse(params)?;
            let task = find(context, &params.id)?.snapshot();
            result(&tasks::with_history(task, params.history_length))
        }
        "ListTasks" => list(context, parse(params)?),
        "CancelTask" => cancel(context, parse(params)?).await,
        "SubscribeToTask" => {
            let params: TaskIdParams = parse(params)?;
            let slot = find(context, &params.id)?;
            let (task, receiver) = slot.subscribe();
            if task.status.state.is_terminal() {
                return Err(RpcError::new(
                    UNSUPPORTED_OPERATION,
                    format!(
                        "the task `{}` has ended ({:?}): there is nothing to subscribe to; \
                         GetTask reads it",
                        task.id, task.status.state
                    ),
                ));
            }
            Ok(Answer::Stream(live(slot, task, receiver).boxed()))
        }
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => Err(RpcError::new(
            PUSH_NOTIFICATION_NOT_SUPPORTED,
            "this agent does not send push notifications: stream (SendStreamingMessage, \
             SubscribeToTask) or poll (GetTask)",
        )),
        "GetExtendedAgentCard" => Err(RpcError::new(
            EXTENDED_CARD_NOT_CONFIGURED,
            "this agent has no extended agent card",
        )),
        other => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!(
                "method not found: `{other}` (this agent answers SendMessage, \
                 SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask)"
            ),
        )),
    }
}

fn parse<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("invalid params: {e}")))
}

fn result(value: &impl serde::Serialize) -> Result<Answer, RpcError> {
    Ok(Answer::Result(
        serde_json::to_value(value).expect("protocol types serialize"),
    ))
}

fn find(context: &RunContext, id: &str) -> Result<Arc<TaskSlot>, RpcError> {
    context.store.get(id).ok_or_else(|| {
        RpcError::new(
            TASK_NOT_FOUND,
            format!("task not found: `{id}` (never created here, or no longer kept)"),
        )
    })
}

async fn send(
    context: &RunContext,
    request: SendMessageRequest,
    streaming: bool,
) -> Result<Answer, RpcError> {
    let mut message = request.message;
    if message.role != Role::User {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "the message's role must be ROLE_USER",
        ));
    }
    if message.parts.is_empty() {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "the message has no parts: send at least one text part",
        ));
    }
    let (slot, task, receiver) = if message.task_id.is_empty() {
        let text = message.text();
        // Files first: one refused refuses the message, before anything starts.
        let media = media_of_parts(&message.parts, &context.media_limits).map_err(|e| {
            RpcError::new(
                INVALID_PARAMS,
                format!("a file part of the message was refused: {e}"),
            )
        })?;
        if text.trim().is_empty() && media.is_empty() {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "the message has no text and no file: this agent reads text and file parts",
            ));
        }
        if message.context_id.is_empty() {
            message.context_id = crate::ids::new_id();
        }
        message.task_id = crate::ids::new_id();
        let mut transcript = context
            .store
            .conversation(&message.context_id)
            .unwrap_or_default();
        let mut goal = agent_llm::Message::user(text);
        goal.parts = media.into_iter().map(Part::Media).collect();
        transcript.push(goal);
        // A conversation grows by what each message adds: refused, saying so, at its bounds.
        tasks::within_context_bounds(transcript.len(), tasks::transcript_bytes(&transcript))
            .map_err(|why| {
                RpcError::new(
                    INVALID_PARAMS,
                    format!("the context `{}` is full: {why}", message.context_id),
                )
            })?;
        let bytes = serde_json::to_vec(&message).map_or(0, |b| b.len());
        let task = tasks::new_task(message.task_id.clone(), message.context_id.clone(), message);
        let slot = context.store.insert(task, Phase::Done, bytes)?;
        let mut data = slot.lock();
        let (task, receiver) = (data.task.clone(), slot.events_receiver());
        run::start(context, &slot, &mut data, Start::Conversation(transcript));
        drop(data);
        (slot, task, receiver)
    } else {
        // A message that continues a task carries decisions; a file in it would be dropped, so
        // it is refused instead, saying where files go.
        if message.parts.iter().any(crate::media::is_file) {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "a message that continues a task carries its decisions only: send files in a \
                 new message (without `taskId`, with the `contextId`), once this task is done"
                    .to_owned(),
            ));
        }
        let slot = find(context, &message.task_id)?;
        let mut data = slot.lock();
        if !message.context_id.is_empty() && message.context_id != data.task.context_id {
            return Err(RpcError::new(
                INVALID_PARAMS,
                format!(
                    "the task `{}` belongs to the context `{}`, not `{}`",
                    data.task.id, data.task.context_id, message.context_id
                ),
            ));
        }
        message.context_id = data.task.context_id.clone();
        let decisions = match &data.phase {
            Phase::Paused { pending, .. } => crate::decision::read_decisions(&message, pending)
                .map_err(|e| RpcError::new(INVALID_PARAMS, e))?,
            Phase::Running { .. } => {
                return Err(RpcError::new(
                    UNSUPPORTED_OPERATION,
                    format!(
                        "the task `{}` is still working: wait for it (SubscribeToTask) or \
                         cancel it (CancelTask) before sending it a message",
                        data.task.id
                    ),
                ));
            }
            Phase::Done => {
                return Err(RpcError::new(
                    UNSUPPORTED_OPERATION,
                    format!(
                        "the task `{}` has ended ({:?}) and takes no more messages: send a new \
                         message without `taskId`, with `contextId` `{}` to continue the \
                         conversation",
                        data.task.id, data.task.status.state, data.task.context_id
                    ),
                ));
            }
        };
        let Phase::Paused { state, .. } = std::mem::replace(&mut data.phase, Phase::Done) else {
            unreachable!("matched above");
        };
        data.task.history.push(message);
        // The stream starts with the task working again (the lock keeps the run's events after).
        run::start(context, &slot, &mut data, Start::Paused(state, decisions));
        let (task, receiver) = (data.task.clone(), slot.events_receiver());
        drop(data);
        (slot, task, receiver)
    };
    if streaming {
        return Ok(Answer::Stream(live(slot, task, receiver).boxed()));
    }
    let return_now = request
        .configuration
        .as_ref()
        .is_some_and(|c| c.return_immediately);
    let history = request.configuration.and_then(|c| c.history_length);
    if !return_now {
        wait_until_stream_ends(&slot, receiver, None).await;
    }
    let task = tasks::with_history(slot.snapshot(), history);
    result(&SendMessageResponse::Task(task))
}

/// Waits for an event that ends the task's stream (or for `limit`).
async fn wait_until_stream_ends(
    slot: &TaskSlot,
    mut receiver: broadcast::Receiver<StreamResponse>,
    limit: Option<Duration>,
) {
    let wait = async {
        loop {
            match receiver.recv().await {
                Ok(StreamResponse::StatusUpdate(update)) if update.status.state.ends_stream() => {
                    return;
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    if slot.snapshot().status.state.ends_stream() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    };
    match limit {
        Some(limit) => {
            let _ = tokio::time::timeout(limit, wait).await;
        }
        None => wait.await,
    }
}

/// The task's live stream: `first`, then every event from `receiver` until one ends the
/// stream. A subscriber that falls behind gets the task as it is now and goes on from there.
fn live(
    slot: Arc<TaskSlot>,
    first: Task,
    receiver: broadcast::Receiver<StreamResponse>,
) -> impl Stream<Item = StreamResponse> + Send + 'static {
    let ended = first.status.state.ends_stream();
    let state = (Some(first), receiver, slot, ended);
    futures::stream::unfold(state, |(first, mut receiver, slot, ended)| async move {
        if let Some(first) = first {
            return Some((StreamResponse::Task(first), (None, receiver, slot, ended)));
        }
        if ended {
            return None;
        }
        match receiver.recv().await {
            Ok(event) => {
                let ends = matches!(&event, StreamResponse::StatusUpdate(u)
                    if u.status.state.ends_stream());
                Some((event, (None, receiver, slot, ends)))
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {
                let now = slot.snapshot();
                let ends = now.status.state.ends_stream();
                Some((StreamResponse::Task(now), (None, receiver, slot, ends)))
            }
            Err(broadcast::error::RecvError::Closed) => None,
        }
    })
}

fn list(context: &RunContext, request: ListTasksRequest) -> Result<Answer, RpcError> {
    let page_size = request.page_size.unwrap_or(100).clamp(1, 100);
    let offset: usize = if request.page_token.is_empty() {
        0
    } else {
        request
            .page_token
            .parse()
            .map_err(|_| RpcError::new(INVALID_PARAMS, "invalid `pageToken`"))?
    };
    let matching: Vec<Task> = context
        .store
        .all()
        .iter()
        .map(|slot| slot.snapshot())
        .filter(|t| request.context_id.is_empty() || t.context_id == request.context_id)
        .filter(|t| request.status.is_none_or(|s| t.status.state == s))
        .collect();
    let total = matching.len();
    let page: Vec<Task> = matching
        .into_iter()
        .skip(offset)
        .take(page_size as usize)
        .collect();
    let next = offset + page.len();
    result(&ListTasksResponse {
        tasks: page,
        next_page_token: if next < total {
            next.to_string()
        } else {
            String::new()
        },
        page_size,
        total_size: i32::try_from(total).unwrap_or(i32::MAX),
    })
}

async fn cancel(context: &RunContext, params: TaskIdParams) -> Result<Answer, RpcError> {
    let slot = find(context, &params.id)?;
    let receiver = {
        let mut data = slot.lock();
        match &data.phase {
            Phase::Running { cancel } => {
                cancel.cancel();
                Some(slot.events_receiver())
            }
            Phase::Paused { .. } => {
                data.phase = Phase::Done;
                let status = TaskStatus::now(TaskState::Canceled, None);
                let update = run::status_event(&data.task, status);
                slot.publish(&mut data, update);
                None
            }
            Phase::Done => {
                return Err(RpcError::new(
                    TASK_NOT_CANCELABLE,
                    format!(
                        "the task `{}` has already ended ({:?})",
                        data.task.id, data.task.status.state
                    ),
                ));
            }
        }
    };
    if let Some(receiver) = receiver {
        wait_until_stream_ends(&slot, receiver, Some(CANCEL_WAIT)).await;
    }
    result(&slot.snapshot())
}
