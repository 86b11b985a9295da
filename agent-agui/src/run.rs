//! One request's run: started in the request's thread (the person's next message, or decisions
//! for the thread's pause), its events mapped ([`crate::mapping`]) into the request's
//! [`Outbox`] as they happen, and its outcome into the last event: `RUN_FINISHED` (success,
//! interrupt, cancelled) or `RUN_ERROR`.
//!
//! The run is the server's, not the connection's: a client that goes away or falls behind does
//! not stop it, and its outcome is saved in the thread. It is bounded by the run timeout (then
//! cancelled, and dropped if it does not stop within 5 seconds).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use agent_runtime::{AgentError, AgentEvent, AgentRuntime, FinishReason, RunOutcome, SessionStore};

use crate::input::{Request, Start};
use crate::interrupt;
use crate::mapping::Mapper;
use crate::outbox::Outbox;
use crate::subagents::Hop;

/// How long a cancelled run has to stop by itself before it is dropped.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// What a run needs from the server.
#[derive(Clone)]
pub(crate) struct RunContext {
    pub(crate) runtime: AgentRuntime,
    pub(crate) threads: Arc<dyn SessionStore>,
    pub(crate) run_timeout: Duration,
}

/// Runs `request`, writing its events into `outbox`, and closes it; `cancel` stops it (the run
/// timeout, or a person through the console). `ended` gets its last event before the client
/// does.
pub(crate) async fn run(
    context: RunContext,
    request: Request,
    outbox: Arc<Outbox>,
    cancel: CancellationToken,
    ended: impl FnOnce(&Value),
) {
    let (thread, run_id) = (request.thread_id, request.run_id);
    outbox.push(run_started(&thread, &run_id));
    let refused = match &request.start {
        Err(message) => Some(run_error(message, "eugene.input")),
        Ok(Start::Decide(answer)) => not_the_pause(&*context.threads, &thread, &answer.pause).await,
        Ok(Start::Goal(..)) => None,
    };
    if let Some(error) = refused {
        ended(&error);
        outbox.push(error);
        outbox.close();
        return;
    }
    let start = request.start.expect("refused above");
    let decided = match &start {
        Start::Decide(answer) => (answer.decisions.iter())
            .map(|(call, _)| call.id.clone())
            .collect(),
        Start::Goal(..) => Vec::new(),
    };
    let mapper = Arc::new(Mutex::new(Mapper::new(&run_id, decided)));
    let (sink_mapper, sink_outbox) = (mapper.clone(), outbox.clone());
    let sink = move |event: &AgentEvent| {
        let mut out = Vec::new();
        sink_mapper
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(event, &mut out);
        for value in out {
            sink_outbox.push(value);
        }
    };
    let runtime = context
        .runtime
        .clone()
        .cancellation(cancel.clone())
        .event_sink(sink);
    let store = &*context.threads;
    let started = async {
        match start {
            Start::Goal(goal, media) => {
                let mut request = runtime.run(goal);
                for part in media {
                    request = request.attach(part);
                }
                request.in_session(store, &thread).await
            }
            Start::Decide(answer) => {
                let decide = runtime.decide(answer.decisions);
                decide.in_session(store, &thread).await
            }
        }
    };
    let outcome = bounded(started, &cancel, context.run_timeout).await;
    let mut out = Vec::new();
    let paused = matches!(&outcome, Ended::Run(ended, _) if matches!(&**ended,
        Ok(RunOutcome { finish: FinishReason::AwaitingApproval { .. }, .. })));
    let mut mapper = mapper.lock().unwrap_or_else(|p| p.into_inner());
    mapper.close_all(paused, &mut out);
    let last = last_event(&thread, &run_id, outcome, context.run_timeout, &mapper);
    drop(mapper);
    ended(&last);
    for value in out {
        outbox.push(value);
    }
    outbox.push(last);
    outbox.close();
}

/// How a run ended.
enum Ended {
    /// By itself, or stopped after a cancellation (the flag: by the run timeout).
    Run(Box<Result<RunOutcome, AgentError>>, bool),
    /// Dropped: it did not stop within the grace period after the timeout.
    Dropped,
}

