//! [`CurrentRegistry`]: the registry dispatching the current call, found in the call's context.

use std::sync::Arc;

use super::Registry;

/// The registry that is dispatching the current call, kept in the call's context: an extension
/// of the [`SkillContext`](crate::SkillContext) every call of a run gets (`agent-runtime` puts it
/// there; so does an MCP server for the calls it serves). A skill that makes calls of its own
/// through the same skills (code mode's `run_code`) finds it with
/// `ctx.extension::<CurrentRegistry>()`, so its calls meet the same hooks, permission rules,
/// timeouts and output budget as the model's.
#[derive(Clone)]
pub struct CurrentRegistry(pub Arc<Registry>);

impl std::fmt::Debug for CurrentRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CurrentRegistry")
            .field(&self.0.len())
            .finish()
    }
}
