//! Agent Skills loaded from folders at run time, their files read through the sandbox.
//!
//! An Agent Skill is a folder with a `SKILL.md` (front matter and instructions) and optional
//! `scripts/`, `references/` and `assets/` (see [`mod@agent_core::agent_skills`]). [`AgentSkills::load`]
//! finds the skill folders in a directory, checks each `SKILL.md` against the format's rules (with
//! [`agent_skills_spec`], the same checks `agent_skills!` makes at compile time), and returns each
//! good one as an [`AgentSkill`] ready for
//! [`Registry::add_agent_skills`](agent_core::Registry::add_agent_skills):
//!
//! ```
//! use agent_core::Registry;
//! use agent_std_tools::{AgentSkills, ShellConfig};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # std::fs::create_dir(dir.path().join("greet")).unwrap();
//! # std::fs::write(dir.path().join("greet/SKILL.md"),
//! #     "---\nname: greet\ndescription: Greet people.\n---\nSay hello.\n").unwrap();
//! let loaded = AgentSkills::load(dir.path()).unwrap();
//! for bad in &loaded.invalid {
//!     eprintln!("{bad}"); // `…/SKILL.md:2: … (rule `name-matches-folder`)`, one line per violation
//! }
//! let mut registry = Registry::new();
//! registry.add_agent_skills(loaded.skills).unwrap();
//! // `run_shell` may then read (and run) what is in the skills' folders.
//! let shell = ShellConfig::default().with_agent_skills(registry.agent_skills());
//! # assert_eq!(shell.read_paths.len(), 1);
//! ```
//!
//! # Decisions
//!
//! - **One bad skill does not hide the others.** [`AgentSkills::load`] returns the skills that
//!   pass in [`LoadedAgentSkills::skills`], and each one that does not in [`LoadedAgentSkills::invalid`]
//!   (its `SKILL.md`, and every rule it breaks with the line) or [`LoadedAgentSkills::unreadable`] (a
//!   folder that could not be opened or listed). [`AgentSkills::load_strict`] fails on the first
//!   of them instead, for programs whose skills must all load (a release, a test).
//! - **A directory that is itself a skill** (it holds a `SKILL.md`) is loaded as that one skill;
//!   otherwise each immediate subfolder holding a `SKILL.md` is a skill (hidden folders skipped,
//!   folders linked into place followed), in name order.
//! - **Reading a file never leaves the skill's folder.** Each skill gets its own
//!   [`Workspace`] opened at its folder when it is loaded, and every read is resolved beneath
//!   that capability by the operating system: `..`, absolute paths and a symbolic link that leads
//!   out (planted before or after loading) are refused, even when the folder lies outside the
//!   agent's workspace, and a path that names another skill's file reaches nothing. A read
//!   never goes through the agent's workspace either: the two are separate capabilities.
//! - **Only the listed files are read.** A skill's files are listed once, when it is loaded
//!   ([`agent_skills_spec::files`]: regular files, symbolic links skipped, at most
//!   [`agent_skills_spec::MAX_FILES`]); the model sees that list, and a path not on it is refused
//!   before anything is opened, so a file added later (or a link put in place of a folder) is
//!   not read. `SKILL.md` itself is not on the list: its body is the instructions.
//! - **Reads are bounded.** A file larger than [`AgentSkills::max_file_bytes`] (default
//!   [`MAX_FILE_BYTES`], 1 MiB) is refused with its size, whether the size is seen before reading
//!   or the file grows while it is read; pipes, sockets and devices are refused without blocking
//!   (the file is opened non-blocking and checked to be a regular file). Reading is blocking code:
//!   `load_skill` calls it on a blocking thread.
//! - **Loading is blocking code too** (it reads every `SKILL.md` and walks every folder): call it
//!   before the async runtime starts, or on a blocking thread.
//! - **The folder is the one seen at load time.** The capability is opened once, so renaming or
//!   replacing the folder afterwards does not redirect reads; [`AgentSkillFiles::folder`] is its
//!   canonical path (links resolved), which the model is told so that it can run a script with
//!   `run_shell`.
//! - **Scripts run only through `run_shell`**, gated by the registry's hooks and permission rules
//!   like any other command. Its Landlock sandbox reads only the system's folders and the
//!   workspace, so a skill folder elsewhere must be added to [`ShellConfig::read_paths`]:
//!   [`ShellConfig::with_agent_skills`] adds every loaded skill's folder, read-only.

