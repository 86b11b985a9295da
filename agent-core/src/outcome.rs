//! What a call came to ([`Outcome`]): done, failed, or paused waiting for a person. A pause
//! travels as an error a skill can return, but it is not a failure: this tells them apart.

use crate::call::ToolResult;
use crate::error::SkillError;
use crate::pending::Suspension;
use crate::skill::SkillOutput;

/// What a call came to, told apart in a type of its own: it ran to an output, it failed (or was
/// refused), or it is paused waiting for a person (a hook asked, or calls it made wait). A pause
/// travels as [`SkillError::ApprovalRequired`] or [`SkillError::Suspended`] so a skill can
/// return it, but it is not a failure: exporters, adapters and UIs match on this.
///
/// ```
/// use agent_core::{Outcome, SkillError, ToolCall, ToolResult};
/// use serde_json::json;
///
/// let call = ToolCall::new("c1", "delete", json!({}));
/// let asked = ToolResult::new(&call, Err(SkillError::ApprovalRequired("deletes".into())));
/// assert!(matches!(Outcome::of(&asked), Outcome::Paused(_)));
/// let failed = ToolResult::new(&call, Err(SkillError::tool("disk full")));
/// assert!(matches!(Outcome::of(&failed), Outcome::Failed(_)));
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// It ran and produced this output.
    Done(&'a SkillOutput),
    /// It failed (or was refused) with this error, which the model reads.
    Failed(&'a SkillError),
    /// It waits for a person's decision.
    Paused(Pause<'a>),
}

/// Why a call waits ([`Outcome::Paused`]).
#[derive(Debug, Clone, Copy)]
pub enum Pause<'a> {
    /// A hook asked (or the skill did): the call has not run. The reason, for the person.
    Approval(&'a str),
    /// It stopped part-way: calls it made itself wait for decisions.
    Suspended(&'a Suspension),
}

impl<'a> Outcome<'a> {
    /// What `result` came to.
    pub fn of(result: &'a ToolResult) -> Self {
        match &result.output {
            Ok(output) => Outcome::Done(output),
            Err(SkillError::ApprovalRequired(reason)) => Outcome::Paused(Pause::Approval(reason)),
            Err(SkillError::Suspended(suspension)) => Outcome::Paused(Pause::Suspended(suspension)),
            Err(error) => Outcome::Failed(error),
        }
    }

    /// Whether the call waits for a decision.
    pub fn is_paused(&self) -> bool {
        matches!(self, Outcome::Paused(_))
    }
}
