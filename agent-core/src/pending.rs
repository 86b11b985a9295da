//! What a person decides on: a [`PendingCall`] a run paused on, the [`Decision`] that continues
//! it, and a [`Suspension`]: a call that stopped part-way because calls it made itself (a nested
//! agent's, a program's) wait for decisions.
//!
//! A call inside a call is named by its path: each [`PathStep`] is a call of an outer run that led to
//! it, or an agent the conversation was handed to ([`PathStep::handoff`]). [`PendingCall::id`] joins
//! the calls' ids with `/` (`p1/c1`: call `c1` inside the outer call `p1`), and that is the id a
//! decision names; [`PendingCall::path`] joins the skills' and agents' names with ` › `
//! (`researcher › delete_branch`; `billing › refund` for a call of the agent a run handed the
//! conversation to) for a person to read.

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
    /// The outer calls this one was made inside, and the agents the conversation was handed to
    /// on the way ([`PathStep::handoff`]), outermost first; empty for a call of the run's own agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<PathStep>,
}

/// One step on the way to a [`PendingCall`]: the call of an outer run that made the calls
/// below it (an agent used as a skill, a program's run), or an agent the run handed the
/// conversation to ([`PathStep::handoff`]: no call of its own, so no part of the id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathStep {
    /// The outer call's id, in the outer run; empty for a handoff.
    pub call_id: String,
    /// The outer call's skill (the nested agent's name), or the agent handed to.
    pub skill: String,
}

impl PathStep {
    /// The agent `agent` the conversation was handed to: named in the path, not in the id (the
    /// calls of the agent handed to are the run's own).
    pub fn handoff(agent: impl Into<String>) -> Self {
        PathStep {
            call_id: String::new(),
            skill: agent.into(),
        }
    }

    /// Whether this is a handoff ([`PathStep::handoff`]) rather than an outer call.
    pub fn is_handoff(&self) -> bool {
        self.call_id.is_empty()
    }
}

impl PendingCall {
    /// The id a decision names: the call's own id, after the ids of the outer calls it was made
    /// inside, joined with `/` (`c1`; `p1/c1`; `p1/q2/c1`).
    pub fn id(&self) -> String {
        let mut id = String::new();
        for step in self.via.iter().filter(|h| !h.is_handoff()) {
            id.push_str(&step.call_id);
            id.push('/');
        }
        id.push_str(&self.call.id);
        id
    }

    /// The skills and agents on the way, for a person: `delete_branch`; `researcher ›
    /// delete_branch`; `billing › refund`.
    pub fn path(&self) -> String {
        let mut path = String::new();
        for step in &self.via {
            path.push_str(&step.skill);
            path.push_str(" › ");
        }
        path.push_str(&self.skill);
        path
    }

    /// The digest of this call as a person sees it: SHA-256 over its id ([`PendingCall::id`]),
    /// the skills on its way and its own ([`PendingCall::path`]'s parts), and its arguments in
    /// canonical form (keys sorted), as 64 hex digits. A decision made with it
    /// ([`CallRef::seen`]) answers this call only: a state whose call differs in any of these
    /// is refused, so a page that showed one version and posts a decision cannot approve
    /// another.
    pub fn digest(&self) -> String {
        let mut arguments = Vec::new();
        crate::digest::canonical_json(&self.call.arguments, &mut arguments);
        let mut path = Vec::new();
        for step in &self.via {
            path.push(step.skill.as_bytes());
        }
        path.push(self.skill.as_bytes());
        let id = self.id();
        let path = path.join(&0u8);
        crate::digest::sha256_hex(&[id.as_bytes(), &path, &arguments])
    }

    /// The outermost call this one was made inside ([`PendingCall::via`]'s first step that is
    /// not a handoff); `None` for a call of the run itself.
    pub fn outer(&self) -> Option<&PathStep> {
        self.via.iter().find(|h| !h.is_handoff())
    }

    /// This call as the run one level in sees it: without its outermost call's step, and the
    /// handoffs of the run out here before it. `None` for a call of the run itself.
    pub fn within(&self) -> Option<PendingCall> {
        let at = self.via.iter().position(|h| !h.is_handoff())?;
        let mut inner = self.clone();
        inner.via.drain(..=at);
        Some(inner)
    }

