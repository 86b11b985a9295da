//! What `#[skill]` submits to `inventory` at link time: a [`SkillRegistration`], which
//! [`Registry::discover`](crate::Registry::discover) collects.

use crate::error::SourceLocation;
use crate::skill::DynSkill;

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
