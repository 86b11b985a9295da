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
//! registry.add(agent_std_tools::WriteFileSkill).add(agent_std_tools::ReadFileSkill);
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
use cap_std::fs::OpenOptions;

use crate::blocking::{Stop, blocking, blocking_until_stopped};
use crate::names::display_name;
use crate::sandbox::{Links, NotRegular, Workspace, open_regular};
use crate::walk::{display_rel, walker};

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
    blocking_until_stopped(ctx, move |stop| {
        read_lines(&ws, &path, offset.unwrap_or(1), limit, max_chars, stop)
    })
    .await
}

fn read_lines(
    ws: &Workspace,
    path: &str,
    offset: usize,
    limit: Option<usize>,
    max_chars: usize,
    stop: &Stop,
) -> Result<String, SkillError> {
    let shown = display_name(path);
    // Opened first and checked after (by the sandbox): a FIFO put in the file's place after a
    // check would make the open wait for a writer forever.
    let rel = ws.relative(path)?;
    let file = open_regular(ws.dir(), &rel, OpenOptions::new().read(true), Links::Follow).map_err(
        |e| match NotRegular::of(&e) {
            Some(NotRegular::Directory) => SkillError::tool(format!(
                "`{shown}` is a directory; use list_dir to see what is in it"
            )),
            Some(kind) => SkillError::tool(format!(
                "`{shown}` is not a regular file but {kind}; read_file reads files only"
            )),
            None => ws.fs_error(path, e),
        },
    )?;
    let meta = file.metadata().map_err(|e| ws.fs_error(path, e))?;
    let mut reader = BufReader::with_capacity(CHUNK_BYTES, file.into_std());
    let head = reader.fill_buf().map_err(|e| ws.fs_error(path, e))?;
    if head[..head.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(SkillError::tool(format!(
            "`{shown}` is a binary file ({} bytes); read_file shows text files only",
            meta.len()
        )));
    }
    if head.is_empty() {
        return Ok(format!("[`{shown}` is empty]"));
    }

    // The file is read a chunk at a time; of each line only what the output could still show is
    // kept, so memory stays within the output limit whatever the shape of the file.
    let mut lines = Lines::new(offset, limit, max_chars);
    loop {
        if stop.is_set() {
            return Err(SkillError::Cancelled);
        }
        let chunk = reader.fill_buf().map_err(|e| ws.fs_error(path, e))?;
        if chunk.is_empty() {
            break;
        }
        let len = chunk.len();
        lines.feed(chunk);
        reader.consume(len);
        if lines.done() {
            break;
        }
    }
    lines.finish(&shown)
}

/// How much of the file is read at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// Once the output is complete, how many more bytes are read to count the file's lines (and the
/// length of a line that was cut); past this, the notice says "at least".
const COUNT_BYTES: u64 = 32 * 1024 * 1024;

/// The lines `read_file` shows, built from the file's bytes as they are read.
struct Lines {
    offset: usize,
    limit: Option<usize>,
    max_chars: usize,
    out: String,
    /// Characters in `out`.
    chars: usize,
    /// Lines added to `out`.
    shown: usize,
    /// Lines begun so far (the last one may not have ended).
    total: usize,
    /// Whether a line has begun and not ended.
    in_line: bool,
    /// The current line's bytes, when it is one to show: only as many as the output could still
    /// take (a character is at most four bytes), so a longer line is known to be too long.
    line: Vec<u8>,
    /// Whether `line` was cut short.
    line_cut: bool,
    /// Characters of the current line past `line` (counted as UTF-8 leading bytes).
    line_rest_chars: usize,
    /// The current line's last byte (to leave out a `\r` before its `\n`).
    last_byte: u8,
    /// Why the output ended, once it has.
    stop: Option<StopReason>,
    /// Bytes read since the output ended.
    after_stop: u64,
    /// Whether the file was read to its end (not cut off after `COUNT_BYTES`).
    to_end: bool,
    lossy: bool,
    binary_later: bool,
}

enum StopReason {
    Limit,
    Budget,
    /// A line longer than the whole budget, whose start was shown: its length in characters,
    /// once known.
    LongLine(Option<usize>),
}