async fn bounded(
    run: impl Future<Output = Result<RunOutcome, AgentError>>,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Ended {
    let mut run = std::pin::pin!(run);
    tokio::select! {
        ended = &mut run => return Ended::Run(Box::new(ended), false),
        () = tokio::time::sleep(timeout) => cancel.cancel(),
    }
    match tokio::time::timeout(STOP_GRACE, run).await {
        Ok(ended) => Ended::Run(Box::new(ended), true),
        Err(_) => Ended::Dropped,
    }
}

/// `RUN_FINISHED` or `RUN_ERROR`, from how the run ended; an interrupt a sub-agent raised
/// attributed to it (`subagentRunId`: the one at the pending call's agents that paused).
fn last_event(
    thread: &str,
    run_id: &str,
    ended: Ended,
    timeout: Duration,
    mapper: &Mapper,
) -> Value {
    let timed_out = || {
        run_error(
            &format!(
                "the run took longer than the server's run timeout ({}s) and was stopped",
                timeout.as_secs_f64()
            ),
            "eugene.timeout",
        )
    };
    let outcome = match ended {
        Ended::Dropped => return timed_out(),
        Ended::Run(ended, timed) => match *ended {
            Ok(outcome) => {
                if timed && outcome.finish == FinishReason::Cancelled {
                    return timed_out();
                }
                outcome
            }
            Err(error) => return run_error(&error.to_string(), error_code(&error)),
        },
    };
    let mut finished = json!({"type": "RUN_FINISHED", "threadId": thread, "runId": run_id});
    finished["usage"] = json!([{
        "inputTokens": outcome.usage.prompt_tokens(),
        "outputTokens": outcome.usage.output_tokens,
    }]);
    match outcome.finish {
        FinishReason::NoMoreToolCalls => {
            if let Some(text) = outcome.final_text {
                finished["result"] = json!(text);
            }
            finished["outcome"] = json!({"type": "success"});
        }
        FinishReason::PlanPending { plan } => {
            finished["result"] = json!(plan);
            finished["outcome"] = json!({"type": "success"});
        }
        FinishReason::AwaitingApproval { pending } if !pending.is_empty() => {
            let pause = outcome.state.as_ref().and_then(|s| s.pause_id());
            let pause = pause.unwrap_or_default();
            let interrupts: Vec<Value> = pending
                .iter()
                .map(|call| {
                    let mut shown = interrupt::interrupt(call, pause);
                    let agents: Vec<Hop> = (call.via.iter())
                        .filter(|step| !step.is_handoff())
                        .map(|step| Hop::new(&step.skill, step.call_id.clone()))
                        .collect();
                    if let Some(id) = mapper.suspended(&agents).filter(|_| !agents.is_empty()) {
                        shown["subagentRunId"] = json!(id);
                    }
                    shown
                })
                .collect();
            finished["outcome"] = json!({"type": "interrupt", "interrupts": interrupts});
        }
        FinishReason::Cancelled => finished["outcome"] = json!({"type": "cancelled"}),
        other => {
            return run_error(
                &format!("the run ended without an answer: {other:?}"),
                "eugene.unfinished",
            );
        }
    }
    finished
}

/// Why answers to the pause `pause` cannot be taken in `thread`: it is not paused, or paused
/// again since (another pause's id); `None` when they answer its pause. Checked with no other
/// run of the thread going on (the endpoint runs an answer alone), so the pause cannot change
/// before the run claims it.
async fn not_the_pause(store: &dyn SessionStore, thread: &str, pause: &str) -> Option<Value> {
    let loaded = match store.load(thread).await {
        Ok(loaded) => loaded,
        Err(error) => return Some(run_error(&error.to_string(), "eugene.thread")),
    };
    let current = loaded
        .as_ref()
        .and_then(|l| l.data.paused.as_ref())
        .map(|state| state.pause_id().unwrap_or_default());
    match current {
        Some(current) if current == pause => None,
        Some(_) => Some(run_error(
            "these answers are for an earlier pause of the thread, which has paused again since: \
             answer the interrupts of its last RUN_FINISHED",
            "eugene.resume",
        )),
        None => Some(run_error(
            "the thread is not paused: there is nothing these answers can decide",
            "eugene.resume",
        )),
    }
}

fn error_code(error: &AgentError) -> &'static str {
    match error {
        AgentError::Resume(_) => "eugene.resume",
        AgentError::Session(agent_runtime::StoreError::Conflict { .. }) => "eugene.conflict",
        AgentError::Session(_) => "eugene.thread",
        AgentError::Provider(_) => "eugene.model",
        _ => "eugene.error",
    }
}

/// The `RUN_STARTED` event of the request `run_id` in `thread`.
pub(crate) fn run_started(thread: &str, run_id: &str) -> Value {
    json!({"type": "RUN_STARTED", "threadId": thread, "runId": run_id})
}

/// A `RUN_ERROR` event.
pub(crate) fn run_error(message: &str, code: &str) -> Value {
    json!({"type": "RUN_ERROR", "message": message, "code": code})
}
