//! `search_files`: ripgrep's engine (`grep-regex`, `grep-searcher`) over ripgrep's walker
//! (`ignore`), in parallel, inside the sandbox.
//!
//! Results are `path:line:text`, paths relative to the workspace root, sorted by path and line so
//! the same search gives the same answer. Like ripgrep: `.gitignore` is respected, hidden files
//! and binary files are skipped, symbolic links are not followed. Every file searched is opened
//! through the [`Workspace`] capability, without following a link, and checked to be a regular
//! file once opened, never before: a FIFO, socket or device put in a file's place while the
//! search runs is skipped (named as the `path` to search, it is refused) without waiting on it.
//! The pattern is only ever a regex, never an option, so a pattern starting with `-` is just a
//! pattern.
//!
//! # Bounds
//!
//! Whatever the pattern and the files, the work is bounded ([`SearchConfig`] holds the limits):
//!
//! - The compiled regex may take at most [`SearchConfig::regex_size_limit`] bytes (1 MiB); a
//!   bigger one (`a{100000}`) is refused as a bad `pattern` before any file is read. Its lazy DFA
//!   may cache at most [`SearchConfig::dfa_size_limit`] bytes (8 MiB) per searching thread.
//! - A line is searched only if it fits [`SearchConfig::max_line_bytes`] (4 MiB): the search of a
//!   file stops at its first longer line, and the answer names the files that had one. Memory
//!   per searching thread stays within that limit whatever the file.
//! - The search runs on a blocking thread that stops between files and between reads when the
//!   call's future is dropped (its time limit passed or its run was cancelled) or the context's
//!   cancellation token fires; a cancelled search answers [`SkillError::Cancelled`].

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::{SkillContext, SkillError, skill};
use cap_std::fs::OpenOptions;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;

use crate::blocking::{Stop, StopReader, blocking_until_stopped};
use crate::names::display_name;
use crate::sandbox::{Links, NotRegular, Workspace, open_regular};
use crate::walk::{display_rel, walker};

/// How many matching lines `search_files` returns when `max_results` is not given.
pub const DEFAULT_MAX_RESULTS: usize = 100;

/// Matching lines longer than this many characters are cut (minified files would flood the output).
pub const MAX_LINE_CHARS: usize = 300;

/// The search stops collecting after this many matching lines, or `max_results` if larger.
const COLLECT_CAP: usize = 10_000;

/// How many files with a too-long line the answer names.
const NAMED_LONG_LINE_FILES: usize = 5;

/// The limits of `search_files`. Put one in the context with
/// [`SkillContext::with_extension`]; without one, [`SearchConfig::default`] applies.
///
/// ```
/// use agent_core::SkillContext;
/// use agent_std_tools::search::SearchConfig;
///
/// let ctx = SkillContext::new(".").with_extension(SearchConfig {
///     max_line_bytes: 64 * 1024,
///     ..SearchConfig::default()
/// });
/// # let _ = ctx;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchConfig {
    /// The most bytes the compiled regex may take; a bigger pattern is a bad argument.
    /// Default 1 MiB (room for `\w{20}` or `.{1000}`, not for `a{100000}`).
    pub regex_size_limit: usize,
    /// The most bytes the regex's lazy DFA caches, per searching thread. Default 8 MiB.
    pub dfa_size_limit: usize,
    /// The longest line searched, in bytes; a file is searched only up to its first longer line.
    /// Default 4 MiB.
    pub max_line_bytes: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            regex_size_limit: 1024 * 1024,
            dfa_size_limit: 8 * 1024 * 1024,
            max_line_bytes: 4 * 1024 * 1024,
        }
    }
}

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
    let config = ctx.extension::<SearchConfig>().cloned().unwrap_or_default();
    let ws = Workspace::from_context(ctx)?;
    let path = path.unwrap_or_else(|| ".".to_owned());
    blocking_until_stopped(ctx, move |stop| {
        // Compiled here too: even a bounded compile is work for a blocking thread.
        let matcher = compile(&pattern, &config)?;
        let search = Search {
            ws: &ws,
            matcher: &matcher,
            config: &config,
            stop,
        };
        search.run(&pattern, &path, glob.as_deref(), max_results)
    })
    .await
}

/// The regex, within the configured sizes; a pattern too big for them is a bad argument that
/// says so.
fn compile(pattern: &str, config: &SearchConfig) -> Result<RegexMatcher, SkillError> {
    RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .size_limit(config.regex_size_limit)
        .dfa_size_limit(config.dfa_size_limit)
        .build(pattern)
        .map_err(|e| {
            let message = e.to_string();
            if message.contains("size limit") {
                SkillError::bad_args(
                    "pattern",
                    format!(
                        "the regex is too big: compiled, it would take more than {} bytes. Use a smaller repetition count or a simpler pattern",
                        config.regex_size_limit
                    ),
                )
            } else {
                SkillError::bad_args("pattern", format!("not a valid regex: {message}"))
            }
        })
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
    /// Files whose search ended at a line longer than the limit (the first few, by path).
    long_lines: Mutex<Vec<Arc<str>>>,
    long_line_files: AtomicUsize,
}

/// One search: what it looks for, where, within which limits, until when.
struct Search<'a> {
    ws: &'a Workspace,
    matcher: &'a RegexMatcher,
    config: &'a SearchConfig,
    stop: &'a Stop,
}

