//! Discovery: the registry made of what `#[skill]` registered at link time
//! ([`SkillRegistration`]s).

use std::sync::Arc;

use super::Registry;
use super::registration::SkillRegistration;
use crate::agent_skills::AgentSkill;
use crate::error::RegistryError;

impl Registry {
    /// A registry of every skill registered with `#[skill]` in this binary (and the crates it links),
    /// ordered by name so the definitions sent to the model are the same from run to run.
    ///
    /// Two skills with the same name (or alias) are an error naming both source locations; finding
    /// no skill at all is an error too ([`RegistryError::NothingDiscovered`]), because it almost
    /// always means a crate of skills was not linked.
    ///
    /// Agent Skills compiled in with `agent_skills!` are found too, and offered through the
    /// built-in `load_skill` (see [`mod@crate::agent_skills`]).
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
        let agent_skills = AgentSkill::embedded();
        if linked.is_empty() {
            if agent_skills.is_empty() {
                return Err(RegistryError::NothingDiscovered);
            }
            let mut registry = Registry::new();
            registry.add_agent_skills(agent_skills)?;
            return Ok(registry);
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
        registry.add_agent_skills(agent_skills)?;
        Ok(registry)
    }
}
