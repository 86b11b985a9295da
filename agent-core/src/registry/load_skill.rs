//! The built-in `load_skill` skill, and adding Agent Skills to a registry: level 1 (names and
//! descriptions) in the tool's description, level 2 (instructions) and level 3 (files) on call.
//! See [`mod@crate::agent_skills`].

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::Registry;
use crate::agent_skills::AgentSkill;
use crate::context::SkillContext;
use crate::error::{RegistryError, SkillError};
use crate::skill::{Skill, SkillOutput};

/// The built-in skill's name.
pub(crate) const NAME: &str = "load_skill";

impl Registry {
    /// Adds Agent Skills, offered to the model through the built-in `load_skill` tool (added with
    /// the first of them; a skill of yours called `load_skill` replaces it). A name that is empty,
    /// longer than 64 characters or already among the registry's Agent Skills is an error, and then
    /// nothing is added.
    pub fn add_agent_skills(
        &mut self,
        skills: impl IntoIterator<Item = AgentSkill>,
    ) -> Result<&mut Self, RegistryError> {
        let mut all = self.skills.agent_skills().to_vec();
        for skill in skills {
            if skill.name.is_empty() || skill.name.chars().count() > 64 {
                return Err(RegistryError::InvalidName { name: skill.name });
            }
            if all.iter().any(|s| s.name == skill.name) {
                return Err(RegistryError::Duplicate {
                    name: skill.name,
                    first: None,
                    second: None,
                });
            }
            all.push(skill);
        }
        all.sort_by(|a, b| a.name.cmp(&b.name));
        self.skills.set_agent_skills(all);
        Ok(self)
    }

    /// The Agent Skills the registry offers, sorted by name.
    pub fn agent_skills(&self) -> &[AgentSkill] {
        self.skills.agent_skills()
    }
}

/// The arguments of `load_skill`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadSkillInput {
    /// The skill's name, as listed.
    name: String,
    /// One of the skill's files (a path its instructions mention, e.g. `references/forms.md`), to
    /// read it instead of the instructions.
    file: Option<String>,
}

/// The built-in skill: the registry's Agent Skills, and its description listing them.
pub(crate) struct LoadSkill {
    skills: Arc<[AgentSkill]>,
    description: String,
}

impl LoadSkill {
    pub(crate) fn new(skills: Arc<[AgentSkill]>) -> Self {
        let mut description = String::from(
            "Load a skill: instructions for a kind of task, with files they may refer to. When a \
             task matches a skill below, load it first and follow it. With `file`, read one of \
             the skill's files instead.\n\nSkills:",
        );
        for skill in skills.iter() {
            description.push_str("\n- ");
            description.push_str(&skill.name);
            description.push_str(": ");
            description.push_str(&one_line(&skill.description));
        }
        LoadSkill {
            skills,
            description,
        }
    }

    fn find(&self, name: &str) -> Result<&AgentSkill, SkillError> {
        self.skills.iter().find(|s| s.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            SkillError::bad_args(
                "name",
                format!(
                    "no skill is called `{name}`; the skills are: {}",
                    names.join(", ")
                ),
            )
        })
    }
}

/// A description on one line (YAML folded text may keep line breaks).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[async_trait]
impl Skill for LoadSkill {
    type Input = LoadSkillInput;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(
        &self,
        input: LoadSkillInput,
        _ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        let skill = self.find(input.name.trim())?;
        match input.file {
            None => Ok(instructions(skill).into()),
            Some(path) => read_file(skill, path).await.map(SkillOutput::from),
        }
    }
}

/// Level 2: where the skill is, what files it has, and its instructions.
fn instructions(skill: &AgentSkill) -> String {
    let files = skill.files.list();
    let mut text = format!("Skill `{}`", skill.name);
    match skill.files.folder() {
        Some(folder) => text.push_str(&format!(
            " (folder: {}; paths in its instructions are relative to it)",
            folder.display()
        )),
        None if !files.is_empty() => {
            text.push_str(" (compiled into this program: its files can be read, not run)")
        }
        None => {}
    }
    if let Some(compatibility) = &skill.compatibility {
        text.push_str(&format!("\nRequires: {}", one_line(compatibility)));
    }
    if !files.is_empty() {
        text.push_str(&format!(
            "\nFiles (read one with load_skill {{\"name\": \"{}\", \"file\": …}}): {}",
            skill.name,
            files.join(", ")
        ));
    }
    text.push_str("\n\n");
    text.push_str(skill.instructions.trim_start_matches(['\r', '\n']));
    text
}

/// Level 3: one file, as text, read on a blocking thread.
async fn read_file(skill: &AgentSkill, path: String) -> Result<String, SkillError> {
    let files = skill.files.clone();
    let shown = path.clone();
    let bytes = tokio::task::spawn_blocking(move || files.read(&path))
        .await
        .map_err(|e| SkillError::tool(format!("reading `{shown}` failed: {e}")))??;
    String::from_utf8(bytes).map_err(|e| {
        SkillError::tool(format!(
            "`{shown}` is not text ({} bytes); run or copy it rather than read it",
            e.as_bytes().len()
        ))
    })
}