impl Lines {
    fn new(offset: usize, limit: Option<usize>, max_chars: usize) -> Lines {
        Lines {
            offset,
            limit,
            max_chars,
            out: String::new(),
            chars: 0,
            shown: 0,
            total: 0,
            in_line: false,
            line: Vec::new(),
            line_cut: false,
            line_rest_chars: 0,
            last_byte: 0,
            stop: None,
            after_stop: 0,
            to_end: true,
            lossy: false,
            binary_later: false,
        }
    }

    /// Whether enough was read: the output is complete and the lines were counted as far as
    /// [`COUNT_BYTES`] allows.
    fn done(&self) -> bool {
        !self.to_end
    }

    /// Whether the current line is one to show.
    fn showing(&self) -> bool {
        self.total >= self.offset && self.stop.is_none()
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        if self.stop.is_some() {
            self.after_stop += bytes.len() as u64;
            if self.after_stop > COUNT_BYTES {
                self.to_end = false;
            }
        }
        while !bytes.is_empty() {
            if !self.in_line {
                self.begin_line();
            }
            let (part, ended) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            bytes = &bytes[part.len() + usize::from(ended)..];
            if let Some(&last) = part.last() {
                self.last_byte = last;
            }
            if self.showing() {
                // Room for one character more than the output can take: enough to know.
                let room = (self.max_chars - self.chars + 1) * 4;
                let take = part.len().min(room.saturating_sub(self.line.len()));
                self.line.extend_from_slice(&part[..take]);
                if take < part.len() {
                    self.line_cut = true;
                    self.line_rest_chars += utf8_chars(&part[take..]);
                    // Too long to fit: the output ends with this line (or before it).
                    self.end_line_early();
                }
            } else if matches!(self.stop, Some(StopReason::LongLine(None))) && self.in_line {
                self.line_rest_chars += utf8_chars(part);
            }
            if ended {
                self.end_line();
            }
        }
    }

    fn begin_line(&mut self) {
        self.total += 1;
        self.in_line = true;
        self.line.clear();
        self.line_cut = false;
        self.line_rest_chars = 0;
        self.last_byte = 0;
        if self.showing() && self.limit.is_some_and(|limit| self.shown >= limit) {
            self.stop = Some(StopReason::Limit);
        }
    }

    /// The current line, known to be too long for what is left of the output, ends the output.
    fn end_line_early(&mut self) {
        if self.shown == 0 {
            // One line longer than the whole budget: show its start.
            let text = self.text();
            let cut: String = text.chars().take(self.max_chars).collect();
            self.out.push_str(&cut);
            self.shown = 1;
            self.stop = Some(StopReason::LongLine(None));
        } else {
            self.stop = Some(StopReason::Budget);
        }
    }

    /// The kept bytes of the current line as text, noting invalid UTF-8 and NUL bytes.
    fn text(&mut self) -> String {
        let mut bytes = self.line.as_slice();
        if !self.line_cut {
            bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        }
        if bytes.contains(&0) {
            self.binary_later = true;
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => text.to_owned(),
            // A character cut in two where the line was cut short is not an invalid byte.
            Err(e) if self.line_cut && e.error_len().is_none() => {
                String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
            }
            Err(_) => {
                self.lossy = true;
                String::from_utf8_lossy(bytes).into_owned()
            }
        }
    }

    fn end_line(&mut self) {
        self.in_line = false;
        if let Some(StopReason::LongLine(len @ None)) = &mut self.stop {
            if self.shown == 1 && self.total == self.offset {
                let cut_chars = String::from_utf8_lossy(&self.line).chars().count();
                let cr = usize::from(self.last_byte == b'\r');
                *len = Some(cut_chars + self.line_rest_chars - cr);
            }
            return;
        }
        if !self.showing() {
            return;
        }
        let text = self.text();
        let len = text.chars().count() + usize::from(self.shown > 0);
        if self.chars + len > self.max_chars {
            self.end_line_early();
            if let Some(StopReason::LongLine(len)) = &mut self.stop {
                *len = Some(text.chars().count());
            }
            return;
        }
        if self.shown > 0 {
            self.out.push('\n');
        }
        self.out.push_str(&text);
        self.chars += len;
        self.shown += 1;
    }

