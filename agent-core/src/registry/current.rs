//! [`CurrentRegistry`]: the registry a run dispatches to, found in the context of its calls.

use std::sync::Arc;

use super::Registry;

/// The registry a run dispatches to, as an extension of the context every call of the run gets
/// (`agent-runtime` puts it there). A skill that makes calls of its own through the same skills
/// (code mode's `run_code`) finds it with `ctx.extension::<CurrentRegistry>()`, so its calls meet
/// the same hooks, permission rules, timeouts and output budget as the model's.
#[derive(Clone)]
pub struct CurrentRegistry(pub Arc<Registry>);

impl std::fmt::Debug for CurrentRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CurrentRegistry")
            .field(&self.0.len())
            .finish()
    }
}
