//! The workspace sandbox every file-touching skill goes through.
//!
//! A [`Workspace`] is a capability: a [`cap_std::fs::Dir`] opened once, with ambient authority, at
//! [`SkillContext::workspace_root`]. Every later file operation is a method on that handle, so it is
//! resolved *beneath* the root by the operating system (on Linux, `openat2` with
//! `RESOLVE_BENEATH`; elsewhere cap-std resolves each component itself), never by comparing
//! strings. Lexical prefix checks are how Claude Code (CVE-2025-54794) and codex (CVE-2025-55345)
//! were escaped; here a symbolic link that leads out is refused by the kernel, whatever its name.
//!
//! Before anything touches the filesystem, [`Workspace::relative`] refuses what can never be
//! right: absolute paths, `..` components, NUL bytes, paths over 4096 bytes and components over
//! 255 bytes. Every refusal is a [`SkillError::Safety`] whose message names the path.
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

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use agent_core::{SkillContext, SkillError};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, OpenOptions};

pub use aside::SetAside;
pub(crate) use errors::{ContextError, is_escape};
pub(crate) use nofollow::open_dir_nofollow;
use paths::check_relative;
pub use paths::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES};
pub(crate) use regular::{Links, NotRegular, open_regular, open_regular_ambient};
pub use staged::Staged;
pub use tree::MAX_OPEN_DIRS;

/// The workspace root as a capability. See the [module docs](self).
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    dir: Dir,
}

impl Workspace {
    /// Opens `root` (which must be an existing directory) as the sandbox.
    pub fn open(root: impl AsRef<Path>) -> Result<Workspace, SkillError> {
        let root = root.as_ref();
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(|e| {
            SkillError::tool(format!(
                "cannot open the workspace root `{}`: {e}",
                root.display()
            ))
        })?;
        let root = std::fs::canonicalize(root).map_err(|e| {
            SkillError::tool(format!(
                "cannot resolve the workspace root `{}`: {e}",
                root.display()
            ))
        })?;
        Ok(Workspace { root, dir })
    }

    /// Opens the workspace of `ctx` ([`SkillContext::workspace_root`]).
    pub fn from_context(ctx: &SkillContext) -> Result<Workspace, SkillError> {
        Workspace::open(ctx.workspace_root())
    }

    /// The canonical path of the root (symbolic links resolved).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The capability itself, for operations this type does not wrap.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Checks a path given by the model without touching the filesystem, and returns it as a
    /// relative path of plain components (`.` for `""` or `.`, which mean the root).
    ///
    /// Refused, with a [`SkillError::Safety`] naming the path: absolute paths, any `..`
    /// component, NUL bytes, paths longer than [`MAX_PATH_BYTES`] and components longer than
    /// [`MAX_COMPONENT_BYTES`].
    pub fn relative(&self, path: &str) -> Result<PathBuf, SkillError> {
        check_relative(path)
    }

    /// Reads a whole regular file (following symbolic links that stay inside the workspace). A
    /// directory, FIFO, socket or device is refused, without waiting on it, with an error that
    /// says what it is.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, SkillError> {
        self.read_regular(path, Links::Follow)
    }

    /// [`Workspace::read`], following or refusing a symbolic link in the last place as `links`
    /// says.
    pub(crate) fn read_regular(&self, path: &str, links: Links) -> Result<Vec<u8>, SkillError> {
        let mut file = self.open_regular(path, links)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| self.fs_error(path, e))?;
        Ok(bytes)
    }

    /// Opens a regular file for reading (following symbolic links that stay inside the
    /// workspace). A directory, FIFO, socket or device is refused, without waiting on it, with
    /// an error that says what it is.
    pub fn open_file(&self, path: &str) -> Result<File, SkillError> {
        self.open_regular(path, Links::Follow)
    }

    /// [`Workspace::open_file`], following or refusing a symbolic link in the last place as
    /// `links` says.
    pub(crate) fn open_regular(&self, path: &str, links: Links) -> Result<File, SkillError> {
        let rel = self.relative(path)?;
        open_regular(&self.dir, &rel, OpenOptions::new().read(true), links)
            .map_err(|e| self.fs_error(path, e))
    }

    /// The metadata of `path`, following symbolic links that stay inside the workspace.
    pub fn metadata(&self, path: &str) -> Result<Metadata, SkillError> {
        let rel = self.relative(path)?;
        self.dir.metadata(&rel).map_err(|e| self.fs_error(path, e))
    }

    /// The metadata of `path` itself (a symbolic link is described, not followed). `None` when
    /// nothing is there.
    pub fn symlink_metadata(&self, path: &str) -> Result<Option<Metadata>, SkillError> {
        let rel = self.relative(path)?;
        match self.dir.symlink_metadata(&rel) {
            Ok(meta) => Ok(Some(meta)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.fs_error(path, e)),
        }
    }

    /// Removes the file or symbolic link at `path` (a link is removed, never its target).
    pub fn remove_file(&self, path: &str) -> Result<(), SkillError> {
        let rel = self.relative(path)?;
        self.dir
            .remove_file(&rel)
            .map_err(|e| self.fs_error(path, e))
    }

    /// Checks that `path` is a directory inside the workspace (following symbolic links that stay
    /// inside) and returns its real location: `(absolute path, path relative to the root)`.
    /// Walks that must go by path (the `ignore` crate) start from here.
    pub fn walk_root(&self, path: &str) -> Result<(PathBuf, PathBuf, Metadata), SkillError> {
        let rel = self.relative(path)?;
        let meta = self
            .dir
            .metadata(&rel)
            .map_err(|e| self.fs_error(path, e))?;
        // The capability has shown the target is beneath the root; the canonical path is only used
        // to hand the walk a starting point, and is checked again as a second line of defence.
        let real =
            std::fs::canonicalize(self.root.join(&rel)).map_err(|e| self.fs_error(path, e))?;
        let Ok(real_rel) = real.strip_prefix(&self.root).map(Path::to_path_buf) else {
            return Err(self.escape(path));
        };
        Ok((real, real_rel, meta))
    }
}
