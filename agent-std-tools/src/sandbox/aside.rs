//! Deleting a file so that the deletion can still be undone: the file is renamed to a hidden
//! temporary name in its own directory ([`Workspace::set_aside`]), then either removed for good
//! ([`SetAside::remove`]) or renamed back ([`SetAside::restore`]). Nothing of the file is read, so
//! this costs the same for a file of any size, and putting it back restores the very file (its
//! inode, permissions, owner and links), not a copy.

use std::ffi::OsString;
use std::io;
use std::path::Path;

use agent_core::SkillError;
use cap_std::fs::Dir;

use super::Workspace;
use super::staged::temp_name;
use crate::names::display_name;

impl Workspace {
    /// Renames the file (or symbolic link: never what it points to) at `path` to a hidden
    /// temporary name next to it, so that `path` no longer exists but the file can be put back.
    /// Refuses the workspace root and a directory.
    pub fn set_aside(&self, path: &str) -> Result<SetAside, SkillError> {
        let rel = self.relative(path)?;
        let Some(name) = rel.file_name().map(|n| n.to_owned()) else {
            return Err(SkillError::bad_args(
                "path",
                format!(
                    "`{}` names the workspace root, not a file",
                    display_name(path)
                ),
            ));
        };
        let parent = rel.parent().unwrap_or(Path::new(""));
        let parent = if parent.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir(parent)
        }
        .map_err(|e| self.fs_error(path, e))?;
        match parent.symlink_metadata(&name) {
            Ok(meta) if meta.is_dir() => {
                return Err(SkillError::tool(format!(
                    "`{}` is a directory, not a file",
                    display_name(path)
                )));
            }
            Ok(_) => {}
            Err(e) => return Err(self.fs_error(path, e)),
        }
        let aside = temp_name();
        parent
            .rename(&name, &parent, &aside)
            .map_err(|e| self.fs_error(path, e))?;
        Ok(SetAside {
            path: path.to_owned(),
            parent,
            name,
            aside: Some(aside),
        })
    }
}

/// A file renamed aside by [`Workspace::set_aside`]: gone from its path, not yet gone from the
/// disk. Dropped without [`SetAside::remove`], it is put back (as well as can be).
#[derive(Debug)]
pub struct SetAside {
    path: String,
    parent: Dir,
    name: OsString,
    aside: Option<String>,
}

impl SetAside {
    /// The path the file had, as the caller gave it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Where the file is now, relative to the workspace root (for a message when it cannot be put
    /// back).
    pub fn aside_path(&self) -> String {
        let aside = self.aside.as_deref().unwrap_or_default();
        match Path::new(&self.path).parent() {
            Some(dir) if !dir.as_os_str().is_empty() => format!("{}/{aside}", dir.display()),
            _ => aside.to_owned(),
        }
    }

    /// Deletes the file for good. If that fails, the file stays at [`SetAside::aside_path`] (it is
    /// not put back: its path may have been taken meanwhile) and the error says so.
    pub fn remove(mut self) -> Result<(), SkillError> {
        let shown = display_name(self.aside_path());
        let aside = self
            .aside
            .take()
            .expect("set aside until removed or restored");
        self.parent.remove_file(&aside).map_err(|e| {
            SkillError::tool(format!(
                "`{}` was deleted, but removing its old content from `{shown}` failed ({e}); \
                 delete `{shown}` with delete_file",
                display_name(&self.path)
            ))
        })
    }

    /// Puts the file back at its path. If that fails, the file stays at [`SetAside::aside_path`].
    pub fn restore(mut self, ws: &Workspace) -> Result<(), SkillError> {
        let aside = self
            .aside
            .take()
            .expect("set aside until removed or restored");
        self.rename_back(&aside)
            .map_err(|e| ws.fs_error(&self.path, e))
    }

    fn rename_back(&self, aside: &str) -> io::Result<()> {
        self.parent.rename(aside, &self.parent, &self.name)
    }
}

impl Drop for SetAside {
    fn drop(&mut self) {
        if let Some(aside) = self.aside.take() {
            let _ = self.rename_back(&aside);
        }
    }
}
