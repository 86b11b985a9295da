//! `apply_patch`: V4A patches (the format OpenAI's models are trained to write), applied all or
//! nothing.
//!
//! Three steps, so that a patch that fails anywhere changes nothing:
//!
//! 1. [`parse`] the text into [`Hunk`]s (pure).
//! 2. Plan: read every file the patch touches through the [`Workspace`] and compute every new
//!    content in memory with [`apply_chunks`] (pure). A context line that does not match, a file
//!    that is missing or already there, a path outside the workspace: the error is returned here,
//!    before anything is written.
//! 3. Commit: stage every new content as a flushed temporary file next to its target, then rename
//!    them all into place, then delete. If staging fails, the temporary files (and any directory
//!    created for them) are removed. If a rename or deletion fails half-way (a full disk, a
//!    permission changed meanwhile), what was already done is put back from the contents read in
//!    step 2.
//!
//! codex's standalone `apply_patch` writes file by file and leaves earlier files changed when a
//! later hunk fails; this one does not.
//!
//! The `apply_patch` skill takes a patch of at most [`FilesConfig::max_write_bytes`] (10 MiB by
//! default), which bounds what it adds to the workspace; a longer one is a bad argument and
//! changes nothing. ([`apply_patch_in`] itself takes any length.)
//!
//! The work of step 2 is bounded (see [`apply_chunks`]: indexed search, a work budget) and the
//! skill's blocking thread stops between files and hunks when its call is dropped (a time limit
//! passed, the run was cancelled) or the context's token fires; until the commit starts nothing
//! has been written, so a stopped patch changes nothing and answers
//! [`SkillError::Cancelled`].
//!
//! ```
//! use agent_core::SkillContext;
//! use agent_std_tools::patch::apply_patch_in;
//! use agent_std_tools::sandbox::Workspace;
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
//! let ws = Workspace::from_context(&SkillContext::new(dir.path())).unwrap();
//! let report = apply_patch_in(&ws, "*** Begin Patch
//! *** Update File: a.txt
//!  one
//! -two
//! +three
//! *** Add File: b.txt
//! +new
//! *** End Patch").unwrap();
//! assert_eq!(report, "Success. Updated the following files:\nM a.txt\nA b.txt");
//! assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "one\nthree\n");
//! ```

mod apply;
mod parse;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use agent_core::{SkillContext, SkillError, skill};

pub use apply::ApplyError;
use apply::{Failure, apply_chunks_until};
// Public for the property tests, the fuzz target and the benches, not part of the documented API.
#[doc(hidden)]
pub use apply::{apply_chunks, normalise, seek};
pub use parse::{Chunk, DiffLine, Hunk, ParseError, Patch, parse};

use crate::blocking::{Stop, blocking_until_stopped};
use crate::files::{DEFAULT_MAX_WRITE_BYTES, FilesConfig, check_write_size};
use crate::names::display_name;
use crate::sandbox::{Links, Staged, Workspace};

/// Apply a patch in the V4A format to files in the workspace, all or nothing: if any part fails,
/// no file is changed.
///
/// Format:
/// ```text
/// *** Begin Patch
/// *** Add File: path/new.txt
/// +every line of the new file, each starting with +
/// *** Delete File: path/old.txt
/// *** Update File: path/file.rs
/// *** Move to: path/renamed.rs        (optional)
/// @@ fn a line above the change, to find the place (optional)
///  unchanged context line (starts with a space)
/// -removed line
/// +added line
/// *** End of File                     (optional: the change is at the end of the file)
/// *** End Patch
/// ```
/// Give about three lines of context around each change. Paths are relative to the workspace.
/// On success, lists the files as `A` (added), `M` (modified) or `D` (deleted).
///
/// # Arguments
/// * `patch` - The whole patch text, from `*** Begin Patch` to `*** End Patch`.
#[skill]
pub async fn apply_patch(ctx: &SkillContext, patch: String) -> Result<String, SkillError> {
    let max = ctx
        .extension::<FilesConfig>()
        .map_or(DEFAULT_MAX_WRITE_BYTES, |c| c.max_write_bytes);
    check_write_size(
        "apply_patch",
        "patch",
        patch.len(),
        max,
        "Split it into smaller patches",
    )?;
    let ws = Workspace::from_context(ctx)?;
    blocking_until_stopped(ctx, move |stop| apply_patch_until(&ws, &patch, stop)).await
}

