//! Standard skills for the eugene agent framework: files, patches, search, shell, web and memory,
//! each an ordinary `async fn` written with [`#[skill]`](macro@agent_core::skill), all confined to one
//! capability-based workspace sandbox.
//!
//! Link the crate and [`Registry::discover`](agent_core::Registry::discover) finds them all:
//!
//! ```
//! use agent_core::Registry;
//! use agent_std_tools as _; // links the crate, and with it its skills
//!
//! let registry = Registry::discover().unwrap();
//! assert!(registry.contains("read_file") && registry.contains("apply_patch"));
//! ```
//!
//! # The skills
//!
//! | skill | arguments | flags | module | unit struct |
//! |---|---|---|---|---|
//! | `read_file` | `path`, `offset?` (first line, 1-based), `limit?` (lines); an image, PDF or sound file is answered as media ([`media`]) | read-only | [`files`] | [`ReadFileSkill`] |
//! | `write_file` | `path`, `content` | — | [`files`] | [`WriteFileSkill`] |
//! | `apply_patch` | `patch` (V4A text) | — | [`patch`] | [`ApplyPatchSkill`] |
//! | `list_dir` | `path?` (default `.`), `depth?` (default 1) | read-only | [`files`] | [`ListDirSkill`] |
//! | `run_shell` | `command`, `timeout_ms?` | destructive | [`shell`] | [`RunShellSkill`] |
//! | `search_files` | `pattern` (regex), `path?`, `glob?`, `max_results?` | read-only | [`search`] | [`SearchFilesSkill`] |
//! | `web_fetch` | `url` | read-only; cargo feature `web` (default) | [`web`] | [`WebFetchSkill`] |
//! | `remember` | `key`, `value` | — | [`memory`] | [`RememberSkill`] |
//! | `recall` | `key?`, `query?` | read-only | [`memory`] | [`RecallSkill`] |
//! | `delete_file` | `path`, `recursive?` (default false) | destructive, deferred; alias `remove_file` | [`files`] | [`DeleteFileSkill`] |
//!
//! `delete_file` is deferred: the model does not see it until the registry's built-in
//! `tool_search` loads it ("delete", "remove", "rm" find it), so a registry from `discover()` also
//! holds `tool_search`.
//!
//! Every skill is also a plain function (`agent_std_tools::files::read_file(&ctx, ...)`) and a unit
//! struct for [`Registry::add`](agent_core::Registry::add), named as `#[skill]` names them: the
//! function's name in UpperCamelCase with a `Skill` suffix (`registry.add(ReadFileSkill)`).
//!
//! # The sandbox
//!
//! Every file access goes through [`sandbox::Workspace`], a `cap_std::fs::Dir` opened once at
//! [`SkillContext::workspace_root`](agent_core::SkillContext::workspace_root). Paths are resolved
//! beneath it by the operating system (on Linux, `openat2` with `RESOLVE_BENEATH`), not by
//! comparing strings. Guarantees:
//!
//! - Refused before touching the filesystem: absolute paths, `..`, NUL bytes, paths over 4096
//!   bytes, components over 255 bytes.
//! - Refused by the capability: symbolic links that lead out (absolute or relative), symbolic
//!   links in parent directories that lead out, dangling symbolic links. Symbolic links that stay
//!   inside work.
//! - Every refusal is [`SkillError::Safety`](agent_core::SkillError::Safety) and names the path.
//!   Nothing outside the root is read, written, created or deleted.
//! - Writes are atomic (temporary file in the same directory, `fsync`, rename) and never go
//!   through a symbolic link; a path ending in `/` is refused, not written as a file;
//!   `apply_patch` is all or nothing across files, refuses a patch that names one file twice (also
//!   through a linked directory), keeps each line's ending and a moved file's permissions;
//!   `delete_file` removes
//!   a link, never its target, and a directory only with `recursive: true`.
//! - Walks (`list_dir`, `search_files`) never follow symbolic links, read no ignore files above
//!   the root, read the ignore files inside it (`.gitignore`, `.ignore`, `.git/info/exclude`)
//!   through the capability and only when they are regular files (a linked `.gitignore` or `.git`
//!   is skipped, so rules from outside never decide what is listed), and open every file they
//!   search through the capability. (The walk itself goes by
//!   path, from a directory the capability has checked: a directory swapped for a link *during*
//!   a walk could show names from outside, never contents.)
//! - Pipes, sockets and devices are refused, never waited on: every file is opened non-blocking
//!   (`O_NONBLOCK | O_NOCTTY`) first and checked to be a regular file after (`fstat` of what was
//!   opened), so one swapped in for a file at any moment is refused too, with an error that says
//!   what it is (opening a FIFO for reading would wait for a writer forever).
//! - `run_shell` runs `sh` in the workspace root inside a sandbox on Linux: Landlock (writes only
//!   in the workspace and a private `TMPDIR`, no home directory, no TCP unless allowed, no
//!   signals or `/proc` access to the agent, no device files), namespaces of its own (the agent
//!   cannot even be named, `/proc` shows only the call's processes), two capabilities at most, a
//!   seccomp filter (no terminal injection, no Unix sockets, no keyrings) and a process limit,
//!   with an allowlisted environment; every process it starts is killed when the call ends.
//!   Where the kernel lacks a layer, the first result says what ran unconfined. See [`shell`].
//!   It is still `destructive` inside the workspace: gate it with a hook or a permission gate.
//!
//! # Agent Skills from folders
//!
//! [`AgentSkills::load`] loads the Agent Skills (`SKILL.md` folders) of a directory at run time,
//! for [`Registry::add_agent_skills`](agent_core::Registry::add_agent_skills): the skills that
//! pass the format's rules, and each one that does not with its file, line and rule. A skill's
//! files (`load_skill { name, file }`) are read through a [`Workspace`] opened at its own folder,
//! so no path, absolute path or symbolic link reaches outside it, and at most 1 MiB a file.
//! Its scripts run only through `run_shell`, when the registry's permission rules allow it;
//! [`ShellConfig::with_agent_skills`] lets the shell's sandbox read the skills' folders. See
//! [`agent_skills`].
//!
//! # Configuration
//!
//! Each group of skills reads an optional config from the context
//! ([`SkillContext::with_extension`](agent_core::SkillContext::with_extension)); without one, the
//! defaults apply.
//!
//! | type | for | defaults |
//! |---|---|---|
//! | [`FilesConfig`] | `read_file`, `list_dir`, `write_file`, `apply_patch` | 15,000 characters a read, 20 MiB a file read as media, 1,000 entries a listing, 10 MiB a write or patch |
//! | [`SearchConfig`] | `search_files` | a compiled pattern of at most 1 MiB, an 8 MiB DFA cache, lines of at most 4 MiB |
//! | [`ShellConfig`] | `run_shell` | 120 s timeout, at most 600 s, 7,500 characters of stdout and of stderr, confined where the kernel allows, no network |
//! | [`WebConfig`] | `web_fetch` | public addresses only, 30 s, 2 MiB, 15,000 characters, 5 redirects |
//! | [`MemoryConfig`] | `remember`, `recall` | `<workspace>/.agent/memory.redb`; waits up to 5 s for another process using it |
//!
//! ```
//! use std::time::Duration;
//! use agent_core::SkillContext;
//! use agent_std_tools::{MemoryConfig, ShellConfig};
//!
//! let ctx = SkillContext::new("/srv/project")
//!     .with_extension(ShellConfig { default_timeout: Duration::from_secs(30), ..ShellConfig::default() })
//!     .with_extension(MemoryConfig::at("/var/lib/agent/memory.redb"));
//! # let _ = ctx;
//! ```
//!
//! # Dependencies, and why
//!
//! `cap-std` (the capability sandbox), `ignore` (ripgrep's walker: `.gitignore`, hidden files,
//! parallel walks), `grep-regex`/`grep-searcher` (ripgrep's search engine), `tokio` (child
//! processes, timers, blocking work off the async threads), `libc` (`fork`, `clone`, `prctl`, signals, error numbers), `landlock` (the shell's sandbox),
//! `seccompiler` (the shell's seccomp filter, compiled from rules),
//! `redb` (the embedded transactional store behind memory), `agent-skills-spec` (the Agent Skills
//! format: finding skill folders and checking each `SKILL.md` at run time with the same rules
//! `agent_skills!` applies at compile time, so a skill is judged alike in both places),
//! `reqwest` with rustls and `html2text` (only with the `web` feature: HTTP and HTML to text).
//!
//! Linux only: `run_shell` needs `sh`, `prctl` (a child subreaper) and, for its sandbox,
//! Landlock, user namespaces and seccomp.

