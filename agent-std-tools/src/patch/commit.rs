//! Step 3 of a patch: the planned changes made on disk, all of them or (as far as the filesystem
//! lets) none.
//!
//! 1. Every new content is staged: written and flushed to a temporary file next to its target
//!    (missing directories created). A failure here removes what was staged and created.
//! 2. Every file the patch deletes is set aside: renamed to a hidden temporary name in its
//!    directory ([`Workspace::set_aside`]). Nothing of it is read, whatever its size.
//! 3. Every staged file is renamed over its target.
//! 4. The files set aside are removed for good.
//!
//! A failure in step 2 or 3 (a full disk, a permission changed meanwhile, a path taken since the
//! plan) puts back what was done: files set aside are renamed back (the very files, not copies),
//! files replaced get the content read when planning, files created are removed. What cannot be
//! put back is named in the error, with where its content is.

use agent_core::SkillError;

use crate::names::display_name;
use crate::sandbox::{SetAside, Staged, Workspace};

/// One change the commit makes.
pub(super) enum Op {
    /// Write `content` to `path`; `original` is what was there (`None`: nothing).
    /// `permissions`: those of the file a move comes from, for the new file.
    Write {
        path: String,
        content: Vec<u8>,
        original: Option<Vec<u8>>,
        permissions: Option<cap_std::fs::Permissions>,
    },
    /// Delete `path` (never read: it is set aside, then removed).
    Delete { path: String },
}

/// Why a commit failed, and what it could not put back.
pub(super) struct Failure {
    /// The first error, which stopped the commit.
    pub(super) error: SkillError,
    /// The files left changed, each with where its old content is; empty when everything was put
    /// back (the usual case).
    pub(super) not_restored: Vec<String>,
}

/// Makes `ops` on disk, in the steps of the [module docs](self). On success, returns notes on
/// files set aside that could not be removed (their paths are gone; their content is left at a
/// hidden name, which the note gives).
pub(super) fn commit(ws: &Workspace, ops: Vec<Op>) -> Result<Vec<String>, Failure> {
    let mut created_dirs = Vec::new();
    let mut staged: Vec<(Staged, Option<Vec<u8>>)> = Vec::new();
    let mut deletes: Vec<String> = Vec::new();
    for op in ops {
        match op {
            Op::Write {
                path,
                content,
                original,
                permissions,
            } => match ws
                .stage_with_dirs(&path, &content, &mut created_dirs)
                .and_then(|file| match permissions {
                    Some(permissions) => file.set_permissions(ws, permissions).map(|()| file),
                    None => Ok(file),
                }) {
                Ok(file) => staged.push((file, original)),
                Err(error) => {
                    drop(staged);
                    ws.remove_created_dirs(&created_dirs);
                    return Err(Failure {
                        error,
                        not_restored: Vec::new(),
                    });
                }
            },
            Op::Delete { path } => deletes.push(path),
        }
    }

    // Everything is on disk next to its target; from here on only renames and unlinks happen.
    let mut set_aside: Vec<SetAside> = Vec::new();
    for path in deletes {
        match ws.set_aside(&path) {
            Ok(file) => set_aside.push(file),
            Err(error) => {
                drop(staged);
                let not_restored = roll_back(ws, &[], set_aside);
                ws.remove_created_dirs(&created_dirs);
                return Err(Failure {
                    error,
                    not_restored,
                });
            }
        }
    }
    let mut done: Vec<(String, Option<Vec<u8>>)> = Vec::new();
    let mut pending = staged.into_iter();
    for (file, original) in pending.by_ref() {
        let path = file.path().to_owned();
        if let Err(error) = file.commit(ws) {
            drop(pending);
            let not_restored = roll_back(ws, &done, set_aside);
            ws.remove_created_dirs(&created_dirs);
            return Err(Failure {
                error,
                not_restored,
            });
        }
        done.push((path, original));
    }
    Ok(set_aside
        .into_iter()
        .filter_map(|file| file.remove().err())
        .map(|e| e.to_string())
        .collect())
}

/// Puts back what a failed commit already changed: the files written (their old content, or
/// removed if they were new), then the files set aside. Returns what could not be put back (the
/// failure that got us here may stop this too; the first error is still the one reported).
fn roll_back(
    ws: &Workspace,
    written: &[(String, Option<Vec<u8>>)],
    set_aside: Vec<SetAside>,
) -> Vec<String> {
    let mut not_restored = Vec::new();
    for (path, original) in written.iter().rev() {
        let undone = match original {
            Some(bytes) => ws.write_atomic(path, bytes).map(|_| ()),
            None => ws.remove_file(path),
        };
        if let Err(e) = undone {
            let path = display_name(path);
            not_restored.push(match original {
                Some(_) => format!("`{path}` has the patch's content ({e})"),
                None => format!("`{path}` was created ({e})"),
            });
        }
    }
    for file in set_aside.into_iter().rev() {
        let (path, aside) = (display_name(file.path()), display_name(file.aside_path()));
        if let Err(e) = file.restore(ws) {
            not_restored.push(format!(
                "`{path}` is gone, its content is at `{aside}` ({e})"
            ));
        }
    }
    not_restored
}
