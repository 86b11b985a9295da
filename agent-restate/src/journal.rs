//! agent-runtime's [`Journal`] on Restate's `ctx.run`.
//!
//! The runtime a handler builds must own its journal (`AgentRuntime::journal` takes an
//! `Arc<dyn Journal>`), while Restate's context is borrowed for the invocation. So the two meet
//! over channels, inside the handler's one task: the run sends each step to the handler
//! ([`StepChannel`]), the handler wraps it in `ctx.run` ([`serve_steps`]). When Restate runs the
//! closure (the step is new), the closure tells the run to go ahead and waits for the step's
//! result, which becomes the journal entry; when the step is in the journal already, Restate
//! answers with the entry and never calls the closure, and the run drops the step unpolled.
//!
//! The same tells [`EventGate`] whether the invocation is still replaying: events are held while
//! it is, dropped when the next step turns out to be recorded (the attempt that recorded it sent
//! them), and sent when a step runs for real.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use agent_core::CancellationToken;
use agent_runtime::{
    AgentEvent, EventSink, Journal, JournalError, JournalStep, StepFuture, StepResult,
};
use futures::future::{Either, select};
use restate_sdk::prelude::*;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// Restate's code for an invocation cancelled through its API.
const CANCELLED: u16 = 409;

/// One step on its way from the run to the handler.
pub(crate) struct StepRequest {
    name: String,
    /// Sent when Restate runs the closure: the step is new, run it.
    go: oneshot::Sender<()>,
    /// The step's result, from the run to the closure.
    result: oneshot::Receiver<StepResult>,
    /// The journal's answer: the recorded value (new or replayed).
    reply: oneshot::Sender<Result<Value, JournalError>>,
}

/// The run's side: a [`Journal`] that hands each step to the handler.
pub(crate) struct StepChannel {
    requests: mpsc::UnboundedSender<StepRequest>,
    gate: Arc<EventGate>,
}

impl StepChannel {
    pub(crate) fn new(gate: Arc<EventGate>) -> (Self, mpsc::UnboundedReceiver<StepRequest>) {
        let (requests, receiver) = mpsc::unbounded_channel();
        (StepChannel { requests, gate }, receiver)
    }
}

fn over() -> JournalError {
    JournalError("the Restate invocation is over".into())
}

impl Journal for StepChannel {
    fn step<'a>(
        &'a self,
        step: JournalStep,
        run: StepFuture<'a, StepResult>,
    ) -> StepFuture<'a, Result<Value, JournalError>> {
        Box::pin(async move {
            let (go, go_signal) = oneshot::channel();
            let (result, result_receiver) = oneshot::channel();
            let (reply, answer) = oneshot::channel();
            let request = StepRequest {
                name: step.to_string(),
                go,
                result: result_receiver,
                reply,
            };
            self.requests.send(request).map_err(|_| over())?;
            let live = go_signal.await.is_ok();
            if live {
                self.gate.live();
                let _ = result.send(run.await);
            } else {
                // Recorded before: the closure was dropped without running, and so is the step.
                drop(run);
            }
            let answer = answer.await.map_err(|_| over())?;
            if !live {
                self.gate.replayed();
            }
            answer
        })
    }

    fn emit(&self, event: &AgentEvent, sinks: &[Arc<dyn EventSink>]) {
        self.gate.emit(event, sinks);
    }
}

/// The handler's side: journals every step the run sends, until the run is done (the caller
/// races this against the run; it never ends by itself while the run holds its journal).
pub(crate) async fn serve_steps(
    ctx: &ObjectContext<'_>,
    requests: &mut mpsc::UnboundedReceiver<StepRequest>,
    cancel: &CancellationToken,
) {
    while let Some(StepRequest {
        name,
        go,
        result,
        reply,
    }) = requests.recv().await
    {
        let recorded = ctx
            .run(move || async move {
                let _ = go.send(());
                match result.await {
                    Ok(StepResult::Done(value)) => Ok(Json(value)),
                    Ok(StepResult::Retry(message)) => Err(HandlerError::from(message)),
                    Err(_) => Err(HandlerError::from(
                        "the run stopped before the step finished".to_string(),
                    )),
                }
            })
            .name(name)
            .await;
        let answer = match recorded {
            Ok(Json(value)) => Ok(value),
            Err(error) => {
                if error.code() == CANCELLED {
                    cancel.cancel();
                }
                Err(JournalError(format!(
                    "Restate ended the step ({}): {}",
                    error.code(),
                    error.message()
                )))
            }
        };
        let _ = reply.send(answer);
    }
}