#![warn(missing_docs)]

pub mod agent_skills;
mod blocking;
pub mod files;
pub mod media;
pub mod memory;
mod names;
pub mod patch;
pub mod sandbox;
pub mod search;
pub mod shell;
mod units;
mod walk;
#[cfg(feature = "web")]
pub mod web;

pub use agent_skills::{AgentSkills, AgentSkillsError, LoadedAgentSkills, Unreadable};
pub use files::{DeleteFileSkill, FilesConfig, ListDirSkill, ReadFileSkill, WriteFileSkill};
pub use memory::{MemoryConfig, RecallSkill, RememberSkill};
pub use patch::{ApplyPatchSkill, PatchConfig};
pub use sandbox::Workspace;
pub use search::{SearchConfig, SearchFilesSkill};
pub use shell::{Confinement, RunShellSkill, ShellConfig, harden_process};
#[cfg(feature = "web")]
pub use web::{WebConfig, WebFetchSkill};

/// The crate's skills, listed once: the names, [`add_all`] and (through `discover`'s test) the
/// registry all come from this list.
macro_rules! std_skills {
    ($($(#[$cfg:meta])* $skill:ident => $name:literal,)*) => {
        /// The names of the skills this crate defines (`web_fetch` only with the `web` feature),
        /// without their aliases. For code that must tell this crate's skills from others:
        /// keeping only them ([`Registry::discover_where`](agent_core::Registry::discover_where)),
        /// or naming them all in a permission rule.
        ///
        /// ```
        /// assert!(agent_std_tools::SKILL_NAMES.contains(&"read_file"));
        /// assert!(!agent_std_tools::SKILL_NAMES.contains(&"remove_file")); // an alias
        /// ```
        pub const SKILL_NAMES: &[&str] = &[$($(#[$cfg])* $name,)*];

        /// Adds every skill of this crate to `registry`, for registries built by hand rather than
        /// with [`Registry::discover`](agent_core::Registry::discover) (which finds them by
        /// itself).
        ///
        /// ```
        /// let mut registry = agent_core::Registry::new();
        /// agent_std_tools::add_all(&mut registry);
        /// assert!(registry.contains("run_shell") && registry.contains("remove_file"));
        /// ```
        pub fn add_all(registry: &mut agent_core::Registry) -> &mut agent_core::Registry {
            $($(#[$cfg])* registry.add($skill);)*
            registry
        }
    };
}

std_skills! {
    ApplyPatchSkill => "apply_patch",
    DeleteFileSkill => "delete_file",
    ListDirSkill => "list_dir",
    ReadFileSkill => "read_file",
    RecallSkill => "recall",
    RememberSkill => "remember",
    RunShellSkill => "run_shell",
    SearchFilesSkill => "search_files",
    #[cfg(feature = "web")]
    WebFetchSkill => "web_fetch",
    WriteFileSkill => "write_file",
}
