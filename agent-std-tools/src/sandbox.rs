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

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use agent_core::{SkillContext, SkillError};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};

use crate::walk::display_name;

/// The longest path a skill accepts, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// The longest single path component a skill accepts, in bytes (Linux's `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;

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

    /// Reads a whole file.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, SkillError> {
        let rel = self.relative(path)?;
        self.dir.read(&rel).map_err(|e| self.fs_error(path, e))
    }

    /// Opens a file for reading (following symbolic links that stay inside the workspace).
    pub fn open_file(&self, path: &str) -> Result<File, SkillError> {
        let rel = self.relative(path)?;
        self.dir.open(&rel).map_err(|e| self.fs_error(path, e))
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

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory is written,
    /// flushed to disk and renamed over the target, so readers see the old content or the new,
    /// never a mix. Missing parent directories are created. An existing file keeps its
    /// permissions. A symbolic link or a directory at `path` is refused. Returns whether the file
    /// was created (rather than replaced).
    pub fn write_atomic(&self, path: &str, bytes: &[u8]) -> Result<bool, SkillError> {
        let staged = self.stage(path, bytes)?;
        let created = staged.created();
        staged.commit(self)?;
        Ok(created)
    }

    /// Writes `bytes` to a temporary file next to `path` and flushes it, without touching `path`
    /// yet; [`Staged::commit`] renames it into place, dropping it (or [`Staged::discard`]) leaves
    /// `path` as it was. Directories created on the way are recorded in `created_dirs` so a caller
    /// can remove them again ([`Workspace::remove_created_dirs`]).
    pub fn stage_with_dirs(
        &self,
        path: &str,
        bytes: &[u8],
        created_dirs: &mut Vec<PathBuf>,
    ) -> Result<Staged, SkillError> {
        let rel = self.relative(path)?;
        if path.ends_with('/') || path.ends_with("/.") {
            // `Path` drops the ending, which would write a file named like the directory.
            return Err(SkillError::bad_args(
                "path",
                format!(
                    "`{path}` ends with `/`, so it names a directory; give the path of a file in \
                     it (for example `{}file.txt`)",
                    path.trim_end_matches('.')
                ),
            ));
        }
        let Some(name) = rel.file_name().map(|n| n.to_owned()) else {
            return Err(SkillError::bad_args(
                "path",
                format!("`{path}` names the workspace root, not a file"),
            ));
        };
        let parent = rel.parent().unwrap_or(Path::new(""));
        if !parent.as_os_str().is_empty() {
            self.create_dirs(path, parent, created_dirs)?;
        }
        let parent_dir = if parent.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir(parent)
        }
        .map_err(|e| self.fs_error(path, e))?;

        let existing = match parent_dir.symlink_metadata(&name) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(self.fs_error(path, e)),
        };
        if let Some(meta) = &existing {
            if meta.file_type().is_symlink() {
                return Err(self.symlink_refusal(path));
            }
            if meta.is_dir() {
                return Err(SkillError::tool(format!(
                    "`{path}` is a directory; give the path of a file"
                )));
            }
        }

        let tmp = temp_name();
        let mut file = parent_dir
            .open_with(&tmp, OpenOptions::new().write(true).create_new(true))
            .map_err(|e| self.fs_error(path, e))?;
        let written = (|| -> io::Result<()> {
            file.write_all(bytes)?;
            if let Some(meta) = &existing {
                file.set_permissions(meta.permissions())?;
            }
            file.sync_all()
        })();
        if let Err(e) = written {
            let _ = parent_dir.remove_file(&tmp);
            return Err(self.fs_error(path, e));
        }
        Ok(Staged {
            path: path.to_owned(),
            parent: parent_dir,
            tmp: Some(tmp),
            name,
            created: existing.is_none(),
        })
    }

    /// [`Workspace::stage_with_dirs`] without recording created directories.
    pub fn stage(&self, path: &str, bytes: &[u8]) -> Result<Staged, SkillError> {
        self.stage_with_dirs(path, bytes, &mut Vec::new())
    }

    /// Removes directories recorded by [`Workspace::stage_with_dirs`], deepest first, if they are
    /// empty. Errors are ignored: this is clean-up after a failure.
    pub fn remove_created_dirs(&self, created_dirs: &[PathBuf]) {
        for dir in created_dirs.iter().rev() {
            let _ = self.dir.remove_dir(dir);
        }
    }

    /// Creates `parent` and its missing ancestors inside the workspace, recording what it created.
    fn create_dirs(
        &self,
        path: &str,
        parent: &Path,
        created: &mut Vec<PathBuf>,
    ) -> Result<(), SkillError> {
        let mut prefix = PathBuf::new();
        for component in parent.components() {
            prefix.push(component);
            match self.dir.metadata(&prefix) {
                Ok(meta) if meta.is_dir() => continue,
                Ok(_) => {
                    return Err(SkillError::tool(format!(
                        "cannot create `{path}`: `{}` is a file, not a directory",
                        prefix.display()
                    )));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    // A dangling symbolic link also reads as "not found"; creating a directory
                    // there fails (EEXIST), and `fs_error` names it.
                    self.dir
                        .create_dir(&prefix)
                        .map_err(|e| self.fs_error(path, e))?;
                    created.push(prefix.clone());
                }
                Err(e) => return Err(self.fs_error(path, e)),
            }
        }
        Ok(())
    }

    /// Removes the file or symbolic link at `path` (a link is removed, never its target).
    pub fn remove_file(&self, path: &str) -> Result<(), SkillError> {
        let rel = self.relative(path)?;
        self.dir
            .remove_file(&rel)
            .map_err(|e| self.fs_error(path, e))
    }

    /// Removes the directory at `path` and everything in it, without following symbolic links
    /// (a link inside the tree is removed, never what it points to). See
    /// [`Workspace::remove_dir_all_until`].
    pub fn remove_dir_all(&self, path: &str) -> Result<(), SkillError> {
        self.remove_dir_all_until(path, || false)
    }

    /// [`Workspace::remove_dir_all`], asking `stop` before each entry it deletes and stopping when
    /// it answers `true` (a cancelled call, a time limit passed); what was deleted by then is
    /// gone and the error says the rest is still there.
    ///
    /// The tree is deleted depth first, one directory at a time, with at most
    /// [`MAX_OPEN_DIRS`] of its directories open at once however deep it is: a directory whose
    /// handle was let go is opened again from the nearest open ancestor, one name at a time and
    /// never through a symbolic link. Every directory is reached from the workspace capability
    /// that way, so nothing outside the workspace is touched.
    pub fn remove_dir_all_until(
        &self,
        path: &str,
        mut stop: impl FnMut() -> bool,
    ) -> Result<(), SkillError> {
        let rel = self.relative(path)?;
        let (Some(name), Some(parent)) = (rel.file_name(), rel.parent()) else {
            return Err(SkillError::Safety(format!(
                "`{path}` is the workspace root, which cannot be deleted"
            )));
        };
        // The directory's parent is reached as any path is (links that stay inside followed);
        // the directory itself and everything in it only without following links.
        let base = if parent.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir(parent)
        }
        .map_err(|e| self.fs_error(path, e))?;
        let mut tree = Tree {
            base,
            frames: vec![Frame {
                name: name.to_owned(),
                dir: None,
            }],
            deleted: 0,
        };
        tree.remove(&mut stop).map_err(|failure| match failure {
            TreeFailure::Stopped => SkillError::tool(format!(
                "stopped while deleting `{path}` (cancelled or out of time): {} entries were \
                 deleted, the rest is still there",
                tree.deleted
            )),
            TreeFailure::Io { depth: 0, err, .. } => self.fs_error(path, err),
            TreeFailure::Io { name, depth, err } => {
                let what = if err.raw_os_error() == Some(libc::ELOOP) {
                    "it was replaced by a symbolic link while being deleted".to_owned()
                } else {
                    err.to_string()
                };
                SkillError::from_error(ContextError {
                    message: format!(
                        "cannot delete everything in `{path}`: `{}`, {depth} level{} down: \
                         {what}; {} entries were deleted, the rest is still there",
                        display_name(&name),
                        if depth == 1 { "" } else { "s" },
                        tree.deleted
                    ),
                    source: err,
                })
            }
        })
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

    /// Turns an I/O error on `path` into a [`SkillError`]: escapes, symbolic-link loops and
    /// dangling symbolic links become [`SkillError::Safety`] naming the path; the rest become
    /// [`SkillError::Tool`] messages that name it too.
    pub fn fs_error(&self, path: &str, err: io::Error) -> SkillError {
        if is_escape(&err) {
            return self.escape(path);
        }
        if err.raw_os_error() == Some(libc::ELOOP) {
            return SkillError::Safety(format!(
                "`{path}` goes through a loop of symbolic links (or a symbolic link where none is allowed)"
            ));
        }
        if matches!(
            err.kind(),
            io::ErrorKind::NotFound | io::ErrorKind::AlreadyExists
        ) && let Some(link) = self.dangling_link(path)
        {
            let target = self
                .dir
                .read_link_contents(&link)
                .map(|t| format!(" (to `{}`)", t.display()))
                .unwrap_or_default();
            return if link == self.relative(path).unwrap_or_default() {
                SkillError::Safety(format!(
                    "`{path}` is a dangling symbolic link{target}: what it points to does not exist"
                ))
            } else {
                SkillError::Safety(format!(
                    "`{path}` goes through `{}`, a dangling symbolic link{target}: what it points to does not exist",
                    link.display()
                ))
            };
        }
        match err.kind() {
            io::ErrorKind::NotFound => SkillError::from_error(ContextError {
                message: format!("`{path}` does not exist"),
                source: err,
            }),
            io::ErrorKind::PermissionDenied => SkillError::from_error(ContextError {
                message: format!("`{path}`: permission denied"),
                source: err,
            }),
            _ if err.raw_os_error() == Some(libc::ENOTDIR) => {
                SkillError::from_error(ContextError {
                    message: format!("`{path}`: a component of the path is not a directory"),
                    source: err,
                })
            }
            _ if err.raw_os_error() == Some(libc::EISDIR) => SkillError::from_error(ContextError {
                message: format!("`{path}` is a directory; give the path of a file"),
                source: err,
            }),
            _ => SkillError::from_error(ContextError {
                message: format!("`{path}`: {err}"),
                source: err,
            }),
        }
    }

    fn escape(&self, path: &str) -> SkillError {
        SkillError::Safety(format!(
            "`{path}` leads outside the workspace through a symbolic link (absolute links count as outside); only files inside the workspace can be used"
        ))
    }

    /// Why a write to the symbolic link at `path` is refused: writes never go through links.
    fn symlink_refusal(&self, path: &str) -> SkillError {
        let Ok(rel) = self.relative(path) else {
            return self.escape(path);
        };
        let target = self.dir.read_link_contents(&rel).ok();
        match (target, self.dir.metadata(&rel)) {
            (Some(target), Ok(_)) => SkillError::Safety(format!(
                "`{path}` is a symbolic link (to `{}`); write to the file it points to instead",
                target.display()
            )),
            _ => SkillError::Safety(format!(
                "`{path}` is a dangling or outside-pointing symbolic link; it cannot be written through"
            )),
        }
    }

    /// The first component of `path` that is a symbolic link whose target does not exist.
    fn dangling_link(&self, path: &str) -> Option<PathBuf> {
        let rel = self.relative(path).ok()?;
        let mut prefix = PathBuf::new();
        for component in rel.components() {
            prefix.push(component);
            let meta = self.dir.symlink_metadata(&prefix).ok()?;
            if meta.file_type().is_symlink() {
                return match self.dir.metadata(&prefix) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Some(prefix),
                    _ => None,
                };
            }
        }
        None
    }
}

