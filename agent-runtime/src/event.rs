//! What happens during a run, as it happens: [`AgentEvent`]s delivered to every [`EventSink`]
//! attached to the runtime. UIs render them, logs record them, tests assert on them.
//!
//! A closure is a sink, and so is a tokio channel:
//!
//! ```
//! use agent_runtime::{AgentEvent, EventSink};
//!
//! let printer = |event: &AgentEvent| {
//!     if let AgentEvent::TextDelta { text, .. } = event {
//!         print!("{text}");
//!     }
//! };
//! let (sender, _receiver) = tokio::sync::mpsc::unbounded_channel::<AgentEvent>();
//! let sinks: Vec<Box<dyn EventSink>> = vec![Box::new(printer), Box::new(sender)];
//! # let _ = sinks;
//! ```

use std::time::Duration;

use crate::runtime::{FinishReason, PendingCall};
use agent_core::call::{ToolCall, ToolResult};
use agent_llm::message::Usage;

/// One thing that happened in a run. Every event carries the step (model call) it belongs to,
/// counted from 1. [`AgentEvent::TurnFinished`] ends every turn, once, and the last one of a run
/// carries the run's [`FinishReason`] (a run that ends between two steps, on a budget or a
/// cancellation, ends its last step with that reason).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A piece of the model's text, while streaming.
    TextDelta {
        /// The step.
        step: usize,
        /// The piece.
        text: String,
    },
    /// A piece of the model's thinking, while streaming with thinking on. Never part of the
    /// answer's text.
    ThinkingDelta {
        /// The step.
        step: usize,
        /// The piece.
        text: String,
    },
    /// A piece of a tool call's arguments (JSON text), while streaming: for a UI that shows a
    /// call as the model writes it. The pieces of one call, joined, are its arguments; the whole
    /// call follows as [`AgentEvent::ToolCall`] before it runs. A typed run's `final_answer`
    /// call streams this way too.
    ToolCallDelta {
        /// The step.
        step: usize,
        /// The call's id, as its [`AgentEvent::ToolCall`] will carry it.
        call_id: String,
        /// The tool called.
        name: String,
        /// The piece.
        arguments: String,
    },
    /// The model's whole text of this turn (not sent when the turn has no text).
    AssistantText {
        /// The step.
        step: usize,
        /// The text.
        text: String,
    },
    /// The model asked for a tool call; sent before it runs.
    ToolCall {
        /// The step.
        step: usize,
        /// The call.
        call: ToolCall,
    },
    /// A tool call's result; sent in call order once the turn's calls are done.
    ToolResult {
        /// The step.
        step: usize,
        /// The result.
        result: ToolResult,
    },
    /// Tokens used by this step's model call, and by the run so far.
    Usage {
        /// The step.
        step: usize,
        /// This call's tokens.
        usage: Usage,
        /// The run's tokens so far.
        total: Usage,
        /// What this call cost ([`Cost::UNPRICED`](agent_llm::Cost::UNPRICED) when its model
        /// has no price).
        cost: agent_llm::Cost,
        /// What the run cost so far.
        total_cost: agent_llm::Cost,
        /// The provider that answered this call (`anthropic`, `openai`): the runtime's own, or,
        /// behind a [`Failover`](agent_llm::Failover), the one that took the call.
        provider: String,
        /// The model that answered, as the answer names it (`None` when it does not).
        model: Option<String>,
    },
    /// The oldest turns were replaced by a summary to keep the transcript within its limit.
    Compacted {
        /// The step.
        step: usize,
        /// Messages replaced by the summary.
        removed: usize,
        /// Messages kept as they were.
        kept: usize,
        /// Length of the summary, in characters.
        summary_chars: usize,
    },
    /// Media of older turns (images, documents, audio) was replaced by a line saying what each
    /// part was, to keep the transcript within its limit; the first thing compaction does before
    /// it summarises.
    MediaDropped {
        /// The step.
        step: usize,
        /// Parts replaced.
        parts: usize,
        /// Their bytes.
        bytes: usize,
    },
    /// The model call failed transiently and is being retried.
    Retry {
        /// The step.
        step: usize,
        /// The attempt that failed.
        attempt: u32,
        /// The wait before the next attempt.
        delay: Duration,
        /// What went wrong.
        error: String,
    },
    /// The run pauses: these calls need a decision from outside (see
    /// [`AgentRuntime::continue_paused`](crate::AgentRuntime::continue_paused)). The turn's
    /// `TurnFinished`, with [`FinishReason::AwaitingApproval`], follows.
    AwaitingApproval {
        /// The step.
        step: usize,
        /// The calls waiting, in call order.
        pending: Vec<PendingCall>,
    },
    /// An event of an agent this run called as a skill ([`AgentRuntime::into_skill`](
    /// crate::AgentRuntime::into_skill)), or of one that agent called: `path` names the agents
    /// from this run's child down to the one the event is from (`["researcher"]`,
    /// `["researcher", "checker"]`), `calls` the calls that ran them (`["p1", "c2"]`), which tell
    /// two invocations of one agent apart. Its step is that agent's own.
    #[non_exhaustive]
    Nested {
        /// The agents on the way, outermost first.
        path: Vec<String>,
        /// The id of the call that ran each agent of `path`, in the run above it (empty when
        /// the call had none).
        calls: Vec<String>,
        /// The event, as that agent's sinks got it.
        event: Box<AgentEvent>,
    },
    /// The agent whose turn it was handed the conversation to `to` ([`AgentRuntime::handoff`](
    /// crate::AgentRuntime::handoff)), which carries on from the next step; that turn's
    /// `TurnFinished` came first, without a finish.
    HandedOff {
        /// The step that handed over.
        step: usize,
        /// The agent that takes over.
        to: String,
    },
    /// A turn ended. `finish` is set on the last event of the run.
    TurnFinished {
        /// The step.
        step: usize,
        /// Why the run ended, when it did.
        finish: Option<FinishReason>,
    },
}

/// Somewhere events go. Called synchronously, in order, from the run's task: keep it quick (send
/// to a channel for slow work).
pub trait EventSink: Send + Sync {
    /// Receives one event.
    fn send(&self, event: &AgentEvent);
}

impl<F: Fn(&AgentEvent) + Send + Sync> EventSink for F {
    fn send(&self, event: &AgentEvent) {
        self(event)
    }
}

impl EventSink for tokio::sync::mpsc::UnboundedSender<AgentEvent> {
    /// Sends a copy; a closed receiver is ignored.
    fn send(&self, event: &AgentEvent) {
        let _ = tokio::sync::mpsc::UnboundedSender::send(self, event.clone());
    }
}

impl EventSink for tokio::sync::mpsc::Sender<AgentEvent> {
    /// Sends a copy without waiting; when the channel is full or closed the event is dropped.
    fn send(&self, event: &AgentEvent) {
        let _ = self.try_send(event.clone());
    }
}
