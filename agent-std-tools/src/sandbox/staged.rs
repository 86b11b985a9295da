//! Atomic writes: a file staged next to its target (written, flushed, missing parent directories
//! created) and renamed into place by [`Staged::commit`], or removed again when dropped.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use agent_core::SkillError;
use cap_std::fs::{Dir, OpenOptions};

use super::Workspace;
use crate::names::display_name;

impl Workspace {
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
        let shown = display_name(path);
        if path.ends_with('/') || path.ends_with("/.") {
            // `Path` drops the ending, which would write a file named like the directory.
            return Err(SkillError::bad_args(
                "path",
                format!(
                    "`{shown}` ends with `/`, so it names a directory; give the path of a file in \
                     it (for example `{}file.txt`)",
                    shown.trim_end_matches('.')
                ),
            ));
        }
        let Some(name) = rel.file_name().map(|n| n.to_owned()) else {
            return Err(SkillError::bad_args(
                "path",
                format!("`{shown}` names the workspace root, not a file"),
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
                    "`{shown}` is a directory; give the path of a file"
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
        let shown = display_name(path);
        let mut prefix = PathBuf::new();
        for component in parent.components() {
            prefix.push(component);
            match self.dir.metadata(&prefix) {
                Ok(meta) if meta.is_dir() => continue,
                Ok(_) => {
                    return Err(SkillError::tool(format!(
                        "cannot create `{shown}`: `{}` is a file, not a directory",
                        display_name(&prefix)
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

    /// Why a write to the symbolic link at `path` is refused: writes never go through links.
    fn symlink_refusal(&self, path: &str) -> SkillError {
        let shown = display_name(path);
        let Ok(rel) = self.relative(path) else {
            return self.escape(path);
        };
        let target = self.dir.read_link_contents(&rel).ok();
        match (target, self.dir.metadata(&rel)) {
            (Some(target), Ok(_)) => SkillError::Safety(format!(
                "`{shown}` is a symbolic link (to `{}`); write to the file it points to instead",
                display_name(target)
            )),
            _ => SkillError::Safety(format!(
                "`{shown}` is a dangling or outside-pointing symbolic link; it cannot be written through"
            )),
        }
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

/// A fresh hidden name for a temporary file (`.eugene-<pid>-<n>.tmp`).
pub(super) fn temp_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        ".eugene-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