impl Search<'_> {
    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            // A line longer than this ends the file's search with an error, instead of growing
            // the buffer to hold it.
            .heap_limit(Some(self.config.max_line_bytes))
            .build()
    }

    fn run(
        &self,
        pattern: &str,
        path: &str,
        glob: Option<&str>,
        max_results: usize,
    ) -> Result<String, SkillError> {
        let ws = self.ws;
        let (target, target_rel, meta) = ws.walk_root(path)?;
        let found = Found::default();
        let cap = max_results.max(COLLECT_CAP);

        if !meta.is_dir() {
            // One file named: opened first and checked after, so a FIFO put in its place is
            // refused instead of waited on.
            let file = open_regular(
                ws.dir(),
                &target_rel,
                OpenOptions::new().read(true),
                Links::Refuse,
            )
            .map_err(|e| match NotRegular::of(&e) {
                Some(kind) => SkillError::tool(format!(
                    "`{}` is not a regular file but {kind}; search_files searches files and \
                     directories",
                    display_name(path)
                )),
                None => ws.fs_error(path, e),
            })?;
            self.search_file(&mut self.searcher(), file, &target_rel, &found, cap);
        } else {
            let overrides = match glob {
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
                let mut searcher = self.searcher();
                let found = &found;
                Box::new(move |entry| {
                    if found.stopped.load(Ordering::Relaxed) || self.stop.is_set() {
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
                    self.search_one(&mut searcher, rel, found, cap);
                    if found.stopped.load(Ordering::Relaxed) {
                        WalkState::Quit
                    } else {
                        WalkState::Continue
                    }
                })
            });
        }
        if self.stop.is_set() {
            return Err(SkillError::Cancelled);
        }
        let long_lines = long_line_note(&found, self.config.max_line_bytes);
        Ok(report(ws, found, pattern, &target, &target_rel, glob, max_results) + &long_lines)
    }

    /// Searches one file the walk met, `rel` to the workspace root, opened through the sandbox
    /// (without following a link, and only if it is still a regular file: a FIFO put in its
    /// place since the walk saw it is skipped, as the walk skips FIFOs).
    fn search_one(&self, searcher: &mut Searcher, rel: &Path, found: &Found, cap: usize) {
        match open_regular(
            self.ws.dir(),
            rel,
            OpenOptions::new().read(true),
            Links::Refuse,
        ) {
            Ok(file) => self.search_file(searcher, file, rel, found, cap),
            Err(e) if NotRegular::of(&e).is_some() => {}
            Err(_) => {
                found.unreadable.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Searches `file`, opened at `rel` to the workspace root.
    fn search_file(
        &self,
        searcher: &mut Searcher,
        file: cap_std::fs::File,
        rel: &Path,
        found: &Found,
        cap: usize,
    ) {
        let file = StopReader {
            inner: file.into_std(),
            stop: self.stop,
        };
        let shown: Arc<str> = Arc::from(display_name(rel));
        let mut local: Vec<Hit> = Vec::new();
        let result = searcher.search_reader(
            self.matcher,
            file,
            Lossy(|line, text| {
                let text = text.trim_end_matches(['\n', '\r']);
                local.push(Hit {
                    path: shown.clone(),
                    line,
                    text: cut_line(text),
                });
                // One more than the cap is enough to know the cap was passed.
                Ok(local.len() <= cap && !self.stop.is_dropped())
            }),
        );
        if let Err(e) = result {
            if self.stop.is_set() {
                return;
            }
            if e.to_string().contains("allocation limit") {
                // A line longer than the limit: what came before it counts, the rest is skipped.
                found.long_line_files.fetch_add(1, Ordering::Relaxed);
                lock(&found.long_lines).push(shown.clone());
            } else {
                found.unreadable.fetch_add(1, Ordering::Relaxed);
            }
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
            lock(&found.hits).extend(local);
        }
    }
}

/// A lock on what the walk collects; whatever a panicking thread left in it is still valid.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The answer: the hits sorted, and notices for what was cut or skipped.
fn report(
    ws: &Workspace,
    found: Found,
    pattern: &str,
    target: &Path,
    target_rel: &Path,
    glob: Option<&str>,
    max_results: usize,
) -> String {
    let mut hits = found.hits.into_inner().unwrap_or_else(|p| p.into_inner());
    let total = found.total.load(Ordering::Relaxed);
    let files = found.files.load(Ordering::Relaxed);
    let where_ = if target_rel.as_os_str().is_empty() {
        "the workspace".to_owned()
    } else {
        format!("`{}`", display_rel(ws, target))
    };
    if hits.is_empty() {
        let glob_note = glob
            .map(|g| format!(" (files matching `{g}`)"))
            .unwrap_or_default();
        return format!("No matches for `{pattern}` in {where_}{glob_note}.");
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
    out
}

/// The notice naming the files whose search ended at a too-long line; empty when none did.
fn long_line_note(found: &Found, limit: usize) -> String {
    let count = found.long_line_files.load(Ordering::Relaxed);
    if count == 0 {
        return String::new();
    }
    let mut names = lock(&found.long_lines).clone();
    names.sort_unstable();
    let mut list = names
        .iter()
        .take(NAMED_LONG_LINE_FILES)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if count > NAMED_LONG_LINE_FILES {
        list.push_str(&format!(" and {} more", count - NAMED_LONG_LINE_FILES));
    }
    let (files, has) = if count == 1 {
        ("file has", "was")
    } else {
        ("files have", "were")
    };
    format!(
        "\n\n[{count} {files} a line longer than {limit} bytes and {has} searched only up to it: {list}]"
    )
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