/// Runs `run` while journaling the steps it sends.
pub(crate) async fn with_steps<T>(
    ctx: &ObjectContext<'_>,
    requests: &mut mpsc::UnboundedReceiver<StepRequest>,
    cancel: &CancellationToken,
    run: impl Future<Output = T>,
) -> T {
    let run = std::pin::pin!(run);
    let serve = std::pin::pin!(serve_steps(ctx, requests, cancel));
    match select(run, serve).await {
        Either::Left((output, _)) => output,
        Either::Right(((), run)) => run.await,
    }
}

/// A point of the handler that is not a step of the run (the run paused, the run finished),
/// journaled so that a replay knows whether the attempt before got there: if it did, the events
/// held since the last step were sent by it.
pub(crate) async fn mark(
    ctx: &ObjectContext<'_>,
    gate: &EventGate,
    name: &str,
) -> Result<(), TerminalError> {
    let ran = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&ran);
    ctx.run(move || async move {
        flag.store(true, Ordering::SeqCst);
        Ok(())
    })
    .name(name)
    .await?;
    if ran.load(Ordering::SeqCst) {
        gate.live();
    } else {
        gate.replayed();
    }
    Ok(())
}

type Held = Vec<(AgentEvent, Vec<Arc<dyn EventSink>>)>;

/// Whether an invocation is still replaying what an earlier attempt recorded, and the events it
/// holds back meanwhile. Every invocation starts replaying (a new one just has nothing to replay:
/// its first step runs, and events flow from then on).
pub(crate) struct EventGate {
    state: Mutex<GateState>,
}

struct GateState {
    replaying: bool,
    held: Held,
}

impl EventGate {
    pub(crate) fn new() -> Self {
        EventGate {
            state: Mutex::new(GateState {
                replaying: true,
                held: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn emit(&self, event: &AgentEvent, sinks: &[Arc<dyn EventSink>]) {
        let mut state = self.lock();
        if state.replaying {
            state.held.push((event.clone(), sinks.to_vec()));
            return;
        }
        drop(state);
        for sink in sinks {
            sink.send(event);
        }
    }

    /// A step ran for real: the replay is over; what was held came after the last recorded
    /// step, so the attempt before may or may not have sent it: it is sent (at least once).
    pub(crate) fn live(&self) {
        let held = {
            let mut state = self.lock();
            state.replaying = false;
            std::mem::take(&mut state.held)
        };
        deliver(held);
    }

    /// A step came from the journal: the attempt that recorded it had sent everything before it.
    pub(crate) fn replayed(&self) {
        let mut state = self.lock();
        if state.replaying {
            state.held.clear();
        }
    }

    /// The handler ends: anything still held is sent.
    pub(crate) fn flush(&self) {
        let held = std::mem::take(&mut self.lock().held);
        deliver(held);
    }
}

fn deliver(held: Held) {
    for (event, sinks) in held {
        for sink in sinks {
            sink.send(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> (Arc<dyn EventSink>, Arc<Mutex<Vec<usize>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let copy = Arc::clone(&seen);
        let sink: Arc<dyn EventSink> = Arc::new(move |event: &AgentEvent| {
            if let AgentEvent::TurnFinished { step, .. } = event {
                copy.lock().unwrap().push(*step);
            }
        });
        (sink, seen)
    }

    fn turn(step: usize) -> AgentEvent {
        AgentEvent::TurnFinished { step, finish: None }
    }

    #[test]
    fn events_before_a_recorded_step_are_dropped_and_the_rest_sent_once() {
        let gate = EventGate::new();
        let (sink, seen) = sink();
        let sinks = [sink];
        gate.emit(&turn(1), &sinks);
        gate.replayed();
        gate.emit(&turn(2), &sinks);
        assert!(seen.lock().unwrap().is_empty(), "held while replaying");
        gate.live();
        gate.emit(&turn(3), &sinks);
        gate.replayed(); // after the replay, a recorded answer changes nothing
        gate.emit(&turn(4), &sinks);
        gate.flush();
        assert_eq!(*seen.lock().unwrap(), [2, 3, 4]);
    }
}
