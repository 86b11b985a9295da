//! The bounded recursive delete behind [`Workspace::remove_dir_all_until`]: depth first, at most
//! [`MAX_OPEN_DIRS`] directories open at once, never through a symbolic link.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::Path;

use agent_core::SkillError;
use cap_std::fs::Dir;

use super::Workspace;
use super::errors::ContextError;
use super::nofollow::open_dir_nofollow;
use crate::names::display_name;

impl Workspace {
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
        let shown = display_name(path);
        let (Some(name), Some(parent)) = (rel.file_name(), rel.parent()) else {
            return Err(SkillError::Safety(format!(
                "`{shown}` is the workspace root, which cannot be deleted"
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
                "stopped while deleting `{shown}` (cancelled or out of time): {} entries were \
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
                        "cannot delete everything in `{shown}`: `{}`, {depth} level{} down: \
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
