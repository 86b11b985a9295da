//! Discovery: a registry made of the skills `#[skill]` registered at link time.

use std::sync::Arc;

use super::Registry;
use crate::error::RegistryError;
use crate::skill::SkillRegistration;

impl Registry {
    /// A registry of every skill registered with `#[skill]` in this binary (and the crates it links),
    /// ordered by name so the definitions sent to the model are the same from run to run.
    ///
    /// Two skills with the same name (or alias) are an error naming both source locations; finding
    /// no skill at all is an error too ([`RegistryError::NothingDiscovered`]), because it almost
    /// always means a crate of skills was not linked.
    pub fn discover() -> Result<Registry, RegistryError> {
        Registry::discover_where(|_| true)
    }

    /// Like [`Registry::discover`], keeping only the registrations `keep` accepts. One binary may
    /// host several agents, each with its own skills:
    ///
    /// ```no_run
    /// # use agent_core::Registry;
    /// let coder = Registry::discover_where(|r| r.is_in_module("my_app::coding"))?;
    /// let reader = Registry::discover_where(|r| ["read_file", "list_dir"].contains(&r.name()))?;
    /// # Ok::<(), agent_core::RegistryError>(())
    /// ```
    pub fn discover_where(
        mut keep: impl FnMut(&SkillRegistration) -> bool,
    ) -> Result<Registry, RegistryError> {
        let mut linked: Vec<&SkillRegistration> = inventory::iter::<SkillRegistration>().collect();
        if linked.is_empty() {
            return Err(RegistryError::NothingDiscovered);
        }
        linked.sort_by_key(|r| (r.name(), r.location().file, r.location().line));
        let kept: Vec<&SkillRegistration> = linked.iter().copied().filter(|r| keep(r)).collect();
        if kept.is_empty() {
            let names = linked
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(RegistryError::NothingKept {
                linked: linked.len(),
                names,
            });
        }
        let mut registry = Registry::new();
        for registration in kept {
            registry.insert(
                Arc::from(registration.construct()),
                Some(registration.location()),
            )?;
        }
        Ok(registry)
    }
}
