//! `search_files`: ripgrep's engine (`grep-regex`, `grep-searcher`) over ripgrep's walker
//! (`ignore`), in parallel, inside the sandbox.
//!
//! Results are `path:line:text`, paths relative to the workspace root, sorted by path and line so
//! the same search gives the same answer. Like ripgrep: `.gitignore` is respected, hidden files
//! and binary files are skipped, symbolic links are not followed. Every file searched is opened
//! through the [`Workspace`] capability. The pattern is only ever a regex, never an option, so a
//! pattern starting with `-` is just a pattern.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::{SkillContext, SkillError, skill};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;

use crate::sandbox::Workspace;
use crate::walk::{display_rel, walker};

/// How many matching lines `search_files` returns when `max_results` is not given.
pub const DEFAULT_MAX_RESULTS: usize = 100;

/// Matching lines longer than this many characters are cut (minified files would flood the output).
pub const MAX_LINE_CHARS: usize = 300;

/// The search stops collecting after this many matching lines, or `max_results` if larger.
const COLLECT_CAP: usize = 10_000;

/// Search file contents in the workspace for a regular expression (Rust regex syntax, like
/// ripgrep). Returns matching lines as `path:line:text`, sorted by path and line. Respects
/// `.gitignore`; skips hidden and binary files.
///
/// # Arguments
/// * `pattern` - The regular expression to look for, e.g. `fn\s+main` or `TODO`.
/// * `path` - Directory or file to search, relative to the workspace root. Default: the root.
/// * `glob` - Only search files whose names match this glob, e.g. `*.rs` or `src/**/*.ts`.
/// * `max_results` - The most matching lines to return. Default 100.
#[skill(read_only, search_hint = "grep rg ripgrep find text regex code")]
pub async fn search_files(
    ctx: &SkillContext,
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    max_results: Option<usize>,
) -> Result<String, SkillError> {
    let max_results = max_results.unwrap_or(DEFAULT_MAX_RESULTS);
    if max_results == 0 {
        return Err(SkillError::bad_args("max_results", "must be at least 1"));
    }
    let matcher = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(&pattern)
        .map_err(|e| SkillError::bad_args("pattern", format!("not a valid regex: {e}")))?;
    let ws = Workspace::from_context(ctx)?;
    let path = path.unwrap_or_else(|| ".".to_owned());
    tokio::task::spawn_blocking(move || {
        search(&ws, &matcher, &pattern, &path, glob.as_deref(), max_results)
    })
    .await
    .map_err(SkillError::from_error)?
}

struct Hit {
    path: Arc<str>,
    line: u64,
    text: String,
}

/// What the parallel walk collects.
#[derive(Default)]
struct Found {
    hits: Mutex<Vec<Hit>>,
    total: AtomicUsize,
    files: AtomicUsize,
    stopped: AtomicBool,
    unreadable: AtomicUsize,
}

fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build()
}