/// A file written next to its target and not yet renamed into place. See
/// [`Workspace::stage_with_dirs`].
#[derive(Debug)]
pub struct Staged {
    path: String,
    parent: Dir,
    tmp: Option<String>,
    name: std::ffi::OsString,
    created: bool,
}

impl Staged {
    /// Whether committing creates the file (nothing was at its path when it was staged).
    pub fn created(&self) -> bool {
        self.created
    }

    /// The path the file will have, as the caller gave it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Gives the staged file `permissions` (otherwise a file that committing creates gets the
    /// default ones, and one it replaces keeps those it had).
    pub fn set_permissions(
        &self,
        ws: &Workspace,
        permissions: cap_std::fs::Permissions,
    ) -> Result<(), SkillError> {
        let tmp = self.tmp.as_ref().expect("a staged file is committed once");
        self.parent
            .set_permissions(tmp, permissions)
            .map_err(|e| ws.fs_error(&self.path, e))
    }

    /// Renames the staged file over its target and flushes the directory.
    pub fn commit(mut self, ws: &Workspace) -> Result<(), SkillError> {
        let tmp = self.tmp.take().expect("a staged file is committed once");
        if let Err(e) = self.parent.rename(&tmp, &self.parent, &self.name) {
            let _ = self.parent.remove_file(&tmp);
            return Err(ws.fs_error(&self.path, e));
        }
        // Make the rename itself durable; a failure here leaves the new content in place.
        if let Ok(dir) = self.parent.try_clone() {
            let _ = dir.into_std_file().sync_all();
        }
        Ok(())
    }

