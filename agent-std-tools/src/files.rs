//! File skills: `read_file`, `write_file`, `list_dir` and `delete_file`. Every path goes through
//! the [`Workspace`] sandbox; limits come from [`FilesConfig`].
//!
//! ```
//! use agent_core::{Registry, SkillContext, ToolCall};
//! use agent_std_tools::FilesConfig;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let dir = tempfile::tempdir().unwrap();
//! let ctx = SkillContext::new(dir.path()).with_extension(FilesConfig::default());
//! let mut registry = Registry::new();
//! registry.add(agent_std_tools::WriteFile).add(agent_std_tools::ReadFile);
//! let results = registry
//!     .run_many(
//!         &[
//!             ToolCall::new("1", "write_file", json!({"path": "a.txt", "content": "one\ntwo\n"})),
//!             ToolCall::new("2", "read_file", json!({"path": "a.txt", "offset": 2})),
//!         ],
//!         &ctx,
//!     )
//!     .await;
//! assert_eq!(results[1].content(), "two\n\n[showing lines 2-2 of 2; end of file]");
//! # }
//! ```

use std::io::{BufRead, BufReader};

use agent_core::{SkillContext, SkillError, skill};

use crate::sandbox::Workspace;
use crate::walk::{display_name, display_rel, walker};

/// Limits of the file skills. Put one in the context with
/// [`SkillContext::with_extension`]; without one, [`FilesConfig::default`] applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilesConfig {
    /// The most characters `read_file` returns in one call (whole lines where possible); the rest
    /// is announced with the `offset` to read on from. Default 15,000, so that a result with its
    /// notice fits the registry's default budget of 16,000.
    pub max_read_chars: usize,
    /// The most entries `list_dir` returns. Default 1,000.
    pub max_list_entries: usize,
}

impl Default for FilesConfig {
    fn default() -> Self {
        FilesConfig {
            max_read_chars: 15_000,
            max_list_entries: 1_000,
        }
    }
}

/// How many bytes at the start of a file are checked for NUL bytes (git and ripgrep do the same).
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

fn config(ctx: &SkillContext) -> FilesConfig {
    ctx.extension::<FilesConfig>().cloned().unwrap_or_default()
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SkillError> + Send + 'static,
) -> Result<T, SkillError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(SkillError::from_error)?
}

