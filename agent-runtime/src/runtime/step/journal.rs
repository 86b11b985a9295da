//! Durable runs: the [`Journal`] a runtime records its steps in, and what a step is. The wrapper
//! that puts a run's effects through a journal is `step/journaled.rs`; the contract is on the trait,
//! where rustdoc shows it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::event::{AgentEvent, EventSink};

/// A boxed, sendable future: what a step is handed to a [`Journal`] as, and what it answers with.
pub type StepFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Which step of a run a journal entry is for. Steps are journaled in the order they start; the
/// name is for people (logs, a journal's UI), not a key a replay looks entries up by.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalStep {
    /// The model call of step `step` (counted from 1).
    Model {
        /// The step.
        step: usize,
    },
    /// A summary of the oldest turns, asked of the model before step `step`'s call.
    Compaction {
        /// The step it comes before.
        step: usize,
    },
    /// The run's id, made once when a durable run starts (its calls' idempotency keys derive
    /// from it), so a replay makes the same keys.
    RunId,
    /// The mark a durable run journals before it runs a call of a skill that is neither
    /// read-only nor idempotent ([`Skill::is_idempotent`](agent_core::Skill::is_idempotent)):
    /// a replay that finds the mark without the call's result knows the call was under way when
    /// the process died, and does not run it again.
    Started {
        /// The step.
        step: usize,
        /// The call's id.
        call_id: String,
        /// The name the model called.
        name: String,
    },
    /// One tool call of step `step`.
    Tool {
        /// The step.
        step: usize,
        /// The call's id.
        call_id: String,
        /// The name the model called.
        name: String,
    },
}

impl std::fmt::Display for JournalStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalStep::RunId => write!(f, "run id"),
            JournalStep::Started {
                step,
                call_id,
                name,
            } => write!(f, "step {step}: tool {name} ({call_id}) started"),
            JournalStep::Model { step } => write!(f, "step {step}: model"),
            JournalStep::Compaction { step } => write!(f, "step {step}: compaction"),
            JournalStep::Tool {
                step,
                call_id,
                name,
            } => write!(f, "step {step}: tool {name} ({call_id})"),
        }
    }
}

/// What a step produced when it ran.
#[derive(Debug, Clone, PartialEq)]
pub enum StepResult {
    /// Its result, to record.
    Done(Value),
    /// A failure that may pass if the step is tried again later (a model that stayed
    /// unreachable through the provider's own retries): record nothing; the journal tries the
    /// step again (Restate retries the invocation by its retry policy) or answers with a
    /// [`JournalError`].
    Retry(String),
}

/// A journal could not give a step's result: it failed, or the run was cancelled through it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JournalError(pub String);

/// Keeps the results of a run's steps so that a later attempt at the same run (after a crash, on
/// another machine) replays them instead of doing them again: the model is not asked again for a
/// turn it already answered, and a tool that already ran does not run again. Give one to a
/// runtime with [`AgentRuntime::journal`](crate::AgentRuntime::journal); `agent-restate`
/// implements it on Restate's `ctx.run`, and the loop knows nothing of Restate.
///
/// - **Steps.** Every model call, compaction summary and tool call is one step, handed to
///   [`Journal::step`] as a future that produces its result as JSON. A journal either runs it and
///   records what it produced, or answers with what it recorded before and drops the future
///   unpolled. Steps arrive in the order they start; a replay must find them in that order (the
///   [`JournalStep`] names them for people, not as keys).
/// - **Always serializable.** What a step produces is a type of agent-core with
///   `Serialize + Deserialize` (a model's answer or its error; a tool's result, with the deferred
///   skills the call loaded), so what goes into a journal is serializable by construction,
///   checked when agent-core builds. An entry that does not read back (written by another
///   version) ends the run with [`AgentError::Resume`](crate::runtime::AgentError::Resume), never with a silent re-run.
/// - **Failures.** A model call that failed transiently after the provider's own retries is
///   [`StepResult::Retry`]: nothing is recorded and the journal tries it again later (Restate
///   retries the invocation); any other model error is recorded, so a replay ends the same way.
/// - **Tool calls one at a time.** A run with a journal runs its calls in call order, one at a
///   time, each its own step, so that a replay meets them in the same order; concurrency-safe
///   calls still run together without a journal.
/// - **Events.** A run with a journal hands each event to [`Journal::emit`], which decides
///   whether the sinks see it: a journal replaying recorded steps can hold events back, so a
///   recovering process does not report again what the failed attempt already reported.
pub trait Journal: Send + Sync {
    /// Runs `run` and records its result — or, when this step's result is recorded already,
    /// drops `run` unpolled and answers with the recorded value.
    fn step<'a>(
        &'a self,
        step: JournalStep,
        run: StepFuture<'a, StepResult>,
    ) -> StepFuture<'a, Result<Value, JournalError>>;

    /// Delivers an event of the run to the runtime's sinks, or holds it back (while replaying).
    /// The default delivers every event.
    fn emit(&self, event: &AgentEvent, sinks: &[Arc<dyn EventSink>]) {
        for sink in sinks {
            sink.send(event);
        }
    }
}
