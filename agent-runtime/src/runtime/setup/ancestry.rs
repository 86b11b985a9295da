//! [`Ancestry`]: where an [`AgentRuntime`](crate::runtime::AgentRuntime) runs among agents, set when
//! another runtime runs it as a skill (`agents/sub_agent.rs`) or hands it the conversation
//! (`agents/handoff.rs`); a runtime built by a user has none. Kept apart from its [`Settings`](
//! crate::runtime::setup::settings::Settings), which the user sets.

use std::sync::Arc;

use crate::runtime::abilities::tree_budget::TreeCounter;

/// The agents above a runtime's runs, and what they share with it.
#[derive(Clone, Default)]
pub(in crate::runtime) struct Ancestry {
    /// The agents from the outermost run to this one, when this runtime runs as another's skill
    /// ([`AgentRuntime::into_skill`](crate::runtime::AgentRuntime::into_skill)); empty otherwise.
    pub(in crate::runtime) path: Vec<String>,
    /// The tree budgets of the runs above, when this runtime runs as another's skill.
    pub(in crate::runtime) tree: Vec<Arc<TreeCounter>>,
    /// When this runtime runs as another's skill: the idempotency key of that call, which a
    /// new run's id derives from, so a replay of the outer call makes the same inner keys.
    pub(in crate::runtime) parent_key: Option<String>,
}
