//! `apply_patch`: V4A patches (the format OpenAI's models are trained to write), applied all or
//! nothing.
//!
//! Three steps, so that a patch that fails anywhere changes nothing:
//!
//! 1. [`parse`] the text into [`Hunk`]s (pure).
//! 2. Plan: read every file the patch changes through the [`Workspace`] and compute every new
//!    content in memory with [`apply_chunks`] (pure). A context line that does not match, a file
//!    that is missing or already there, a path outside the workspace, a file over the size
//!    limits: the error is returned here, before anything is written.
//! 3. Commit: stage every new content as a flushed temporary file next to its target, set every
//!    deleted file aside (renamed to a hidden name), rename the staged files into place, then
//!    remove what was set aside. If staging fails, the temporary files (and any directory created
//!    for them) are removed. If a rename fails half-way (a full disk, a permission changed
//!    meanwhile), what was already done is put back: the files set aside are renamed back, the
//!    files replaced get the contents read in step 2.
//!
//! # Limits
//!
//! A file is read only to be changed (`*** Update File`, with or without `*** Move to`), and
//! whole, to match context anywhere in it; [`PatchConfig`] bounds what is read, checked on the
//! file's size before any of it is read:
//!
//! - a file of at most [`MAX_FILE_BYTES`] (4 MiB). Matching holds the file's lines and one
//!   index of them per matching pass: up to about 70 bytes of memory per byte of file when its
//!   lines are short and all different (300 MB for 4 MiB of 8-byte lines), about 12 for source
//!   code; and the work budget of [`apply_chunks`] grows with the file's lines (256 units per
//!   line), so at 4 MiB it is at most about 1.1 billion units, a few seconds;
//! - at most [`MAX_TOTAL_BYTES`] (32 MiB) of files in one patch: their old and new contents are
//!   held until the commit.
//!
//! A larger file is refused with an error that says the limit and what to use instead
//! (`run_shell` with `sed`, `write_file`, `mv`). The file is then opened without following a
//! link, non-blocking, and checked once opened (a FIFO or device put in its place since is
//! refused without being waited on, as every file the crate reads is), and read only up to the
//! limit and one byte more: one that grew after its size was checked is refused the same way.
//! A deleted file is never read, nor opened (only checked to be a regular file), so
//! `*** Delete File` takes a file of any size, in constant memory; nor are the files an
//! `*** Add File` or a `*** Move to` would overwrite (they are refused by their existence).
//!
//! The `apply_patch` skill takes a patch of at most [`FilesConfig::max_write_bytes`] (10 MiB by
//! default), which bounds what it adds to the workspace; a longer one is a bad argument and
//! changes nothing. ([`apply_patch_in`] itself takes any length.)
//!
//! codex's standalone `apply_patch` writes file by file and leaves earlier files changed when a
//! later hunk fails; this one does not.
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
mod budget;
mod commit;
mod parse;
mod seek;

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use agent_core::{SkillContext, SkillError, skill};
use cap_std::fs::{Metadata, MetadataExt};

use apply::apply_chunks_until;
pub use apply::{ApplyError, apply_chunks};
use budget::Failure;
pub use parse::{Chunk, DiffLine, Hunk, ParseError, Patch, parse};
#[cfg(feature = "test-utils")]
pub use seek::{normalise, seek};

use crate::blocking::{Stop, blocking_until_stopped};
use crate::files::{DEFAULT_MAX_WRITE_BYTES, FilesConfig, check_write_size};
use crate::names::display_name;
use crate::sandbox::{Links, NotRegular, Workspace};
use crate::units::binary_size;
use commit::{Op, commit};

/// The largest file, in bytes, that `apply_patch` changes (4 MiB): see the
/// [module docs](self#limits) for why.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// The most bytes of files one patch may change, all files together (32 MiB).
pub const MAX_TOTAL_BYTES: u64 = 32 << 20;

/// Limits of `apply_patch`. Put one in the context with [`SkillContext::with_extension`];
/// without one, [`PatchConfig::default`] applies.
///
/// ```
/// use agent_core::SkillContext;
/// use agent_std_tools::PatchConfig;
///
/// let ctx = SkillContext::new(".").with_extension(PatchConfig {
///     max_file_bytes: 1 << 20,
///     ..PatchConfig::default()
/// });
/// # let _ = ctx;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchConfig {
    /// The largest file a patch changes (`*** Update File`), in bytes. Default
    /// [`MAX_FILE_BYTES`].
    pub max_file_bytes: u64,
    /// The most bytes of files one patch changes, all together. Default [`MAX_TOTAL_BYTES`].
    pub max_total_bytes: u64,
}

impl Default for PatchConfig {
    fn default() -> Self {
        PatchConfig {
            max_file_bytes: MAX_FILE_BYTES,
            max_total_bytes: MAX_TOTAL_BYTES,
        }
    }
}

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
    let config = ctx.extension::<PatchConfig>().cloned().unwrap_or_default();
    blocking_until_stopped(ctx, move |stop| {
        apply_patch_until(&ws, &patch, &config, stop)
    })
    .await
}

/// Applies V4A `patch_text` inside `ws`, all or nothing, within [`PatchConfig::default`], and
/// reports `A/M/D path` lines. Parse errors are [`SkillError::BadArgs`] on `patch`; paths outside
/// the workspace are [`SkillError::Safety`]; anything else that stops the patch is
/// [`SkillError::Tool`].
pub fn apply_patch_in(ws: &Workspace, patch_text: &str) -> Result<String, SkillError> {
    apply_patch_until(ws, patch_text, &PatchConfig::default(), &Stop::never())
}

