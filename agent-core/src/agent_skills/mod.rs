//! Agent Skills: folders of instructions (a `SKILL.md` with a name, a description and Markdown,
//! beside optional `scripts/`, `references/` and `assets/`) that a model loads when a task calls for
//! them — the format Claude's tools, Codex and others read.
//!
//! A skill here is a [`Skill`](crate::Skill) the model *calls*; an [`AgentSkill`] is a procedure it
//! *reads*. The registry offers them a level at a time, through one built-in tool, `load_skill`:
//!
//! | level | what the model gets | when |
//! |---|---|---|
//! | 1 | each skill's name and description | always: listed in `load_skill`'s description |
//! | 2 | the instructions (the body of `SKILL.md`), the folder and its file list | `load_skill { name }` |
//! | 3 | one file of the folder | `load_skill { name, file }`, or `run_shell` for a script, if permitted |
//!
//! Instructions or a file longer than the registry's output budget come in pieces of whole lines,
//! each within the budget, ending with which lines it holds and the `offset` to continue from;
//! `load_skill { name, file?, offset, limit }` (lines, from 1) chooses one. The pieces, put
//! together, are the text byte for byte; only a single line longer than the budget is cut (its
//! beginning shown, and the line after it named).
//!
//! Level 1 sits in the tool's description rather than in the system prompt, so a registry carries
//! its skills into any runtime, MCP server or model client without touching their prompts, and
//! one tool's schema is paid once rather than once per skill (docs/PERFORMANCE.md §8 counts the
//! tokens of each choice).
//!
//! Where the skills come from:
//! - compiled into the program by `agent_skills!("folder")` (feature `agent-skills`): checked
//!   against the format's specification at compile time and found by
//!   [`Registry::discover`](crate::Registry::discover), like `#[skill]` functions;
//! - loaded from a folder at run time by `agent_std_tools::AgentSkills::load`, whose files are read
//!   through the workspace sandbox, confined to the skill's folder;
//! - made by hand with [`AgentSkill::new`], and added with
//!   [`Registry::add_agent_skills`](crate::Registry::add_agent_skills).
//!
//! `allowed-tools` is kept but not enforced: what a skill's instructions may make the model do is
//! decided by the registry's hooks and permission rules, as for any other call.

mod embedded;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use embedded::{EmbeddedAgentSkill, EmbeddedFile};

use crate::error::SkillError;

/// One Agent Skill: what its `SKILL.md` declares, its instructions, and its other files.
#[derive(Clone)]
#[non_exhaustive]
pub struct AgentSkill {
    /// Its name (lowercase letters, digits and hyphens; the folder's name).
    pub name: String,
    /// What it does and when to use it: what the model chooses by (level 1).
    pub description: String,
    /// Its licence, as the front matter states it.
    pub license: Option<String>,
    /// What it needs of its environment, as the front matter states it.
    pub compatibility: Option<String>,
    /// The tools it says it may use (`allowed-tools`; kept, not enforced).
    pub allowed_tools: Vec<String>,
    /// Further key-value pairs of the front matter, in file order.
    pub metadata: Vec<(String, String)>,
    /// The Markdown body of `SKILL.md` (level 2).
    pub instructions: Arc<str>,
    /// Its other files (level 3).
    pub files: Arc<dyn SkillFiles>,
}

impl AgentSkill {
    /// A skill with no files besides its instructions.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        instructions: impl Into<Arc<str>>,
    ) -> Self {
        AgentSkill {
            name: name.into(),
            description: description.into(),
            license: None,
            compatibility: None,
            allowed_tools: Vec::new(),
            metadata: Vec::new(),
            instructions: instructions.into(),
            files: Arc::new(NoFiles),
        }
    }

    /// The same skill, with these files.
    pub fn with_files(mut self, files: Arc<dyn SkillFiles>) -> Self {
        self.files = files;
        self
    }

    /// The same skill, with the optional fields of the front matter.
    pub fn with_details(
        mut self,
        license: Option<String>,
        compatibility: Option<String>,
        allowed_tools: Vec<String>,
        metadata: Vec<(String, String)>,
    ) -> Self {
        self.license = license;
        self.compatibility = compatibility;
        self.allowed_tools = allowed_tools;
        self.metadata = metadata;
        self
    }
}

impl fmt::Debug for AgentSkill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentSkill")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("folder", &self.files.folder())
            .field("files", &self.files.list())
            .finish_non_exhaustive()
    }
}

/// The files of a skill's folder other than `SKILL.md`: in the program (compiled in), or on disk
/// behind a sandbox. Reading never reaches outside the folder.
pub trait SkillFiles: Send + Sync {
    /// The folder on disk, when there is one: the model is told it, so that scripts can be run
    /// from there (through `run_shell`, if the permission rules allow). `None` for skills compiled
    /// into the program.
    fn folder(&self) -> Option<&Path>;

    /// The files, as `/`-separated paths relative to the folder, sorted.
    fn list(&self) -> &[String];

    /// One file's bytes. A path that is not one of [`SkillFiles::list`]'s, or that leads outside
    /// the folder, is an error. May block (it is called on a blocking thread).
    fn read(&self, path: &str) -> Result<Vec<u8>, SkillError>;
}

/// A skill without files.
struct NoFiles;

impl SkillFiles for NoFiles {
    fn folder(&self) -> Option<&Path> {
        None
    }

    fn list(&self) -> &[String] {
        &[]
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, SkillError> {
        Err(SkillError::bad_args(
            "file",
            format!("`{path}`: this skill has no files besides its instructions"),
        ))
    }
}