fn search(
    ws: &Workspace,
    matcher: &RegexMatcher,
    pattern: &str,
    path: &str,
    glob: Option<&str>,
    max_results: usize,
) -> Result<String, SkillError> {
    let (target, target_rel, meta) = ws.walk_root(path)?;
    let found = Found::default();
    let cap = max_results.max(COLLECT_CAP);

    if meta.is_file() {
        search_one(ws, matcher, &mut searcher(), &target_rel, &found, cap);
    } else {
        let overrides =
            match glob {
                Some(glob) => {
                    let mut overrides = OverrideBuilder::new(&target);
                    overrides.add(glob).map_err(|e| {
                        SkillError::bad_args("glob", format!("not a valid glob: {e}"))
                    })?;
                    Some(overrides.build().map_err(|e| {
                        SkillError::bad_args("glob", format!("not a valid glob: {e}"))
                    })?)
                }
                None => None,
            };
        let builder = walker(ws, &target, overrides)?;
        let root = ws.root();
        builder.build_parallel().run(|| {
            let mut searcher = searcher();
            let found = &found;
            Box::new(move |entry| {
                if found.stopped.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    found.unreadable.fetch_add(1, Ordering::Relaxed);
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let Ok(rel) = entry.path().strip_prefix(root) else {
                    return WalkState::Continue;
                };
                search_one(ws, matcher, &mut searcher, rel, found, cap);
                if found.stopped.load(Ordering::Relaxed) {
                    WalkState::Quit
                } else {
                    WalkState::Continue
                }
            })
        });
    }

    let mut hits = found.hits.into_inner().unwrap_or_else(|p| p.into_inner());
    let total = found.total.load(Ordering::Relaxed);
    let files = found.files.load(Ordering::Relaxed);
    let where_ = if target_rel.as_os_str().is_empty() {
        "the workspace".to_owned()
    } else {
        format!("`{}`", display_rel(ws, &target))
    };
    if hits.is_empty() {
        let glob_note = glob
            .map(|g| format!(" (files matching `{g}`)"))
            .unwrap_or_default();
        return Ok(format!(
            "No matches for `{pattern}` in {where_}{glob_note}."
        ));
    }
    hits.sort_unstable_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    let mut out = String::new();
    for hit in hits.iter().take(max_results) {
        out.push_str(&format!("{}:{}:{}\n", hit.path, hit.line, hit.text));
    }
    out.pop();
    let stopped = found.stopped.load(Ordering::Relaxed);
    if stopped {
        out.push_str(&format!(
            "\n\n[showing {} of at least {total} matching lines; the search stopped early. Narrow `pattern`, `path` or `glob`]",
            hits.len().min(max_results)
        ));
    } else if total > max_results {
        out.push_str(&format!(
            "\n\n[showing {max_results} of {total} matching lines in {files} files; narrow `pattern`, `path` or `glob`, or raise `max_results`]"
        ));
    }
    let unreadable = found.unreadable.load(Ordering::Relaxed);
    if unreadable > 0 {
        out.push_str(&format!(
            "\n\n[{unreadable} files or directories could not be read]"
        ));
    }
    Ok(out)
}

/// Searches one file, `rel` to the workspace root, opened through the sandbox.
fn search_one(
    ws: &Workspace,
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    rel: &Path,
    found: &Found,
    cap: usize,
) {
    let Ok(file) = ws.dir().open(rel) else {
        found.unreadable.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let file = file.into_std();
    let shown: Arc<str> = Arc::from(path_text(rel));
    let mut local: Vec<Hit> = Vec::new();
    let result = searcher.search_file(
        matcher,
        &file,
        Lossy(|line, text| {
            let text = text.trim_end_matches(['\n', '\r']);
            local.push(Hit {
                path: shown.clone(),
                line,
                text: cut_line(text),
            });
            // One more than the cap is enough to know the cap was passed.
            Ok(local.len() <= cap)
        }),
    );
    if result.is_err() {
        found.unreadable.fetch_add(1, Ordering::Relaxed);
    }
    if local.is_empty() {
        return;
    }
    found.files.fetch_add(1, Ordering::Relaxed);
    let before = found.total.fetch_add(local.len(), Ordering::Relaxed);
    if before + local.len() > cap {
        found.stopped.store(true, Ordering::Relaxed);
        local.truncate(cap.saturating_sub(before));
    }
    if !local.is_empty() {
        found
            .hits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(local);
    }
}

fn path_text(rel: &Path) -> String {
    let mut text = PathBuf::from(rel).to_string_lossy().into_owned();
    if std::path::MAIN_SEPARATOR != '/' {
        text = text.replace(std::path::MAIN_SEPARATOR, "/");
    }
    text
}

fn cut_line(text: &str) -> String {
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!(
            "{}… [{} more characters]",
            &text[..at],
            text[at..].chars().count()
        ),
        None => text.to_owned(),
    }
}
