//! Discovery: what `#[skill]` registers at link time ([`SkillRegistration`]) and the registry made
//! of it.

use std::sync::Arc;

use super::Registry;
use crate::agent_skills::AgentSkill;
use crate::error::{RegistryError, SourceLocation};
use crate::skill::DynSkill;

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

/// What `#[skill]` submits to `inventory` so that [`Registry::discover`](crate::Registry::discover)
/// finds the skill: its name, where it was defined, and how to make one.
pub struct SkillRegistration {
    name: &'static str,
    location: SourceLocation,
    constructor: fn() -> Box<dyn DynSkill>,
}

impl SkillRegistration {
    /// A registration, usable in `inventory::submit!` (it is `const`).
    pub const fn new(
        name: &'static str,
        module_path: &'static str,
        file: &'static str,
        line: u32,
        constructor: fn() -> Box<dyn DynSkill>,
    ) -> Self {
        SkillRegistration {
            name,
            location: SourceLocation {
                module_path,
                file,
                line,
            },
            constructor,
        }
    }

    /// The skill's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The module the skill was defined in, e.g. `my_agent::tools::files`.
    pub fn module_path(&self) -> &'static str {
        self.location.module_path
    }

    /// Where the skill was defined.
    pub fn location(&self) -> SourceLocation {
        self.location
    }

    /// Whether the skill was defined in `module` or one of its submodules (`my_agent::tools` matches
    /// `my_agent::tools::files` but not `my_agent::toolshed`).
    pub fn is_in_module(&self, module: &str) -> bool {
        let path = self.location.module_path;
        path == module || (path.starts_with(module) && path[module.len()..].starts_with("::"))
    }

    /// Makes the skill.
    pub fn construct(&self) -> Box<dyn DynSkill> {
        (self.constructor)()
    }
}

impl std::fmt::Debug for SkillRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillRegistration")
            .field("name", &self.name)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

inventory::collect!(SkillRegistration);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_matching_respects_path_segments() {
        fn make() -> Box<dyn DynSkill> {
            unreachable!("not constructed in this test")
        }
        let reg = SkillRegistration::new("x", "app::tools::files", "f.rs", 1, make);
        assert!(reg.is_in_module("app::tools"));
        assert!(reg.is_in_module("app::tools::files"));
        assert!(!reg.is_in_module("app::tool"));
    }
}
