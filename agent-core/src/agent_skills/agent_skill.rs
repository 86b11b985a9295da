//! [`AgentSkill`]: one Agent Skill as the registry keeps it, and [`AgentSkillFiles`], where its other
//! files are read from.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

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
    pub files: Arc<dyn AgentSkillFiles>,
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
    pub fn with_files(mut self, files: Arc<dyn AgentSkillFiles>) -> Self {
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
pub trait AgentSkillFiles: Send + Sync {
    /// The folder on disk, when there is one: the model is told it, so that scripts can be run
    /// from there (through `run_shell`, if the permission rules allow). `None` for skills compiled
    /// into the program.
    fn folder(&self) -> Option<&Path>;

    /// The files, as `/`-separated paths relative to the folder, sorted.
    fn list(&self) -> &[String];

    /// One file's bytes. A path that is not one of [`AgentSkillFiles::list`]'s, or that leads outside
    /// the folder, is an error. May block (it is called on a blocking thread).
    fn read(&self, path: &str) -> Result<Vec<u8>, SkillError>;
}

/// A skill without files.
struct NoFiles;

impl AgentSkillFiles for NoFiles {
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