/// Read a text file in the workspace. Returns its lines as they are; long files are cut with a
/// notice that says which lines were shown and the `offset` to continue from. Binary files are
/// refused; invalid UTF-8 is shown with replacement characters.
///
/// # Arguments
/// * `path` - File path, relative to the workspace root.
/// * `offset` - The first line to return, counting from 1. Default 1.
/// * `limit` - The most lines to return. Default: as many as fit the output limit.
#[skill(
    read_only,
    search_hint = "open show cat view print file contents lines"
)]
pub async fn read_file(
    ctx: &SkillContext,
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<String, SkillError> {
    let ws = Workspace::from_context(ctx)?;
    let max_chars = config(ctx).max_read_chars.max(1);
    if offset == Some(0) {
        return Err(SkillError::bad_args(
            "offset",
            "lines are numbered from 1; use 1 for the first line",
        ));
    }
    if limit == Some(0) {
        return Err(SkillError::bad_args("limit", "must be at least 1"));
    }
    blocking(move || read_lines(&ws, &path, offset.unwrap_or(1), limit, max_chars)).await
}

fn read_lines(
    ws: &Workspace,
    path: &str,
    offset: usize,
    limit: Option<usize>,
    max_chars: usize,
) -> Result<String, SkillError> {
    // Checked before opening: opening a FIFO would wait for a writer forever.
    let meta = ws.metadata(path)?;
    if meta.is_dir() {
        return Err(SkillError::tool(format!(
            "`{path}` is a directory; use list_dir to see what is in it"
        )));
    }
    if !meta.is_file() {
        return Err(SkillError::tool(format!(
            "`{path}` is not a regular file (a pipe, socket or device); read_file reads files only"
        )));
    }
    let file = ws.open_file(path)?;
    let mut reader = BufReader::with_capacity(64 * 1024, file.into_std());
    let head = reader.fill_buf().map_err(|e| ws.fs_error(path, e))?;
    if head[..head.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(SkillError::tool(format!(
            "`{path}` is a binary file ({} bytes); read_file shows text files only",
            meta.len()
        )));
    }
    if head.is_empty() {
        return Ok(format!("[`{path}` is empty]"));
    }

    let mut out = String::new();
    let mut chars = 0usize;
    let mut shown = 0usize; // lines added to `out`
    let mut total = 0usize; // lines in the file
    let mut lossy = false;
    let mut binary_later = false;
    let mut stop: Option<Stop> = None;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        let n = reader
            .read_until(b'\n', &mut raw)
            .map_err(|e| ws.fs_error(path, e))?;
        if n == 0 {
            break;
        }
        total += 1;
        if total < offset || stop.is_some() {
            continue;
        }
        if limit.is_some_and(|limit| shown >= limit) {
            stop = Some(Stop::Limit);
            continue;
        }
        let mut line = raw.as_slice();
        line = line.strip_suffix(b"\n").unwrap_or(line);
        line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.contains(&0) {
            binary_later = true;
        }
        let text = match std::str::from_utf8(line) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                lossy = true;
                String::from_utf8_lossy(line)
            }
        };
        let len = text.chars().count() + usize::from(shown > 0);
        if chars + len > max_chars {
            if shown == 0 {
                // One line longer than the whole budget: show its start.
                let cut: String = text.chars().take(max_chars).collect();
                out.push_str(&cut);
                shown = 1;
                stop = Some(Stop::LongLine(text.chars().count()));
            } else {
                stop = Some(Stop::Budget);
            }
            continue;
        }
        if shown > 0 {
            out.push('\n');
        }
        out.push_str(&text);
        chars += len;
        shown += 1;
    }

    if offset > total {
        return Err(SkillError::bad_args(
            "offset",
            format!("`{path}` has {total} lines; offset {offset} is past the end"),
        ));
    }
    let last = offset + shown - 1;
    let mut notes = Vec::new();
    match stop {
        Some(Stop::LongLine(len)) => notes.push(format!(
            "line {offset} is {len} characters long; showing its first {max_chars}. {}",
            continue_hint(last, total)
        )),
        Some(Stop::Budget) => notes.push(format!(
            "showing lines {offset}-{last} of {total}: the output limit of {max_chars} characters was reached. {}",
            continue_hint(last, total)
        )),
        Some(Stop::Limit) => notes.push(format!(
            "showing lines {offset}-{last} of {total}. {}",
            continue_hint(last, total)
        )),
        None if offset > 1 => notes.push(format!("showing lines {offset}-{last} of {total}; end of file")),
        None => {}
    }
    if lossy {
        notes.push("the file is not valid UTF-8: invalid bytes are shown as \u{FFFD}".to_owned());
    }
    if binary_later {
        notes.push("the file contains NUL bytes past its start".to_owned());
    }
    if !notes.is_empty() {
        out.push_str(&format!("\n\n[{}]", notes.join("; ")));
    }
    Ok(out)
}

fn continue_hint(last: usize, total: usize) -> String {
    if last < total {
        format!("Read on with offset={}.", last + 1)
    } else {
        String::new()
    }
}

enum Stop {
    Limit,
    Budget,
    LongLine(usize),
}

/// Write a text file in the workspace, replacing it if it exists and creating missing parent
/// directories. The write is atomic: the file holds the old content or the new, never a mix.
///
/// # Arguments
/// * `path` - File path, relative to the workspace root.
/// * `content` - The complete new content of the file.
#[skill(search_hint = "create save overwrite new file")]
pub async fn write_file(
    ctx: &SkillContext,
    path: String,
    content: String,
) -> Result<String, SkillError> {
    let ws = Workspace::from_context(ctx)?;
    blocking(move || {
        let created = ws.write_atomic(&path, content.as_bytes())?;
        let lines = content.lines().count();
        Ok(format!(
            "{} `{path}` ({} bytes, {lines} line{})",
            if created { "Created" } else { "Overwrote" },
            content.len(),
            if lines == 1 { "" } else { "s" }
        ))
    })
    .await
}

