//! Where an `agent_skills!` call's path starts: the calling file's folder (as `include_str!`
//! resolves paths), else the crate's; and how paths are shown in messages.

use std::path::{Component, Path, PathBuf};

/// Where the call is: what a relative path starts from, and what paths in messages are shown
/// relative to.
pub struct Base {
    /// The folder relative paths start from: the calling file's, else the crate's.
    pub dir: PathBuf,
    /// `true` when the calling file is not known (`Span::local_file` gave nothing: a remapped path,
    /// a doctest) and `dir` is the crate's folder instead.
    pub from_manifest: bool,
    /// The calling crate's folder (`CARGO_MANIFEST_DIR`).
    pub crate_dir: Option<PathBuf>,
}

impl Base {
    /// The base of a call in `file` (the path rustc was given for it, relative to its working
    /// folder or absolute), or of a call whose file is not known.
    pub fn of_call(file: Option<PathBuf>) -> Base {
        let cwd = std::env::current_dir().unwrap_or_default();
        let absolute = |path: PathBuf| normalize(&cwd.join(path));
        let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(|dir| absolute(dir.into()));
        match file.as_deref().and_then(Path::parent) {
            Some(dir) => Base {
                dir: absolute(dir.to_owned()),
                from_manifest: false,
                crate_dir,
            },
            None => Base {
                dir: crate_dir.clone().unwrap_or_else(|| cwd.clone()),
                from_manifest: true,
                crate_dir,
            },
        }
    }

    /// `path` relative to the crate's folder when it is inside it, else as it is.
    pub(super) fn show(&self, path: &Path) -> String {
        self.crate_dir
            .as_deref()
            .and_then(|dir| path.strip_prefix(dir).ok())
            .filter(|relative| !relative.as_os_str().is_empty())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// What a relative path was resolved from, for messages.
    pub(super) fn described(&self) -> String {
        if self.from_manifest {
            format!(
                "the crate's folder `{}` (the calling file is not known)",
                self.dir.display()
            )
        } else {
            format!("the calling file's folder `{}`", self.dir.display())
        }
    }
}

/// The folder `written` names: itself if absolute, else joined to the base's folder; `.` and
/// `..` are resolved by reading the path (symbolic links are left as they are).
pub fn resolve(written: &str, base: &Base) -> PathBuf {
    normalize(&base.dir.join(written))
}

/// `path` without `.` components, and with each `..` taking away the component before it.
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
