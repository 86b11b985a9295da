//! What a person decides on: a [`PendingCall`] a run paused on, and the [`Decision`] that
//! continues it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_core::call::ToolCall;

/// A call a run paused on: what a person needs to decide on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call as the model made it: its id (which the decision names), the name it used, its
    /// arguments.
    pub call: ToolCall,
    /// The skill's own name (the model may have used an alias).
    pub skill: String,
    /// Whether the skill only reads ([`SkillMetadata::is_read_only`](agent_core::SkillMetadata)).
    pub is_read_only: bool,
    /// Whether the skill does something hard to undo
    /// ([`SkillMetadata::is_destructive`](agent_core::SkillMetadata)).
    pub is_destructive: bool,
    /// Why a decision is needed, as the hook wrote it for a person.
    pub reason: String,
}

/// What a person decided about a [`PendingCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "decision", content = "with")]
pub enum Decision {
    /// Run the call as it is. It runs exactly once; hooks that asked let it through, hooks that
    /// deny still deny.
    Approve,
    /// Do not run it; the text is the reason the model reads. Counts as a denial.
    Deny(String),
    /// Run it with these arguments instead, validated like a hook's
    /// [`HookVerdict::Modify`](agent_core::HookVerdict::Modify).
    Edit(Value),
}