    /// The answer; `shown` is the file's path as messages show it.
    fn finish(mut self, shown: &str) -> Result<String, SkillError> {
        if self.in_line && self.to_end {
            self.end_line();
        }
        let (offset, total, max_chars) = (self.offset, self.total, self.max_chars);
        if offset > total {
            return Err(SkillError::bad_args(
                "offset",
                format!("`{shown}` has {total} lines; offset {offset} is past the end"),
            ));
        }
        let last = offset + self.shown - 1;
        let of_total = if self.to_end {
            format!("of {total}")
        } else {
            format!("of at least {total}")
        };
        let hint = if last < total || !self.to_end {
            format!("Read on with offset={}.", last + 1)
        } else {
            String::new()
        };
        let mut notes = Vec::new();
        match self.stop {
            Some(StopReason::LongLine(len)) => {
                let len = match len {
                    Some(len) => format!("{len}"),
                    None => format!(
                        "more than {}",
                        String::from_utf8_lossy(&self.line).chars().count()
                            + self.line_rest_chars
                    ),
                };
                notes.push(format!(
                    "line {offset} is {len} characters long; showing its first {max_chars}. {hint}"
                ))
            }
            Some(StopReason::Budget) => notes.push(format!(
                "showing lines {offset}-{last} {of_total}: the output limit of {max_chars} characters was reached. {hint}"
            )),
            Some(StopReason::Limit) => {
                notes.push(format!("showing lines {offset}-{last} {of_total}. {hint}"))
            }
            None if offset > 1 => notes.push(format!(
                "showing lines {offset}-{last} of {total}; end of file"
            )),
            None => {}
        }
        if self.lossy {
            notes.push(
                "the file is not valid UTF-8: invalid bytes are shown as \u{FFFD}".to_owned(),
            );
        }
        if self.binary_later {
            notes.push("the file contains NUL bytes past its start".to_owned());
        }
        let mut out = self.out;
        if !notes.is_empty() {
            out.push_str(&format!("\n\n[{}]", notes.join("; ")));
        }
        Ok(out)
    }
}

/// How many characters `bytes` of UTF-8 hold: the bytes that are not continuation bytes.
fn utf8_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
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
        let shown = display_name(&path);
        let lines = content.lines().count();
        Ok(format!(
            "{} `{shown}` ({} bytes, {lines} line{})",
            if created { "Created" } else { "Overwrote" },
            content.len(),
            if lines == 1 { "" } else { "s" }
        ))
    })
    .await
}

/// List the files and directories in a directory of the workspace, sorted, directories with a
/// trailing `/` and symbolic links with a trailing `@`. Files ignored by `.gitignore` and hidden
/// files are left out. Each entry is one line, every character visible: control and invisible
/// characters in a name are shown escaped (`\n`, `\r`, `\t`, others as `\u{1b}`: line
/// separators, bidirectional overrides such as `\u{202e}`, zero-width characters), and bytes that
/// are not UTF-8 as `\xFF`.
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
    let shown = display_name(path);
    if !meta.is_dir() {
        return Err(SkillError::tool(format!(
            "`{shown}` is a file, not a directory; use read_file to read it"
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
        let shown = display_name(&path);
        if rel == std::path::Path::new(".") {
            return Err(SkillError::Safety(format!(
                "`{shown}` is the workspace root, which cannot be deleted"
            )));
        }
        let Some(meta) = ws.symlink_metadata(&path)? else {
            return Err(SkillError::tool(format!("`{shown}` does not exist")));
        };
        if meta.file_type().is_symlink() {
            ws.remove_file(&path)?;
            return Ok(format!(
                "Deleted the symbolic link `{shown}` (what it pointed to is untouched)"
            ));
        }
        if meta.is_dir() {
            if !recursive {
                return Err(SkillError::tool(format!(
                    "`{shown}` is a directory; pass `recursive: true` to delete it and everything in it"
                )));
            }
            ws.remove_dir_all_until(&path, || stop.is_cancelled())?;
            return Ok(format!("Deleted the directory `{shown}` and everything in it"));
        }
        ws.remove_file(&path)?;
        Ok(format!("Deleted `{shown}`"))
    })
    .await
}