use std::fmt;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use agent_core::{AgentSkill, AgentSkillFiles, SkillError};
use agent_skills_spec::{Found, Invalid};
use cap_std::fs::OpenOptions;

use crate::sandbox::{ContextError, Links, NotRegular, Workspace, is_escape, open_regular};
use crate::shell::ShellConfig;

/// The largest file of a skill read by default: 1 MiB.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// How many of a skill's files an error names when a path is not one of them.
const FILES_NAMED: usize = 30;

/// Loads Agent Skills from folders. [`AgentSkills::load`] and [`AgentSkills::load_strict`] use
/// the defaults; a value of this type carries other settings ([`AgentSkills::max_file_bytes`]).
/// See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSkills {
    max_file_bytes: u64,
}

impl Default for AgentSkills {
    fn default() -> Self {
        AgentSkills {
            max_file_bytes: MAX_FILE_BYTES,
        }
    }
}

impl AgentSkills {
    /// The default settings.
    pub fn new() -> Self {
        AgentSkills::default()
    }

    /// The largest file of a skill that is read (level 3); larger ones are refused with their
    /// size. Default [`MAX_FILE_BYTES`].
    pub fn max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// The skills in `dir` (or `dir` itself, when it holds a `SKILL.md`), with the default
    /// settings: those that pass, and those that do not. Fails only when `dir` cannot be read.
    pub fn load(dir: impl AsRef<Path>) -> Result<LoadedAgentSkills, AgentSkillsError> {
        AgentSkills::default().load_dir(dir)
    }

    /// The skills in `dir` with the default settings, or an error for the first one that does not
    /// load: the first `SKILL.md` (in name order) that cannot be read or breaks a rule, else the
    /// first folder that cannot be opened or listed.
    pub fn load_strict(dir: impl AsRef<Path>) -> Result<Vec<AgentSkill>, AgentSkillsError> {
        AgentSkills::default().load_dir_strict(dir)
    }

    /// [`AgentSkills::load`] with these settings.
    pub fn load_dir(&self, dir: impl AsRef<Path>) -> Result<LoadedAgentSkills, AgentSkillsError> {
        let dir = dir.as_ref();
        let (found, invalid) = find(dir)?;
        let mut loaded = LoadedAgentSkills {
            skills: Vec::with_capacity(found.len()),
            invalid,
            unreadable: Vec::new(),
        };
        for found in found {
            match self.skill(found) {
                Ok(skill) => loaded.skills.push(skill),
                Err(unreadable) => loaded.unreadable.push(unreadable),
            }
        }
        Ok(loaded)
    }

    /// [`AgentSkills::load_strict`] with these settings.
    pub fn load_dir_strict(
        &self,
        dir: impl AsRef<Path>,
    ) -> Result<Vec<AgentSkill>, AgentSkillsError> {
        let dir = dir.as_ref();
        let (found, invalid) = find(dir)?;
        if let Some(bad) = invalid.into_iter().next() {
            return Err(AgentSkillsError::Invalid(bad));
        }
        found
            .into_iter()
            .map(|found| self.skill(found).map_err(AgentSkillsError::Unreadable))
            .collect()
    }

    /// One checked skill, its folder opened as a sandbox and its files listed.
    fn skill(&self, found: Found) -> Result<AgentSkill, Unreadable> {
        let unreadable = |source: io::Error| Unreadable {
            folder: found.folder.clone(),
            source,
        };
        let canonical = std::fs::canonicalize(&found.folder).map_err(unreadable)?;
        let workspace =
            Workspace::open(&canonical).map_err(|e| unreadable(io::Error::other(e.to_string())))?;
        let list = agent_skills_spec::files(workspace.root()).map_err(unreadable)?;
        let manifest = &found.manifest;
        let files = DiskFiles {
            name: manifest.name.clone(),
            workspace,
            list,
            max_bytes: self.max_file_bytes,
        };
        Ok(AgentSkill::new(
            manifest.name.clone(),
            manifest.description.clone(),
            found.body(),
        )
        .with_details(
            manifest.license.clone(),
            manifest.compatibility.clone(),
            manifest.allowed_tools.clone(),
            manifest.metadata.clone(),
        )
        .with_files(Arc::new(files)))
    }
}

