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

mod lines;

use std::io::{BufRead, BufReader};

use agent_core::content::Content;
use agent_core::{SkillContext, SkillError, SkillOutput, skill};
use cap_std::fs::OpenOptions;

use crate::blocking::{Stop, blocking, blocking_until_stopped};
use crate::media::{
    DEFAULT_MAX_MEDIA_BYTES, MediaFileError, media_limits, read_media, starts_as_media,
};
use crate::names::display_name;
use crate::sandbox::{Links, NotRegular, Workspace, open_regular};
use crate::walk::{display_rel, walker};
use lines::{CHUNK_BYTES, Lines};

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
    /// The most bytes one call may bring to the workspace: the `content` of a `write_file`, the
    /// text of an `apply_patch` (which a patch's new lines come from). Over it, the call is a bad
    /// argument and nothing is written. Nothing else bounds them: they are the model's output,
    /// as long as its provider sends. Default [`DEFAULT_MAX_WRITE_BYTES`] (10 MiB, some twenty
    /// times the longest answer models give today).
    pub max_write_bytes: usize,
    /// The most bytes of a file `read_file` answers with as media (an image, a PDF, a sound),
    /// checked from the file's size before it is read. Default
    /// [`DEFAULT_MAX_MEDIA_BYTES`] (20 MiB).
    pub max_media_bytes: usize,
}

/// The default of [`FilesConfig::max_write_bytes`]: 10 MiB.
pub const DEFAULT_MAX_WRITE_BYTES: usize = 10 * 1024 * 1024;

impl Default for FilesConfig {
    fn default() -> Self {
        FilesConfig {
            max_read_chars: 15_000,
            max_list_entries: 1_000,
            max_write_bytes: DEFAULT_MAX_WRITE_BYTES,
            max_media_bytes: DEFAULT_MAX_MEDIA_BYTES,
        }
    }
}

/// `BadArgs` on `arg` if `len` bytes are more than one call may write (`max`), saying so, that
/// nothing was written, and what to do (`hint`); `skill` names the call.
pub(crate) fn check_write_size(
    skill: &str,
    arg: &str,
    len: usize,
    max: usize,
    hint: &str,
) -> Result<(), SkillError> {
    if len <= max {
        return Ok(());
    }
    Err(SkillError::bad_args(
        arg,
        format!(
            "{len} bytes, but one {skill} call writes at most {max} bytes \
             (FilesConfig::max_write_bytes), so nothing was written. {hint}"
        ),
    ))
}

/// How many bytes at the start of a file are checked for NUL bytes (git and ripgrep do the same).
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

fn config(ctx: &SkillContext) -> FilesConfig {
    ctx.extension::<FilesConfig>().cloned().unwrap_or_default()
}

/// Read a file in the workspace. A text file: its lines as they are; long files are cut with a
/// notice that says which lines were shown and the `offset` to continue from. An image (PNG,
/// JPEG, GIF, WebP), a PDF or a sound file: the file itself, for you to see, with a line saying
/// what it is (the type is read from the bytes, not the name; at most 20 MiB; a corrupt image or
/// one of too many pixels is an error). Other binary files are refused; invalid UTF-8 is shown
/// with replacement characters.
///
/// # Arguments
/// * `path` - File path, relative to the workspace root.
/// * `offset` - The first line to return, counting from 1. Default 1. Text files only.
/// * `limit` - The most lines to return. Default: as many as fit the output limit. Text files
///   only.
#[skill(
    read_only,
    search_hint = "open show cat view print file contents lines"
)]
pub async fn read_file(
    ctx: &SkillContext,
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<SkillOutput, SkillError> {
    let ws = Workspace::from_context(ctx)?;
    let config = config(ctx);
    let max_chars = config.max_read_chars.max(1);
    let max_media = config.max_media_bytes;
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
        let lines = Lines::new(offset.unwrap_or(1), limit, max_chars);
        read(&ws, &path, lines, max_media, stop)
    })
    .await
}

/// Reads `path` as media when its first bytes say it is, as `lines` of text otherwise.
fn read(
    ws: &Workspace,
    path: &str,
    mut lines: Lines,
    max_media: usize,
    stop: &Stop,
) -> Result<SkillOutput, SkillError> {
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
    if starts_as_media(head) {
        // Control and invisible characters escaped, as in every message naming a path: the name
        // reaches the model as the part's title.
        let name = rel.file_name().map(display_name);
        let loaded = read_media(
            reader,
            meta.len(),
            &format!("`{shown}`"),
            name.as_deref(),
            &media_limits(max_media),
        )
        .map_err(|e| match e {
            MediaFileError::TooLarge { .. } | MediaFileError::Grew { .. } => {
                SkillError::tool(format!("{e} (FilesConfig::max_media_bytes)"))
            }
            e => SkillError::tool(e.to_string()),
        })?;
        let what = format!("`{shown}`: {}", loaded.summary());
        return Ok(SkillOutput::Content(Content::text(what).with(loaded.media)));
    }
    if head[..head.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(SkillError::tool(format!(
            "`{shown}` is a binary file ({} bytes); read_file shows text, images, PDFs and sound \
             files only",
            meta.len()
        )));
    }
    if head.is_empty() {
        return Ok(SkillOutput::Text(format!("[`{shown}` is empty]")));
    }

    // The file is read a chunk at a time; of each line only what the output could still show is
    // kept, so memory stays within the output limit whatever the shape of the file.
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
    lines.finish(&shown).map(SkillOutput::Text)
}

/// Write a text file in the workspace, replacing it if it exists and creating missing parent
/// directories. The write is atomic: the file holds the old content or the new, never a mix.
/// One call writes at most 10 MiB unless configured otherwise.
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
    check_write_size(
        "write_file",
        "content",
        content.len(),
        config(ctx).max_write_bytes,
        "Write a smaller file, or write it in parts: the first with write_file, the rest added \
         with apply_patch",
    )?;
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
