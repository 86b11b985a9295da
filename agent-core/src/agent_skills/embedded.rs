//! Agent Skills compiled into the program: what `agent_skills!` submits at link time, and the
//! skills made of it.

use std::path::Path;
use std::sync::Arc;

use super::agent_skill::{AgentSkill, AgentSkillFiles};
use crate::error::SkillError;

/// One Agent Skill as `agent_skills!` embeds it: the front matter it checked at compile time, the
/// whole `SKILL.md`, and every other file of the folder. Written by the macro, not by hand.
#[derive(Debug)]
pub struct EmbeddedAgentSkill {
    /// `name`.
    pub name: &'static str,
    /// `description`.
    pub description: &'static str,
    /// `license`.
    pub license: Option<&'static str>,
    /// `compatibility`.
    pub compatibility: Option<&'static str>,
    /// `allowed-tools`, split on whitespace.
    pub allowed_tools: &'static [&'static str],
    /// `metadata`, in file order.
    pub metadata: &'static [(&'static str, &'static str)],
    /// The whole `SKILL.md`.
    pub skill_md: &'static str,
    /// Where its Markdown body begins, in bytes.
    pub body_offset: usize,
    /// The folder's other files.
    pub files: &'static [EmbeddedFile],
    /// The folder, as the macro call named it (for messages).
    pub source: &'static str,
}

/// One file of an embedded skill's folder.
#[derive(Debug)]
pub struct EmbeddedFile {
    /// Its `/`-separated path, relative to the skill's folder.
    pub path: &'static str,
    /// Its bytes.
    pub bytes: &'static [u8],
}

inventory::collect!(EmbeddedAgentSkill);

impl EmbeddedAgentSkill {
    /// The skill, ready for a registry.
    pub fn to_agent_skill(&'static self) -> AgentSkill {
        let body = self.skill_md.get(self.body_offset..).unwrap_or_default();
        AgentSkill::new(self.name, self.description, body)
            .with_details(
                self.license.map(str::to_owned),
                self.compatibility.map(str::to_owned),
                self.allowed_tools.iter().map(|t| t.to_string()).collect(),
                self.metadata
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
            .with_files(Arc::new(Embedded {
                files: self.files,
                list: self.files.iter().map(|f| f.path.to_owned()).collect(),
            }))
    }
}

impl AgentSkill {
    /// Every skill compiled into this program with `agent_skills!`, sorted by name.
    pub fn embedded() -> Vec<AgentSkill> {
        let mut linked: Vec<&'static EmbeddedAgentSkill> =
            inventory::iter::<EmbeddedAgentSkill>().collect();
        linked.sort_by_key(|s| (s.name, s.source));
        linked.into_iter().map(|s| s.to_agent_skill()).collect()
    }
}

/// The files of a compiled-in skill.
struct Embedded {
    files: &'static [EmbeddedFile],
    list: Vec<String>,
}

impl AgentSkillFiles for Embedded {
    fn folder(&self) -> Option<&Path> {
        None
    }

    fn list(&self) -> &[String] {
        &self.list
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, SkillError> {
        let wanted = path.trim_start_matches("./");
        self.files
            .iter()
            .find(|f| f.path == wanted)
            .map(|f| f.bytes.to_vec())
            .ok_or_else(|| {
                SkillError::bad_args("file", format!("`{path}` is not one of this skill's files"))
            })
    }
}
