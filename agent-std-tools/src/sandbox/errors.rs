//! How an I/O error on a workspace path becomes a [`SkillError`] that names the path: escapes,
//! symbolic-link loops and dangling links as [`SkillError::Safety`], the rest with the OS's words
//! kept as the source. Paths and link targets are shown as listings show names (control and
//! invisible characters escaped).

use std::io;
use std::path::PathBuf;

use agent_core::SkillError;

use super::Workspace;
use super::regular::NotRegular;
use crate::names::display_name;

impl Workspace {
    /// Turns an I/O error on `path` into a [`SkillError`]: escapes, symbolic-link loops and
    /// dangling symbolic links become [`SkillError::Safety`] naming the path; the rest become
    /// [`SkillError::Tool`] messages that name it too (a directory, FIFO, socket or device where
    /// a regular file was wanted says which it is).
    pub fn fs_error(&self, path: &str, err: io::Error) -> SkillError {
        let shown = display_name(path);
        if is_escape(&err) {
            return self.escape(path);
        }
        match NotRegular::of(&err) {
            Some(NotRegular::Directory) => {
                return SkillError::from_error(ContextError {
                    message: format!("`{shown}` is a directory; give the path of a file"),
                    source: err,
                });
            }
            Some(kind) => {
                return SkillError::from_error(ContextError {
                    message: format!(
                        "`{shown}` is not a regular file but {kind}; only regular files are read \
                         or written"
                    ),
                    source: err,
                });
            }
            None => {}
        }
        if err.raw_os_error() == Some(libc::ELOOP) {
            return SkillError::Safety(format!(
                "`{shown}` goes through a loop of symbolic links (or a symbolic link where none is allowed)"
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
                .map(|t| format!(" (to `{}`)", display_name(t)))
                .unwrap_or_default();
            return if link == self.relative(path).unwrap_or_default() {
                SkillError::Safety(format!(
                    "`{shown}` is a dangling symbolic link{target}: what it points to does not exist"
                ))
            } else {
                SkillError::Safety(format!(
                    "`{shown}` goes through `{}`, a dangling symbolic link{target}: what it points to does not exist",
                    display_name(&link)
                ))
            };
        }
        match err.kind() {
            io::ErrorKind::NotFound => SkillError::from_error(ContextError {
                message: format!("`{shown}` does not exist"),
                source: err,
            }),
            io::ErrorKind::PermissionDenied => SkillError::from_error(ContextError {
                message: format!("`{shown}`: permission denied"),
                source: err,
            }),
            _ if err.raw_os_error() == Some(libc::ENOTDIR) => {
                SkillError::from_error(ContextError {
                    message: format!("`{shown}`: a component of the path is not a directory"),
                    source: err,
                })
            }
            _ if err.raw_os_error() == Some(libc::EISDIR) => SkillError::from_error(ContextError {
                message: format!("`{shown}` is a directory; give the path of a file"),
                source: err,
            }),
            // What opening without waiting says of a file another process holds a lease on.
            io::ErrorKind::WouldBlock => SkillError::Transient(format!(
                "`{shown}` is held by another process (a lease) and cannot be opened now; try \
                 again"
            )),
            _ => SkillError::from_error(ContextError {
                message: format!("`{shown}`: {err}"),
                source: err,
            }),
        }
    }

    pub(super) fn escape(&self, path: &str) -> SkillError {
        let shown = display_name(path);
        SkillError::Safety(format!(
            "`{shown}` leads outside the workspace through a symbolic link (absolute links count as outside); only files inside the workspace can be used"
        ))
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

/// Whether cap-std refused the operation because it would leave the root.
pub(crate) fn is_escape(err: &io::Error) -> bool {
    err.raw_os_error() == Some(libc::EXDEV)
        || (err.kind() == io::ErrorKind::PermissionDenied
            && err.raw_os_error().is_none()
            && err.to_string().contains("outside of the filesystem"))
}

/// An I/O error with a message that names the path; the OS's words stay as the source.
#[derive(Debug)]
pub(crate) struct ContextError {
    pub(crate) message: String,
    pub(crate) source: io::Error,
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