/// One change the commit makes.
enum Op {
    /// Write `content` to `path`; `original` is what was there (`None`: nothing).
    /// `permissions`: those of the file a move comes from, for the new file.
    Write {
        path: String,
        content: Vec<u8>,
        original: Option<Vec<u8>>,
        permissions: Option<cap_std::fs::Permissions>,
    },
    /// Delete `path`, whose content was `original`.
    Delete { path: String, original: Vec<u8> },
}

/// Applies V4A `patch_text` inside `ws`, all or nothing, and reports `A/M/D path` lines.
/// Parse errors are [`SkillError::BadArgs`] on `patch`; paths outside the workspace are
/// [`SkillError::Safety`]; anything else that stops the patch is [`SkillError::Tool`].
pub fn apply_patch_in(ws: &Workspace, patch_text: &str) -> Result<String, SkillError> {
    apply_patch_until(ws, patch_text, &Stop::never())
}

/// [`apply_patch_in`], stopping (with [`SkillError::Cancelled`], nothing changed) once `stop` is
/// set, up to the commit.
fn apply_patch_until(ws: &Workspace, patch_text: &str, stop: &Stop) -> Result<String, SkillError> {
    let patch = parse(patch_text).map_err(|e| SkillError::bad_args("patch", e.0))?;
    check_distinct_paths(ws, &patch)?;
    let (ops, summary) = plan(ws, &patch, stop).map_err(unchanged)?;
    // The last moment to stop: from here on, files change.
    if stop.is_set() {
        return Err(SkillError::Cancelled);
    }
    commit(ws, ops).map_err(unchanged)?;
    Ok(format!(
        "Success. Updated the following files:\n{}",
        summary.join("\n")
    ))
}

/// Appends "no file was changed" to failures, which is what the model most needs to know.
fn unchanged(err: SkillError) -> SkillError {
    match err {
        SkillError::Tool { message, source } => SkillError::Tool {
            message: format!("apply_patch failed, no file was changed: {message}"),
            source,
        },
        other => other,
    }
}