    /// This call as seen from the agent that handed the conversation to `agent`.
    pub fn handed_to(mut self, agent: &str) -> Self {
        self.via.insert(0, PathStep::handoff(agent));
        self
    }

    /// This call as seen one run further out: made inside the outer call `call_id` to `skill`.
    pub fn inside(mut self, call_id: &str, skill: &str) -> Self {
        self.via.insert(
            0,
            PathStep {
                call_id: call_id.to_owned(),
                skill: skill.to_owned(),
            },
        );
        self
    }
}

/// Which pending call a decision answers: its id ([`PendingCall::id`]), and, when the decision
/// was made on a call a person was shown, that call's [`PendingCall::digest`]. A plain id (`"c1"`)
/// converts into one without a digest; a `&PendingCall` into one with its digest, which is what
/// a user interface should send back:
///
/// ```
/// use agent_core::pending::{CallRef, Decision, PendingCall};
/// use agent_core::ToolCall;
/// use serde_json::json;
///
/// let shown = PendingCall {
///     call: ToolCall::new("c1", "transfer", json!({"to": "alice", "cents": 100})),
///     skill: "transfer".into(),
///     is_read_only: false,
///     is_destructive: true,
///     reason: "moves money".into(),
///     via: Vec::new(),
/// };
/// let answer: (CallRef, Decision) = (CallRef::from(&shown), Decision::Approve);
/// assert_eq!(answer.0.id, "c1");
/// assert_eq!(answer.0.seen.as_deref(), Some(shown.digest().as_str()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRef {
    /// The pending call's id (`c1`, `p1/c1`).
    pub id: String,
    /// The digest of the call the decision was made on; checked against the call that would
    /// run before anything does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<String>,
}

impl CallRef {
    /// A reference to the call `id` as the person saw it (`digest`: its
    /// [`PendingCall::digest`]).
    pub fn seen(id: impl Into<String>, digest: impl Into<String>) -> Self {
        CallRef {
            id: id.into(),
            seen: Some(digest.into()),
        }
    }
}

impl From<&str> for CallRef {
    fn from(id: &str) -> Self {
        CallRef {
            id: id.to_owned(),
            seen: None,
        }
    }
}

impl From<String> for CallRef {
    fn from(id: String) -> Self {
        CallRef { id, seen: None }
    }
}

impl From<&String> for CallRef {
    fn from(id: &String) -> Self {
        CallRef::from(id.as_str())
    }
}

impl From<&PendingCall> for CallRef {
    fn from(call: &PendingCall) -> Self {
        CallRef::seen(call.id(), call.digest())
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
    /// The [`PendingCall::digest`] of each pending call as the outer run showed it (seen from
    /// inside: [`PendingCall::within`]), by the inner run's id. A skill that resumes checks its
    /// own pending calls against them ([`Resumption::check`]) before anything runs, so an inner
    /// state edited while it waited cannot run another call than the person saw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<(String, String)>,
}

impl Resumption {
    /// The decisions as [`CallRef`]s carrying the digests the outer run showed, for
    /// continuing an inner run.
    pub fn call_refs(&self) -> Vec<(CallRef, Decision)> {
        self.decisions
            .iter()
            .map(|(id, decision)| {
                let seen = self
                    .seen
                    .iter()
                    .find(|(seen_id, _)| seen_id == id)
                    .map(|(_, digest)| digest.clone());
                (
                    CallRef {
                        id: id.clone(),
                        seen,
                    },
                    decision.clone(),
                )
            })
            .collect()
    }

    /// Checks the calls an inner run or program says wait against what the outer run showed:
    /// each has a digest here and it matches. An error names the first that differs.
    pub fn check(&self, pending: &[PendingCall]) -> Result<(), String> {
        for call in pending {
            let id = call.id();
            match self.seen.iter().find(|(seen_id, _)| *seen_id == id) {
                Some((_, digest)) if *digest == call.digest() => {}
                Some(_) => {
                    return Err(format!(
                        "the call `{id}` is not the one the person decided on (its skill or \
                         arguments changed while it waited): refused, nothing ran"
                    ));
                }
                None if self.seen.is_empty() => {}
                None => {
                    return Err(format!(
                        "the call `{id}` was not among the calls the person decided on: \
                         refused, nothing ran"
                    ));
                }
            }
        }
        Ok(())
    }
}
