//! The abilities a run can have besides the loop's own, as one trait, [`Ability`]: plan mode
//! (`plan.rs`) and the typed final answer (`answer.rs`). A run's abilities are chosen once, when
//! it starts, from its settings and its state; the loop (`run.rs`) calls every ability at the same
//! fixed points of a step and has no branch of its own for any of them. A new ability is a new
//! implementation in a file of its own. (The journal wraps the run's I/O instead: `journal.rs`.)

use serde_json::Value;

use super::reason::FinishReason;
use super::state::RunState;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::schema::ToolDefinition;
use agent_llm::message::{ChatRequest, Message, Usage};

/// The run ends after the turn's results are recorded: why, and a typed run's checked value.
pub(super) struct Ending {
    pub(super) finish: FinishReason,
    pub(super) answer: Option<Value>,
}

/// What an ability makes of a finished answer without calls.
pub(super) enum Answered {
    /// The run ends.
    End(Ending),
    /// The model is asked again; the message, if any, tells it why.
    Retry(Option<Message>),
}

/// Something a run can do besides asking the model and running calls. Every method has a default
/// that changes nothing.
pub(super) trait Ability: Send + Sync {
    /// Text added to the system prompt, for the whole run.
    fn instructions(&self) -> Option<String> {
        None
    }

    /// Adds tools to what the model is offered.
    fn tools(&self, _definitions: &mut Vec<ToolDefinition>) {}

    /// Just before a model call, after the run's own checks: `Some` ends the run instead.
    fn before_model(&self, _state: &RunState) -> Option<FinishReason> {
        None
    }

    /// After a model call (a compaction summary's included), with the tokens it used.
    fn after_model(&self, _usage: Usage) {}

    /// Changes a model request before it is sent.
    fn shape<'r>(&'r self, _state: &RunState, _request: &mut ChatRequest<'r>) {}

    /// Whether the repetition guard counts `call`.
    fn counts(&self, _call: &ToolCall) -> bool {
        true
    }

    /// Answers calls of the turn itself instead of running them: fills `answers[i]` for the
    /// calls it takes (slots already filled are another's). `Some` ends the run once the turn's
    /// results are recorded.
    fn take_calls(
        &self,
        _state: &mut RunState,
        _calls: &[ToolCall],
        _answers: &mut [Option<ToolResult>],
    ) -> Option<Ending> {
        None
    }

    /// After a turn's calls ran (before their results are recorded).
    fn after_calls(&self, _state: &mut RunState) {}

    /// A finished answer without calls: `Some` when the ability decides what it means.
    fn on_answer(&self, _state: &mut RunState, _text: &str) -> Option<Answered> {
        None
    }
}