fn check_distinct_paths(ws: &Workspace, patch: &Patch) -> Result<(), SkillError> {
    let mut seen: HashSet<(Option<(u64, u64)>, PathBuf)> = HashSet::new();
    for hunk in &patch.hunks {
        let mut paths = vec![hunk.path()];
        if let Hunk::Update {
            move_to: Some(dest),
            ..
        } = hunk
        {
            paths.push(dest);
        }
        for path in paths {
            let rel = ws.relative(path)?;
            if !seen.insert(identity(ws, &rel)) {
                let path = display_name(path);
                return Err(SkillError::bad_args(
                    "patch",
                    format!(
                        "`{path}` appears in more than one operation; combine its changes into one `*** Update File`"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What `rel` names on disk, so that two spellings of one file (one through a symbolic link to a
/// directory) compare equal: the device and inode of its nearest existing directory, and the
/// rest of the path below it. Without any (an error is reported later), the path itself.
fn identity(ws: &Workspace, rel: &Path) -> (Option<(u64, u64)>, PathBuf) {
    use cap_std::fs::MetadataExt;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    let mut at = rel;
    while let Some(name) = at.file_name() {
        rest.push(name);
        at = at.parent().unwrap_or(Path::new(""));
        let dir = if at.as_os_str().is_empty() {
            Path::new(".")
        } else {
            at
        };
        if let Ok(meta) = ws.dir().metadata(dir)
            && meta.is_dir()
        {
            let below: PathBuf = rest.iter().rev().collect();
            return (Some((meta.dev(), meta.ino())), below);
        }
    }
    (None, rel.to_path_buf())
}

/// Step 2: every new content, computed in memory.
fn plan(ws: &Workspace, patch: &Patch, stop: &Stop) -> Result<(Vec<Op>, Vec<String>), SkillError> {
    let mut ops = Vec::new();
    let mut summary = Vec::new();
    for hunk in &patch.hunks {
        if stop.is_set() {
            return Err(SkillError::Cancelled);
        }
        match hunk {
            Hunk::Add { path, content } => {
                let shown = display_name(path);
                if ws.symlink_metadata(path)?.is_some() {
                    return Err(SkillError::tool(format!(
                        "`{shown}` already exists; use `*** Update File: {shown}` to change it"
                    )));
                }
                ops.push(Op::Write {
                    path: path.clone(),
                    content: content.clone().into_bytes(),
                    original: None,
                    permissions: None,
                });
                summary.push(format!("A {shown}"));
            }
            Hunk::Delete { path } => {
                let original = read_regular(ws, path)?;
                ops.push(Op::Delete {
                    path: path.clone(),
                    original,
                });
                summary.push(format!("D {}", display_name(path)));
            }
            Hunk::Update {
                path,
                move_to,
                chunks,
            } => {
                let shown = display_name(path);
                let original = read_regular(ws, path)?;
                let text = std::str::from_utf8(&original).map_err(|_| {
                    SkillError::tool(format!(
                        "`{shown}` is not UTF-8 text; apply_patch only edits text files"
                    ))
                })?;
                let new = apply_chunks_until(text, path, chunks, &|| stop.is_set()).map_err(
                    |failure| match failure {
                        Failure::Message(message) => SkillError::tool(message),
                        Failure::Stopped => SkillError::Cancelled,
                    },
                )?;
                match move_to {
                    Some(dest) => {
                        let dest_shown = display_name(dest);
                        if ws.symlink_metadata(dest)?.is_some() {
                            return Err(SkillError::tool(format!(
                                "cannot move `{shown}` to `{dest_shown}`: `{dest_shown}` already \
                                 exists"
                            )));
                        }
                        ops.push(Op::Write {
                            path: dest.clone(),
                            content: new.into_bytes(),
                            original: None,
                            permissions: Some(ws.metadata(path)?.permissions()),
                        });
                        ops.push(Op::Delete {
                            path: path.clone(),
                            original,
                        });
                        summary.push(format!("M {dest_shown} (moved from {shown})"));
                    }
                    None => {
                        ops.push(Op::Write {
                            path: path.clone(),
                            content: new.into_bytes(),
                            original: Some(original),
                            permissions: None,
                        });
                        summary.push(format!("M {shown}"));
                    }
                }
            }
        }
    }
    Ok((ops, summary))
}

/// Reads a file the patch changes or deletes; it must be a regular file, not a link or directory.
/// What is at the path is looked at first only to word the refusal; the file is opened without
/// following a link and checked once opened, so a link or a FIFO put in its place since is
/// refused too, without waiting on it.
fn read_regular(ws: &Workspace, path: &str) -> Result<Vec<u8>, SkillError> {
    let shown = display_name(path);
    match ws.symlink_metadata(path)? {
        None => {
            // Names a dangling link or a missing parent precisely.
            Err(ws
                .read(path)
                .err()
                .unwrap_or_else(|| SkillError::tool(format!("`{shown}` does not exist"))))
        }
        Some(meta) if meta.file_type().is_symlink() => Err(SkillError::Safety(format!(
            "`{shown}` is a symbolic link; patch the file it points to instead"
        ))),
        Some(meta) if meta.is_dir() => Err(SkillError::tool(format!(
            "`{shown}` is a directory, not a file"
        ))),
        Some(_) => ws.read_regular(path, Links::Refuse),
    }
}

/// Step 3: stage, rename, delete; undo on a failure half-way.
fn commit(ws: &Workspace, ops: Vec<Op>) -> Result<(), SkillError> {
    let mut created_dirs = Vec::new();
    let mut staged: Vec<(Staged, Option<Vec<u8>>)> = Vec::new();
    let mut deletes: Vec<(String, Vec<u8>)> = Vec::new();
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
                Err(e) => {
                    drop(staged);
                    ws.remove_created_dirs(&created_dirs);
                    return Err(e);
                }
            },
            Op::Delete { path, original } => deletes.push((path, original)),
        }
    }

    // Everything is on disk next to its target; from here on only renames and unlinks happen.
    let mut done: Vec<(String, Option<Vec<u8>>)> = Vec::new();
    let mut pending = staged.into_iter();
    for (file, original) in pending.by_ref() {
        let path = file.path().to_owned();
        if let Err(e) = file.commit(ws) {
            drop(pending);
            roll_back(ws, &done, &[]);
            ws.remove_created_dirs(&created_dirs);
            return Err(e);
        }
        done.push((path, original));
    }
    let mut deleted: Vec<(String, Vec<u8>)> = Vec::new();
    for (path, original) in deletes {
        if let Err(e) = ws.remove_file(&path) {
            roll_back(ws, &done, &deleted);
            ws.remove_created_dirs(&created_dirs);
            return Err(e);
        }
        deleted.push((path, original));
    }
    Ok(())
}

/// Puts back what a failed commit already changed (best effort: the failure that got us here may
/// stop this too, and then the first error is still the one reported).
fn roll_back(ws: &Workspace, written: &[(String, Option<Vec<u8>>)], deleted: &[(String, Vec<u8>)]) {
    for (path, original) in written.iter().rev() {
        let _ = match original {
            Some(bytes) => ws.write_atomic(path, bytes).map(|_| ()),
            None => ws.remove_file(path),
        };
    }
    for (path, original) in deleted.iter().rev() {
        let _ = ws.write_atomic(path, original);
    }
}
