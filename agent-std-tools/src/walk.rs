//! The directory walk `list_dir` and `search_files` share: ripgrep's `ignore` crate, configured to
//! stay inside the workspace.
//!
//! - `.gitignore` and `.ignore` files are respected whether or not the workspace is a git
//!   repository; hidden files and directories are skipped; symbolic links are never followed.
//! - The walk starts at the directory asked for, and the ignore files of its ancestors *up to the
//!   workspace root* (not above it, and not the user's global git excludes) are applied too, each
//!   anchored at its own directory, as git does.
//! - The directory asked for is always walked, even if it is hidden or ignored itself.

use std::path::Path;

use ignore::WalkBuilder;

use crate::sandbox::Workspace;

/// A walk of `target` (an absolute path inside `ws`, relative path `target_rel`).
pub(crate) fn walker(ws: &Workspace, target: &Path, target_rel: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(target);
    builder
        .hidden(true)
        .parents(false)
        .git_global(false)
        .git_ignore(true)
        .git_exclude(true)
        .ignore(true)
        .require_git(false)
        .follow_links(false);

    // Ancestors' ignore files, from the root down to the target's parent.
    let mut dir = ws.root().to_path_buf();
    let mut rel = std::path::PathBuf::new();
    let mut ancestors = vec![(dir.clone(), rel.clone())];
    for component in target_rel.components() {
        dir.push(component);
        rel.push(component);
        ancestors.push((dir.clone(), rel.clone()));
    }
    ancestors.pop(); // the target reads its own ignore files
    for (abs, rel) in ancestors {
        for name in [".gitignore", ".ignore"] {
            let file_rel = rel.join(name);
            let is_regular_file = ws
                .symlink_metadata(&file_rel.to_string_lossy())
                .ok()
                .flatten()
                .is_some_and(|m| m.is_file());
            if is_regular_file {
                builder.current_dir(&abs);
                // A partial error (one bad glob) still applies the other globs; ignore it as git does.
                let _ = builder.add_ignore(abs.join(name));
            }
        }
    }
    builder.current_dir(ws.root());
    builder
}

/// `path` relative to the workspace root, with `/` separators, for output.
pub(crate) fn display_rel(ws: &Workspace, path: &Path) -> String {
    let rel = path.strip_prefix(ws.root()).unwrap_or(path);
    let text = rel.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}