/// [`apply_patch_in`] within `config`, stopping (with [`SkillError::Cancelled`], nothing
/// changed) once `stop` is set, up to the commit.
fn apply_patch_until(
    ws: &Workspace,
    patch_text: &str,
    config: &PatchConfig,
    stop: &Stop,
) -> Result<String, SkillError> {
    let patch = parse(patch_text).map_err(|e| SkillError::bad_args("patch", e.0))?;
    check_distinct_paths(ws, &patch)?;
    let (ops, mut summary) = plan(ws, &patch, config, stop).map_err(unchanged)?;
    // The last moment to stop: from here on, files change.
    if stop.is_set() {
        return Err(SkillError::Cancelled);
    }
    let notes = commit(ws, ops).map_err(|failure| {
        if failure.not_restored.is_empty() {
            unchanged(failure.error)
        } else {
            SkillError::tool(format!(
                "apply_patch failed part-way ({}), and not everything could be put back: {}",
                failure.error,
                failure.not_restored.join("; ")
            ))
        }
    })?;
    summary.extend(notes.into_iter().map(|note| format!("(note: {note})")));
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

/// Step 2: every new content, computed in memory, within `config`.
fn plan(
    ws: &Workspace,
    patch: &Patch,
    config: &PatchConfig,
    stop: &Stop,
) -> Result<(Vec<Op>, Vec<String>), SkillError> {
    let mut ops = Vec::new();
    let mut summary = Vec::new();
    let mut reads = Reads { config, total: 0 };
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
                // Checked, not read: the commit sets the file aside and removes it.
                regular(ws, path)?;
                ops.push(Op::Delete { path: path.clone() });
                summary.push(format!("D {}", display_name(path)));
            }
            Hunk::Update {
                path,
                move_to,
                chunks,
            } => {
                let shown = display_name(path);
                let (original, meta) = reads.read(ws, path)?;
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
                            permissions: Some(meta.permissions()),
                        });
                        ops.push(Op::Delete { path: path.clone() });
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

/// The metadata of a file the patch changes or deletes, which must be a regular file, not a
/// link, directory, FIFO, socket or device. Nothing of it is opened or read: this words the
/// refusals (a file to change is checked again once opened, see [`Reads::read`]).
fn regular(ws: &Workspace, path: &str) -> Result<Metadata, SkillError> {
    let shown = display_name(path);
    match ws.symlink_metadata(path)? {
        None => {
            // Names a dangling link or a missing parent precisely.
            Err(ws
                .metadata(path)
                .err()
                .unwrap_or_else(|| SkillError::tool(format!("`{shown}` does not exist"))))
        }
        Some(meta) if meta.file_type().is_symlink() => Err(SkillError::Safety(format!(
            "`{shown}` is a symbolic link; patch the file it points to instead"
        ))),
        Some(meta) if meta.is_dir() => Err(SkillError::tool(format!(
            "`{shown}` is a directory, not a file"
        ))),
        Some(meta) => match NotRegular::from_mode(meta.mode()) {
            // Worded as a refusal once opened is.
            Some(kind) => Err(ws.fs_error(path, kind.into())),
            None => Ok(meta),
        },
    }
}

/// The files a patch has read so far, against its [`PatchConfig`].
struct Reads<'a> {
    config: &'a PatchConfig,
    /// Bytes read so far.
    total: u64,
}

impl Reads<'_> {
    /// Reads a file the patch changes, whole, if it is a regular file within the limits (checked
    /// on its size before any of it is read, and again on what is read, should it have grown).
    /// The metadata returned is that of the file opened.
    fn read(&mut self, ws: &Workspace, path: &str) -> Result<(Vec<u8>, Metadata), SkillError> {
        let meta = regular(ws, path)?;
        self.admit(path, meta.len())?;
        // Opened without following a link put there since, and checked once opened without
        // waiting on it, should a FIFO or device have taken the file's place.
        let file = ws.open_regular(path, Links::Refuse)?;
        let opened = file.metadata().map_err(|e| ws.fs_error(path, e))?;
        let max = self.config.max_file_bytes;
        let mut bytes = Vec::with_capacity(meta.len().min(max) as usize);
        file.into_std()
            .take(max.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| ws.fs_error(path, e))?;
        if bytes.len() as u64 > meta.len() {
            // It grew since its size was checked: counted again, as read.
            self.total -= meta.len();
            self.admit(path, bytes.len() as u64)?;
        }
        Ok((bytes, opened))
    }

    /// Counts `len` more bytes read for `path`, or says which limit they pass.
    fn admit(&mut self, path: &str, len: u64) -> Result<(), SkillError> {
        let PatchConfig {
            max_file_bytes,
            max_total_bytes,
        } = *self.config;
        let shown = display_name(path);
        if len > max_file_bytes {
            return Err(SkillError::tool(format!(
                "`{shown}` is {len} bytes; apply_patch changes files of at most {max_file_bytes} \
                 bytes ({}), as it holds the whole file in memory to patch it. Change this one \
                 with run_shell instead (`sed -i`, or a script), or write it anew with \
                 write_file; to move it unchanged, run `mv` with run_shell. (`*** Delete File` \
                 deletes a file of any size.)",
                binary_size(max_file_bytes)
            )));
        }
        self.total += len;
        if self.total > max_total_bytes {
            return Err(SkillError::tool(format!(
                "the files this patch changes hold more than {max_total_bytes} bytes ({}) in \
                 all, the most one patch may change, as apply_patch holds them in memory until \
                 it commits (with `{shown}`, {} bytes); split it into several patches that each \
                 change fewer files",
                binary_size(max_total_bytes),
                self.total
            )));
        }
        Ok(())
    }
}
