//! The abilities a run can have besides the loop's own, as one trait, [`Ability`]:
//!
//! | ability | file | what it adds |
//! |---|---|---|
//! | plan mode | `abilities/plan_mode.rs` | calls that change things denied; the first finished answer is the plan |
//! | the typed answer | `finish/typed_answer.rs` | `final_answer` or a response schema; answers checked, retries counted |
//! | handoffs | `agents/handoff.rs` | `transfer_to_<name>` tools; a call to one ends this agent's part |
//! | children's usage | `agents/nesting.rs` | what the agents called as skills used, added after a turn |
//! | the cost budget | `abilities/cost_budget.rs` | before a model call, the run's spending against `max_cost` |
//! | tree budgets | `abilities/tree_budget.rs` | before a model call, budgets shared with the agents above |
//!
//! (Files are named from `src/runtime/`. A test checks this table against the code: every
//! `impl Ability` is in a file it names.)
//! A run's abilities are chosen once, when
//! it starts, from its settings and its state (`step/drive.rs`); the loop (`step/agent_loop.rs`) calls every ability at the same
//! fixed points of a step and has no branch of its own for any of them. A new ability is a new
//! implementation in a file of its own. (The journal wraps the run's I/O instead: `step/journal.rs`.)

use serde_json::Value;

use crate::runtime::finish::finish_reason::FinishReason;
use crate::runtime::step::run_state::RunState;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::schema::ToolDefinition;
use agent_llm::message::{ChatRequest, Message, Usage};

/// The run ends after the turn's results are recorded: why, and a typed run's checked value.
pub(in crate::runtime) struct Ending {
    pub(in crate::runtime) finish: FinishReason,
    pub(in crate::runtime) answer: Option<Value>,
}

/// What an ability makes of a finished answer without calls.
pub(in crate::runtime) enum Answered {
    /// The run ends.
    End(Ending),
    /// The model is asked again; the message, if any, tells it why.
    Retry(Option<Message>),
}

/// Something a run can do besides asking the model and running calls. Every method has a default
/// that changes nothing.
pub(in crate::runtime) trait Ability: Send + Sync {
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

#[cfg(test)]
mod tests {
    /// Every implementation of [`super::Ability`] is in a file the module's table names, and the
    /// table names no file without one.
    #[test]
    fn the_table_of_abilities_is_the_code() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime");
        let docs = include_str!("ability.rs");
        let table: Vec<&str> = docs
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .filter(|l| l.starts_with("//! | "))
            .filter_map(|l| l.split('`').nth(1).filter(|f| f.ends_with(".rs")))
            .collect();
        let mut implemented = Vec::new();
        let mut folders = vec![folder.clone()];
        while let Some(dir) = folders.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let name = path.strip_prefix(&folder).unwrap().to_string_lossy();
                let name = name.replace('\\', "/");
                if name != "abilities/ability.rs" && text.contains("impl Ability for") {
                    implemented.push(name);
                }
            }
        }
        assert!(!implemented.is_empty(), "no ability found under {folder:?}");
        implemented.sort();
        let mut named: Vec<String> = table.iter().map(|f| f.to_string()).collect();
        named.sort();
        assert_eq!(implemented, named);
    }
}
