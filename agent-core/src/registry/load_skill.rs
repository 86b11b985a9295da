//! The built-in `load_skill` skill, and adding Agent Skills to a registry: level 1 (names and
//! descriptions) in the tool's description, level 2 (instructions) and level 3 (files) on call.
//! See [`mod@crate::agent_skills`].
//!
//! Instructions and files longer than the registry's output budget come in pieces of whole
//! lines, each within the budget, that say which lines they hold and the `offset` to continue
//! from (see [`super::pieces`]); `offset` (1-based) and `limit` (lines) choose a piece. Put
//! together, the pieces are the text byte for byte.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::Registry;
use super::pieces::{self, Window};
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
        self.skills
            .set_agent_skills(all, self.settings.output_budget);
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
    /// The first line to return (from 1), to continue where a piece ended.
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// The most lines to return.
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

/// The built-in skill: the registry's Agent Skills, its description listing them, and the
/// registry's output budget its pieces fit in.
pub(crate) struct LoadSkill {
    skills: Arc<[AgentSkill]>,
    description: String,
    output_budget: usize,
}

impl LoadSkill {
    pub(crate) fn new(skills: Arc<[AgentSkill]>, output_budget: usize) -> Self {
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
            output_budget,
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
        let window = Window {
            offset: input.offset,
            limit: input.limit,
        };
        let budget = self.output_budget;
        let text = match input.file {
            None => {
                let what = format!("the instructions of `{}`", skill.name);
                let body = skill.instructions.trim_start_matches(['\r', '\n']);
                pieces::piece(body, &header(skill), window, budget, &what)?
            }
            Some(path) => {
                let what = format!("`{path}`");
                let text = read_file(skill, path).await?;
                pieces::piece(&text, "", window, budget, &what)?
            }
        };
        Ok(text.into())
    }
}

/// Level 2, before the instructions: where the skill is and what files it has.
fn header(skill: &AgentSkill) -> String {
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
