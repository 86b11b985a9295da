//! The lexical checks of a path given by the model, made before anything touches the filesystem,
//! and their limits.

use std::path::{Component, Path, PathBuf};

use agent_core::SkillError;

use crate::names::display_name;

/// The longest path a skill accepts, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// The longest single path component a skill accepts, in bytes (Linux's `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// The lexical checks of [`Workspace::relative`].
pub(super) fn check_relative(path: &str) -> Result<PathBuf, SkillError> {
    if path.contains('\0') {
        return Err(SkillError::Safety(format!(
            "`{}` contains a NUL byte, which no file name can hold",
            path.escape_debug()
        )));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(SkillError::Safety(format!(
            "`{}…` is {} bytes long; paths may be at most {MAX_PATH_BYTES} bytes",
            display_name(prefix_chars(path, 60)),
            path.len()
        )));
    }
    let mut rel = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                return Err(SkillError::Safety(format!(
                    "`{}` is an absolute path; give a path relative to the workspace root",
                    display_name(path)
                )));
            }
            Component::ParentDir => {
                return Err(SkillError::Safety(format!(
                    "`{}` contains `..`; paths may not climb out of the workspace",
                    display_name(path)
                )));
            }
            Component::CurDir => {}
            Component::Normal(name) => {
                if name.len() > MAX_COMPONENT_BYTES {
                    return Err(SkillError::Safety(format!(
                        "`{}…` has a component of {} bytes; file names may be at most {MAX_COMPONENT_BYTES} bytes",
                        display_name(prefix_chars(path, 60)),
                        name.len()
                    )));
                }
                rel.push(name);
            }
        }
    }
    if rel.as_os_str().is_empty() {
        rel.push(".");
    }
    Ok(rel)
}

fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_paths_pass_and_dots_mean_the_root() {
        assert_eq!(check_relative("a/b.txt").unwrap(), Path::new("a/b.txt"));
        assert_eq!(check_relative("./a//b").unwrap(), Path::new("a/b"));
        assert_eq!(check_relative("").unwrap(), Path::new("."));
        assert_eq!(check_relative(".").unwrap(), Path::new("."));
    }

    #[test]
    fn lexical_refusals_are_safety_errors_naming_the_path() {
        for bad in ["/etc/passwd", "a/../../b", "..", "a\0b"] {
            let err = check_relative(bad).unwrap_err();
            assert!(matches!(err, SkillError::Safety(_)), "{bad}: {err}");
            let shown = bad.escape_debug().to_string();
            assert!(err.to_string().contains(&shown), "{err}");
        }
    }
}