    /// Removes the staged file, leaving the target as it was.
    pub fn discard(self) {}
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = self.parent.remove_file(tmp);
        }
    }
}

/// The most directories of a tree [`Workspace::remove_dir_all_until`] holds open at once.
pub const MAX_OPEN_DIRS: usize = 32;

/// A directory tree being deleted: the path from the directory being deleted down to the one
/// being emptied, each level with its handle while it is one of the deepest [`MAX_OPEN_DIRS`].
struct Tree {
    /// The parent of the tree's top.
    base: Dir,
    frames: Vec<Frame>,
    deleted: u64,
}

struct Frame {
    name: OsString,
    dir: Option<Dir>,
}

enum TreeFailure {
    Stopped,
    /// `name`, `depth` levels below the top (0: the top itself), could not be opened, read or
    /// removed.
    Io {
        name: OsString,
        depth: usize,
        err: io::Error,
    },
}

impl Tree {
    fn remove(&mut self, stop: &mut impl FnMut() -> bool) -> Result<(), TreeFailure> {
        while let Some(top) = self.frames.len().checked_sub(1) {
            if stop() {
                return Err(TreeFailure::Stopped);
            }
            // Empty the deepest directory of its files and links, until a subdirectory turns up.
            self.open(top)?;
            let dir = self.frames[top].dir.as_ref().expect("opened above");
            let in_it = |name: &OsStr, err| TreeFailure::Io {
                name: name.to_owned(),
                depth: top + 1,
                err,
            };
            let mut subdir = None;
            let mut deleted = 0;
            let entries = dir.entries().map_err(|err| self.fail(top, err))?;
            for entry in entries {
                let entry = entry.map_err(|err| self.fail(top, err))?;
                let name = entry.file_name();
                let ty = entry.file_type().map_err(|e| in_it(&name, e))?;
                // Some filesystems do not say the type in the listing: ask, without following.
                let is_dir = if ty.is_dir() || ty.is_file() || ty.is_symlink() {
                    ty.is_dir()
                } else {
                    entry.metadata().map_err(|e| in_it(&name, e))?.is_dir()
                };
                if is_dir {
                    subdir = Some(name);
                    break;
                }
                if stop() {
                    self.deleted += deleted;
                    return Err(TreeFailure::Stopped);
                }
                match dir.remove_file(&name) {
                    Ok(()) => deleted += 1,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => {
                        self.deleted += deleted;
                        return Err(in_it(&name, e));
                    }
                }
            }
            self.deleted += deleted;
            if let Some(name) = subdir {
                self.frames.push(Frame { name, dir: None });
                continue;
            }
            // Empty: remove it from its parent.
            let removed = match top.checked_sub(1) {
                Some(parent) => {
                    self.open(parent)?;
                    let parent = self.frames[parent].dir.as_ref().expect("opened above");
                    parent.remove_dir(&self.frames[top].name)
                }
                None => self.base.remove_dir(&self.frames[top].name),
            };
            match removed {
                Ok(()) => {
                    self.frames.pop();
                    self.deleted += 1;
                }
                // Something was added meanwhile: empty it again (`stop` bounds this).
                Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => {}
                Err(e) => return Err(self.fail(top, e)),
            }
        }
        Ok(())
    }

