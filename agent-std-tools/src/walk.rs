//! The directory walk `list_dir` and `search_files` share: ripgrep's `ignore` crate, configured to
//! stay inside the workspace.
//!
//! - `.gitignore`, `.ignore` and `.git/info/exclude` files are respected whether or not the
//!   workspace is a git repository; hidden files and directories are skipped; symbolic links are
//!   never followed.
//! - The walk starts at the directory asked for, and the ignore files of its ancestors *up to the
//!   workspace root* (not above it, and not the user's global git excludes) are applied too, each
//!   anchored at its own directory, as git does.
//! - The directory asked for is always walked, even if it is hidden or ignored itself.
//! - Ignore files are read here, through the [`Workspace`] capability, and only when they are
//!   regular files (a `.git` only when it is a directory): the `ignore` crate would open them by
//!   path, following a symbolic link out of the workspace or waiting forever on a pipe. Each is
//!   opened without following a link and checked once opened, so a FIFO swapped in for one
//!   after any check is skipped, not waited on.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_core::SkillError;
use cap_std::fs::{Dir, OpenOptions};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use ignore::{Match, WalkBuilder};

use crate::names::display_name;
use crate::sandbox::{Links, Workspace, open_regular};

/// A walk of `target` (an absolute path inside `ws`), filtered by `overrides` (globs) if given.
pub(crate) fn walker(
    ws: &Workspace,
    target: &Path,
    overrides: Option<Override>,
) -> Result<WalkBuilder, SkillError> {
    let mut builder = WalkBuilder::new(target);
    builder
        .hidden(true)
        .parents(false)
        .git_global(false)
        // The ignore files are read by `IgnoreFiles`, through the capability.
        .git_ignore(false)
        .git_exclude(false)
        .ignore(false)
        .require_git(false)
        .follow_links(false);
    let rules = IgnoreFiles {
        dir: ws.dir().try_clone().map_err(SkillError::from_error)?,
        root: ws.root().to_path_buf(),
        chains: Mutex::new(HashMap::new()),
        overrides: overrides.clone(),
    };
    if let Some(overrides) = overrides {
        builder.overrides(overrides);
    }
    builder.filter_entry(move |entry| {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        !rules.ignored(entry.path(), is_dir)
    });
    Ok(builder)
}

/// The ignore files of the workspace, read through the capability as the walk needs them.
struct IgnoreFiles {
    dir: Dir,
    root: PathBuf,
    /// The rules that apply to the entries of each directory walked so far, by the directory's
    /// path relative to the root.
    chains: Mutex<HashMap<PathBuf, Arc<Chain>>>,
    /// The caller's globs, which (as in the `ignore` crate) take precedence over ignore files.
    overrides: Option<Override>,
}

/// The rules that apply to the entries of one directory: those of the directory and of each of
/// its ancestors up to the root that has ignore files, the deepest first.
struct Chain(Vec<Arc<Level>>);

/// The rules of one directory, in the `ignore` crate's order of precedence: `.ignore`,
/// `.gitignore`, `.git/info/exclude`.
struct Level([Gitignore; 3]);

impl IgnoreFiles {
    /// Whether `path` (absolute, inside the root) is ignored: for each kind of ignore file in turn,
    /// the deepest directory whose rules match decides.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        if let Some(overrides) = &self.overrides
            && overrides.matched(path, is_dir).is_whitelist()
        {
            return false;
        }
        let Some(rel_dir) = path.parent().and_then(|p| p.strip_prefix(&self.root).ok()) else {
            return false;
        };
        let chain = self.chain(rel_dir);
        for kind in 0..3 {
            for level in &chain.0 {
                match level.0[kind].matched(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
        }
        false
    }

    /// The rules for the entries of `rel_dir`, read once per directory.
    fn chain(&self, rel_dir: &Path) -> Arc<Chain> {
        if let Some(chain) = self.lock().get(rel_dir) {
            return chain.clone();
        }
        // Built without the lock (it reads files); two threads may build it alike, once each.
        let mut levels: Vec<Arc<Level>> = self.level(rel_dir).map(Arc::new).into_iter().collect();
        if let Some(parent) = rel_dir.parent() {
            levels.extend(self.chain(parent).0.iter().cloned());
        }
        self.lock()
            .entry(rel_dir.to_path_buf())
            .or_insert_with(|| Arc::new(Chain(levels)))
            .clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<Chain>>> {
        // A cache: whatever a panicking thread left in it is still valid.
        self.chains.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The rules of `rel_dir`'s own ignore files; `None` when it has none. Each is read only if it
    /// is a regular file (not a link, a pipe, ...), and `.git/info/exclude` only under a `.git`
    /// that is a directory.
    fn level(&self, rel_dir: &Path) -> Option<Level> {
        let dir = if rel_dir.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir(rel_dir)
        }
        .ok()?;
        let is = |name: &str, check: fn(&cap_std::fs::Metadata) -> bool| {
            dir.symlink_metadata(name).is_ok_and(|m| check(&m))
        };
        let abs = self.root.join(rel_dir);
        let rules = |name: &str, read: bool| {
            if !read {
                return None;
            }
            // Opened first and checked after: a link, a FIFO or a device (even one swapped in
            // after a check) is skipped without being waited on.
            let mut file = open_regular(
                &dir,
                Path::new(name),
                OpenOptions::new().read(true),
                Links::Refuse,
            )
            .ok()?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).ok()?;
            let text = String::from_utf8_lossy(&bytes);
            let mut builder = GitignoreBuilder::new(&abs);
            let from = Some(abs.join(name));
            for line in text.trim_start_matches('\u{feff}').lines() {
                // A bad glob is skipped and the others still apply, as git does.
                let _ = builder.add_line(from.clone(), line);
            }
            builder.build().ok()
        };
        let found = [
            rules(".ignore", true),
            rules(".gitignore", true),
            rules(".git/info/exclude", is(".git", |m| m.is_dir())),
        ];
        if found.iter().all(Option::is_none) {
            return None;
        }
        Some(Level(found.map(|g| g.unwrap_or_else(Gitignore::empty))))
    }
}

/// `path` relative to the workspace root, with `/` separators, for output; shown as
/// [`display_name`] shows names.
pub(crate) fn display_rel(ws: &Workspace, path: &Path) -> String {
    let rel = path.strip_prefix(ws.root()).unwrap_or(path);
    let text = display_name(rel);
    if std::path::MAIN_SEPARATOR == '/' {
        text
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}
