//! The workspace sandbox every file-touching skill goes through.
//!
//! A [`Workspace`] is a capability: a [`cap_std::fs::Dir`] opened once, with ambient authority, at
//! [`SkillContext::workspace_root`](agent_core::SkillContext::workspace_root). Every later file operation is a method on that handle, so it is
//! resolved *beneath* the root by the operating system (on Linux, `openat2` with
//! `RESOLVE_BENEATH`; elsewhere cap-std resolves each component itself), never by comparing
//! strings. Lexical prefix checks are how Claude Code (CVE-2025-54794) and codex (CVE-2025-55345)
//! were escaped; here a symbolic link that leads out is refused by the kernel, whatever its name.
//!
//! Before anything touches the filesystem, [`Workspace::relative`] refuses what can never be
//! right: absolute paths, `..` components, NUL bytes, paths over 4096 bytes and components over
//! 255 bytes. Every refusal is a [`SkillError::Safety`](agent_core::SkillError::Safety) whose message names the path.
//!
//! ```
//! use agent_core::SkillContext;
//! use agent_std_tools::sandbox::Workspace;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let ws = Workspace::from_context(&SkillContext::new(dir.path())).unwrap();
//! ws.write_atomic("notes/todo.txt", b"ship it\n").unwrap();
//! assert_eq!(ws.read("notes/todo.txt").unwrap(), b"ship it\n");
//!
//! let err = ws.read("../etc/passwd").unwrap_err();
//! assert!(err.to_string().contains("`../etc/passwd`"));
//! ```
//!
//! Directory walks (`list_dir`, `search_files`) use the `ignore` crate, which walks by path: they
//! start from a directory the sandbox has checked, never follow symbolic links, and every file they
//! read is opened through the sandbox again.
//!
//! Every file ([`Workspace::read`], [`Workspace::open_file`], and every file a skill reads) is
//! opened before its type is known and checked after, never the other way round: opened with
//! `O_NONBLOCK | O_NOCTTY`, the descriptor `fstat`ed, anything but a regular file refused with an
//! error that says what it is (a directory, a FIFO, a Unix socket, a character or block device),
//! then `O_NONBLOCK` cleared. A FIFO put in a file's place at any moment (checking first and
//! opening after would wait on it forever) is refused without being waited on, and a terminal
//! never becomes the controlling one. What remains: a device node at the path is opened and
//! closed again, so its driver sees that.

mod aside;
mod errors;
mod nofollow;
mod paths;
mod regular;
mod staged;
mod tree;
mod workspace;

pub use aside::SetAside;
pub(crate) use errors::{ContextError, is_escape};
pub(crate) use nofollow::open_dir_nofollow;
pub use paths::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES};
pub(crate) use regular::{Links, NotRegular, open_regular, open_regular_ambient};
pub use staged::Staged;
pub use tree::MAX_OPEN_DIRS;
pub use workspace::Workspace;