    /// Makes sure the directory at `level` has its handle, opening it again if it was let go:
    /// from the nearest ancestor still open (or the base), one name at a time, never through a
    /// symbolic link. Only the deepest [`MAX_OPEN_DIRS`] levels keep their handles.
    fn open(&mut self, level: usize) -> Result<(), TreeFailure> {
        if self.frames[level].dir.is_some() {
            return Ok(());
        }
        let open_from = self.frames[..level]
            .iter()
            .rposition(|f| f.dir.is_some())
            .map_or(0, |i| i + 1);
        // Levels above `keep_from` hold no handle (each was let go when the tree grew past it).
        let keep_from = self.frames.len().saturating_sub(MAX_OPEN_DIRS);
        let mut passing: Option<Dir> = None;
        for i in open_from..=level {
            let parent = match (&passing, i.checked_sub(1)) {
                (Some(dir), _) => dir,
                (None, Some(p)) => self.frames[p].dir.as_ref().expect("the nearest open one"),
                (None, None) => &self.base,
            };
            let dir = open_dir_nofollow(parent, Path::new(&self.frames[i].name))
                .map_err(|err| self.fail(i, err))?;
            if i >= keep_from || i == level {
                self.frames[i].dir = Some(dir);
                passing = None;
            } else {
                passing = Some(dir);
            }
        }
        if let Some(above) = keep_from.checked_sub(1)
            && above < level
        {
            self.frames[above].dir = None;
        }
        Ok(())
    }