/// The skill folders of `dir`, or `dir` itself when it is one.
fn find(dir: &Path) -> Result<(Vec<Found>, Vec<Invalid>), AgentSkillsError> {
    let failed = |source| AgentSkillsError::Dir {
        dir: dir.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(dir).map_err(failed)?;
    if !meta.is_dir() {
        return Err(failed(io::Error::new(
            io::ErrorKind::NotADirectory,
            "not a directory",
        )));
    }
    if std::fs::symlink_metadata(dir.join(agent_skills_spec::SKILL_FILE)).is_ok() {
        return Ok(match agent_skills_spec::load(dir) {
            Ok(found) => (vec![found], Vec::new()),
            Err(bad) => (Vec::new(), vec![bad]),
        });
    }
    agent_skills_spec::find(dir).map_err(failed)
}

/// What [`AgentSkills::load`] found in a directory.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct LoadedAgentSkills {
    /// The skills that loaded, in name order.
    pub skills: Vec<AgentSkill>,
    /// The skills whose `SKILL.md` cannot be read or breaks a rule: the file and each violation
    /// with its line and rule (their `Display` is one `file:line: message (rule `id`)` line per
    /// violation).
    pub invalid: Vec<Invalid>,
    /// The skills whose `SKILL.md` passed but whose folder could not be opened or listed (too
    /// many files, a name that is not UTF-8, no permission).
    pub unreadable: Vec<Unreadable>,
}

impl LoadedAgentSkills {
    /// Whether every skill found loaded.
    pub fn all_loaded(&self) -> bool {
        self.invalid.is_empty() && self.unreadable.is_empty()
    }
}

/// A skill folder whose `SKILL.md` passed, but which could not be opened or listed.
#[derive(Debug)]
pub struct Unreadable {
    /// The skill's folder.
    pub folder: PathBuf,
    /// Why.
    pub source: io::Error,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the skill's folder cannot be read: {}",
            self.folder.display(),
            self.source
        )
    }
}

impl std::error::Error for Unreadable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Why skills could not be loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentSkillsError {
    /// The directory of skills cannot be read (missing, not a directory, no permission).
    Dir {
        /// The directory given.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// [`AgentSkills::load_strict`]: a `SKILL.md` that cannot be read or breaks a rule.
    Invalid(Invalid),
    /// [`AgentSkills::load_strict`]: a skill's folder that cannot be opened or listed.
    Unreadable(Unreadable),
}

impl fmt::Display for AgentSkillsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSkillsError::Dir { dir, source } => {
                write!(f, "cannot read the skills in {}: {source}", dir.display())
            }
            AgentSkillsError::Invalid(invalid) => write!(f, "{invalid}"),
            AgentSkillsError::Unreadable(unreadable) => write!(f, "{unreadable}"),
        }
    }
}

impl std::error::Error for AgentSkillsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AgentSkillsError::Dir { source, .. } => Some(source),
            AgentSkillsError::Invalid(invalid) => Some(invalid),
            AgentSkillsError::Unreadable(unreadable) => Some(unreadable),
        }
    }
}

impl ShellConfig {
    /// The same configuration, with the folder of each skill on disk among
    /// [`ShellConfig::read_paths`] (once each), so that `run_shell`'s sandbox lets commands read
    /// and execute what is in them (`sh <folder>/scripts/fill.sh`) but not write there. Skills
    /// compiled into the program have no folder and add nothing.
    ///
    /// This does not let a command run: `run_shell` is destructive, and the registry's hooks and
    /// permission rules decide whether it runs at all.
    pub fn with_agent_skills<'a>(
        mut self,
        skills: impl IntoIterator<Item = &'a AgentSkill>,
    ) -> Self {
        for skill in skills {
            if let Some(folder) = skill.files.folder()
                && !self.read_paths.iter().any(|p| p == folder)
            {
                self.read_paths.push(folder.to_path_buf());
            }
        }
        self
    }
}

/// The files of a skill loaded from disk: its folder as a capability, and the files listed when
/// it was loaded.
struct DiskFiles {
    name: String,
    workspace: Workspace,
    /// Sorted, as `agent_skills_spec::files` returns them.
    list: Vec<String>,
    max_bytes: u64,
}

impl AgentSkillFiles for DiskFiles {
    fn folder(&self) -> Option<&Path> {
        Some(self.workspace.root())
    }