/// List the files and directories in a directory of the workspace, sorted, directories with a
/// trailing `/` and symbolic links with a trailing `@`. Files ignored by `.gitignore` and hidden
/// files are left out. Each entry is one line: control characters in a name are shown escaped
/// (`\n`, `\r`, `\t`, others as `\u{1b}`), as are the line separators U+2028 and U+2029, and
/// bytes that are not UTF-8 as `\xFF`.
///
/// # Arguments
/// * `path` - Directory, relative to the workspace root. Default: the root.
/// * `depth` - How many levels to descend: 1 lists only the directory's own entries.
#[skill(read_only, search_hint = "ls tree directory folder contents")]
pub async fn list_dir(
    ctx: &SkillContext,
    #[arg(default = String::from("."))] path: String,
    #[arg(default = 1)] depth: usize,
) -> Result<String, SkillError> {
    if depth == 0 {
        return Err(SkillError::bad_args("depth", "must be at least 1"));
    }
    let ws = Workspace::from_context(ctx)?;
    let max_entries = config(ctx).max_list_entries.max(1);
    blocking(move || list(&ws, &path, depth, max_entries)).await
}

fn list(
    ws: &Workspace,
    path: &str,
    depth: usize,
    max_entries: usize,
) -> Result<String, SkillError> {
    let (target, _, meta) = ws.walk_root(path)?;
    if !meta.is_dir() {
        return Err(SkillError::tool(format!(
            "`{path}` is a file, not a directory; use read_file to read it"
        )));
    }
    let mut builder = walker(ws, &target, None)?;
    builder
        .max_depth(Some(depth))
        .sort_by_file_name(|a, b| a.cmp(b));
    let mut entries = Vec::new();
    let mut more = false;
    let mut errors = 0usize;
    for entry in builder.build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                errors += 1;
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        if entries.len() >= max_entries {
            more = true;
            break;
        }
        let rel = entry.path().strip_prefix(&target).unwrap_or(entry.path());
        let mut name = display_name(rel);
        if std::path::MAIN_SEPARATOR != '/' {
            name = name.replace(std::path::MAIN_SEPARATOR, "/");
        }
        match entry.file_type() {
            Some(t) if t.is_dir() => name.push('/'),
            Some(t) if t.is_symlink() => name.push('@'),
            _ => {}
        }
        entries.push(name);
    }
    let shown = display_rel(ws, &target);
    let shown = if shown.is_empty() { "." } else { &shown };
    let mut out = if entries.is_empty() {
        format!("[`{shown}` is empty, or everything in it is hidden or ignored]")
    } else {
        entries.join("\n")
    };
    if more {
        out.push_str(&format!(
            "\n\n[listing cut at {max_entries} entries; list a subdirectory or use a smaller depth]"
        ));
    }
    if errors > 0 {
        out.push_str(&format!("\n\n[{errors} entries could not be read]"));
    }
    Ok(out)
}

/// Delete a file, a symbolic link (the link only, never what it points to) or, with
/// `recursive: true`, a directory and everything in it (links inside it are removed, never
/// followed; any depth).
///
/// # Arguments
/// * `path` - What to delete, relative to the workspace root.
/// * `recursive` - Allow deleting a directory with everything in it. Default false.
#[skill(
    destructive,
    defer,
    aliases = ["remove_file"],
    search_hint = "delete remove unlink erase rm file directory folder"
)]
pub async fn delete_file(
    ctx: &SkillContext,
    path: String,
    recursive: Option<bool>,
) -> Result<String, SkillError> {
    let ws = Workspace::from_context(ctx)?;
    let recursive = recursive.unwrap_or(false);
    // Fires when the run is cancelled, or when this call is dropped (its time limit passed), so
    // a deletion still going on in the blocking pool stops there too.
    let stop = ctx.cancellation().child_token();
    let _stop_when_dropped = stop.clone().drop_guard();
    blocking(move || {
        let rel = ws.relative(&path)?;
        if rel == std::path::Path::new(".") {
            return Err(SkillError::Safety(format!(
                "`{path}` is the workspace root, which cannot be deleted"
            )));
        }
        let Some(meta) = ws.symlink_metadata(&path)? else {
            return Err(SkillError::tool(format!("`{path}` does not exist")));
        };
        if meta.file_type().is_symlink() {
            ws.remove_file(&path)?;
            return Ok(format!(
                "Deleted the symbolic link `{path}` (what it pointed to is untouched)"
            ));
        }
        if meta.is_dir() {
            if !recursive {
                return Err(SkillError::tool(format!(
                    "`{path}` is a directory; pass `recursive: true` to delete it and everything in it"
                )));
            }
            ws.remove_dir_all_until(&path, || stop.is_cancelled())?;
            return Ok(format!("Deleted the directory `{path}` and everything in it"));
        }
        ws.remove_file(&path)?;
        Ok(format!("Deleted `{path}`"))
    })
    .await
}