    fn fail(&self, level: usize, err: io::Error) -> TreeFailure {
        TreeFailure::Io {
            name: self.frames[level].name.clone(),
            depth: level,
            err,
        }
    }
}

/// Opens the directory `name` in `parent`, refusing a symbolic link (`ELOOP`).
pub(crate) fn open_dir_nofollow(parent: &Dir, name: &Path) -> io::Result<Dir> {
    let file = open_nofollow(
        parent,
        name,
        OpenOptions::new().read(true),
        libc::O_DIRECTORY,
    )?;
    Ok(Dir::from_std_file(file.into_std()))
}

/// Opens the file `name` in `parent` with `options` and the extra `flags` (`O_*`), refusing a
/// symbolic link (`ELOOP`).
///
/// `O_NOFOLLOW` is added; as cap-std's fallback resolution (Linux before 5.6) may still follow a
/// link in the last place, the file opened is then checked to be the very one at `name`.
pub(crate) fn open_nofollow(
    parent: &Dir,
    name: &Path,
    options: &mut OpenOptions,
    flags: i32,
) -> io::Result<File> {
    let file = parent.open_with(name, options.custom_flags(flags | libc::O_NOFOLLOW))?;
    let opened = file.metadata()?;
    let there = parent.symlink_metadata(name)?;
    if there.file_type().is_symlink() || (opened.dev(), opened.ino()) != (there.dev(), there.ino())
    {
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok(file)
}

/// The lexical checks of [`Workspace::relative`].
pub(crate) fn check_relative(path: &str) -> Result<PathBuf, SkillError> {
    if path.contains('\0') {
        return Err(SkillError::Safety(format!(
            "`{}` contains a NUL byte, which no file name can hold",
            path.escape_debug()
        )));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(SkillError::Safety(format!(
            "`{}…` is {} bytes long; paths may be at most {MAX_PATH_BYTES} bytes",
            prefix_chars(path, 60),
            path.len()
        )));
    }
    let mut rel = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                return Err(SkillError::Safety(format!(
                    "`{path}` is an absolute path; give a path relative to the workspace root"
                )));
            }
            Component::ParentDir => {
                return Err(SkillError::Safety(format!(
                    "`{path}` contains `..`; paths may not climb out of the workspace"
                )));
            }
            Component::CurDir => {}
            Component::Normal(name) => {
                if name.len() > MAX_COMPONENT_BYTES {
                    return Err(SkillError::Safety(format!(
                        "`{}…` has a component of {} bytes; file names may be at most {MAX_COMPONENT_BYTES} bytes",
                        prefix_chars(path, 60),
                        name.len()
                    )));
                }
                rel.push(name);
            }
        }
    }
    if rel.as_os_str().is_empty() {
        rel.push(".");
    }
    Ok(rel)
}

/// Whether cap-std refused the operation because it would leave the root.
fn is_escape(err: &io::Error) -> bool {
    err.raw_os_error() == Some(libc::EXDEV)
        || (err.kind() == io::ErrorKind::PermissionDenied
            && err.raw_os_error().is_none()
            && err.to_string().contains("outside of the filesystem"))
}

fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn temp_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        ".eugene-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// An I/O error with a message that names the path; the OS's words stay as the source.
#[derive(Debug)]
struct ContextError {
    message: String,
    source: io::Error,
}

impl std::fmt::Display for ContextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ContextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_paths_pass_and_dots_mean_the_root() {
        assert_eq!(check_relative("a/b.txt").unwrap(), Path::new("a/b.txt"));
        assert_eq!(check_relative("./a//b").unwrap(), Path::new("a/b"));
        assert_eq!(check_relative("").unwrap(), Path::new("."));
        assert_eq!(check_relative(".").unwrap(), Path::new("."));
    }

    #[test]
    fn lexical_refusals_are_safety_errors_naming_the_path() {
        for bad in ["/etc/passwd", "a/../../b", "..", "a\0b"] {
            let err = check_relative(bad).unwrap_err();
            assert!(matches!(err, SkillError::Safety(_)), "{bad}: {err}");
            let shown = bad.escape_debug().to_string();
            assert!(err.to_string().contains(&shown), "{err}");
        }
    }
}