    fn list(&self) -> &[String] {
        &self.list
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, SkillError> {
        let rel = self.listed(path)?;
        let file = open_regular(
            self.workspace.dir(),
            &rel,
            OpenOptions::new().read(true),
            Links::Follow,
        )
        .map_err(|e| self.open_error(path, e))?;
        let meta = file.metadata().map_err(|e| self.io_error(path, e))?;
        if meta.len() > self.max_bytes {
            return Err(self.too_large(path, meta.len()));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.into_std()
            .take(self.max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| self.io_error(path, e))?;
        if bytes.len() as u64 > self.max_bytes {
            return Err(self.too_large(path, bytes.len() as u64));
        }
        Ok(bytes)
    }
}

impl DiskFiles {
    /// `path` as a relative path of plain components, if it is one of the listed files; refusals
    /// of paths that try to leave the folder are [`SkillError::Safety`].
    fn listed(&self, path: &str) -> Result<PathBuf, SkillError> {
        if path.contains('\0') {
            return Err(SkillError::Safety(format!(
                "`{}` contains a NUL byte, which no file name can hold",
                path.escape_debug()
            )));
        }
        let mut rel = PathBuf::new();
        let mut parts = Vec::new();
        for component in Path::new(path).components() {
            match component {
                Component::Prefix(_) | Component::RootDir => {
                    return Err(SkillError::Safety(format!(
                        "`{path}` is an absolute path; give one of skill `{}`'s files by its path \
                         relative to the skill's folder (e.g. `{}`)",
                        self.name,
                        self.list
                            .first()
                            .map_or("references/guide.md", String::as_str)
                    )));
                }
                Component::ParentDir => {
                    return Err(SkillError::Safety(format!(
                        "`{path}` contains `..`; only files inside skill `{}`'s own folder can be \
                         read",
                        self.name
                    )));
                }
                Component::CurDir => {}
                Component::Normal(part) => {
                    rel.push(part);
                    parts.push(part.to_string_lossy());
                }
            }
        }
        let joined = parts.join("/");
        if self.list.binary_search(&joined).is_ok() {
            return Ok(rel);
        }
        let hint = if joined == agent_skills_spec::SKILL_FILE {
            "; its instructions are what load_skill returns without `file`".to_owned()
        } else if self.list.is_empty() {
            "; it has no files besides its instructions".to_owned()
        } else {
            let mut named = self.list[..self.list.len().min(FILES_NAMED)].join(", ");
            if self.list.len() > FILES_NAMED {
                named.push_str(&format!(", and {} more", self.list.len() - FILES_NAMED));
            }
            format!("; its files are: {named}")
        };
        Err(SkillError::bad_args(
            "file",
            format!("`{path}` is not one of skill `{}`'s files{hint}", self.name),
        ))
    }

    /// An error opening a listed file: a symbolic link put there that leads out of the folder is
    /// a [`SkillError::Safety`].
    fn open_error(&self, path: &str, err: io::Error) -> SkillError {
        if let Some(kind) = NotRegular::of(&err) {
            return SkillError::tool(format!(
                "`{path}` of skill `{}` is not a regular file but {kind}; only files are read",
                self.name
            ));
        }
        // The sandbox's own test of an escape (cap-std refused to leave the folder), and a loop
        // of links, which is treated the same.
        if is_escape(&err) || err.raw_os_error() == Some(libc::ELOOP) {
            return SkillError::Safety(format!(
                "`{path}` leads outside skill `{}`'s folder through a symbolic link; only files \
                 inside the folder can be read",
                self.name
            ));
        }
        if err.kind() == io::ErrorKind::NotFound {
            return SkillError::tool(format!(
                "`{path}` of skill `{}` is no longer there (or goes through a dangling symbolic \
                 link)",
                self.name
            ));
        }
        self.io_error(path, err)
    }

    fn io_error(&self, path: &str, err: io::Error) -> SkillError {
        SkillError::from_error(ContextError {
            message: format!("`{path}` of skill `{}`: {err}", self.name),
            source: err,
        })
    }

    fn too_large(&self, path: &str, len: u64) -> SkillError {
        SkillError::tool(format!(
            "`{path}` of skill `{}` is {len} bytes, more than the {} bytes a skill's file may \
             have to be read; it is not read",
            self.name, self.max_bytes
        ))
    }
}
