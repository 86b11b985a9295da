//! What a person decides on: a [`PendingCall`] a run paused on, the [`Decision`] that continues
//! it, and a [`Suspension`]: a call that stopped part-way because calls it made itself (a nested
//! agent's, a program's) wait for decisions.
//!
//! A call inside a call is named by its path: each [`Hop`] is a call of an outer run that led to
//! it. [`PendingCall::id`] joins the calls' ids with `/` (`p1/c1`: call `c1` inside the outer call
//! `p1`), and that is the id a decision names; [`PendingCall::path`] joins the skills' names with
//! ` › ` (`researcher › delete_branch`) for a person to read.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::ToolCall;

/// A call a run paused on: what a person needs to decide on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call as the model made it: its id, the name it used, its arguments. For a call
    /// inside another ([`PendingCall::via`] not empty), the id is the inner run's.
    pub call: ToolCall,
    /// The skill's own name (the model may have used an alias).
    pub skill: String,
    /// Whether the skill only reads ([`SkillMetadata::is_read_only`](crate::SkillMetadata)).
    pub is_read_only: bool,
    /// Whether the skill does something hard to undo
    /// ([`SkillMetadata::is_destructive`](crate::SkillMetadata)).
    pub is_destructive: bool,
    /// Why a decision is needed, as the hook wrote it for a person.
    pub reason: String,
    /// The outer calls this one was made inside, outermost first; empty for a call of the run
    /// itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<Hop>,
}

/// One outer call on the way to a [`PendingCall`]: the call of an outer run that made the calls
/// below it (an agent used as a skill, a program's run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// The outer call's id, in the outer run.
    pub call_id: String,
    /// The outer call's skill (the nested agent's name).
    pub skill: String,
}

impl PendingCall {
    /// The id a decision names: the call's own id, after the ids of the outer calls it was made
    /// inside, joined with `/` (`c1`; `p1/c1`; `p1/q2/c1`).
    pub fn id(&self) -> String {
        let mut id = String::new();
        for hop in &self.via {
            id.push_str(&hop.call_id);
            id.push('/');
        }
        id.push_str(&self.call.id);
        id
    }

    /// The skills on the way, for a person: `delete_branch`; `researcher › delete_branch`.
    pub fn path(&self) -> String {
        let mut path = String::new();
        for hop in &self.via {
            path.push_str(&hop.skill);
            path.push_str(" › ");
        }
        path.push_str(&self.skill);
        path
    }

    /// This call as seen one run further out: made inside the outer call `call_id` to `skill`.
    pub fn inside(mut self, call_id: &str, skill: &str) -> Self {
        self.via.insert(
            0,
            Hop {
                call_id: call_id.to_owned(),
                skill: skill.to_owned(),
            },
        );
        self
    }
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
    /// [`HookVerdict::Modify`](crate::HookVerdict::Modify).
    Edit(Value),
}

/// A call that stopped part-way: calls it made itself wait for decisions. A skill returns it as
/// [`SkillError::Suspended`](crate::SkillError::Suspended); an agent run pauses on it as on an
/// approval, listing [`Suspension::pending`] (each seen from outside with
/// [`PendingCall::inside`]), and keeps [`Suspension::state`]. When the run continues, the call
/// runs again with the same arguments, and [`SkillContext::take_resumption`](
/// crate::SkillContext::take_resumption) hands the skill its state and the decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspension {
    /// The inner calls that wait, as the inner run names them.
    pub pending: Vec<PendingCall>,
    /// What the skill needs to go on from where it stopped (a nested run's state).
    pub state: Value,
}

/// What a suspended call gets back when its run continues: the [`Suspension::state`] it handed
/// over, and a decision for each of its pending calls, by [`PendingCall::id`] as the inner run
/// names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resumption {
    /// The state the call suspended with.
    pub state: Value,
    /// The decisions about its pending calls.
    pub decisions: Vec<(String, Decision)>,
}
