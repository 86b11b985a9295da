//! The [`Workspace`] handle: opening the root, reading and writing files beneath it. Its other
//! methods are in the files of what they do (`aside.rs`, `errors.rs`, `staged.rs`, `tree.rs`).

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use agent_core::{SkillContext, SkillError};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, OpenOptions};

use super::paths::check_relative;
use super::regular::{Links, open_regular};

/// The workspace root as a capability. See the [module docs](super).
#[derive(Debug)]
pub struct Workspace {
    pub(super) root: PathBuf,
    pub(super) dir: Dir,
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
    /// component, NUL bytes, paths longer than [`MAX_PATH_BYTES`](super::MAX_PATH_BYTES) and components longer than
    /// [`MAX_COMPONENT_BYTES`](super::MAX_COMPONENT_BYTES).
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
