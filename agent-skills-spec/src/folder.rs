//! Skill folders on disk: finding the skills in a directory, loading one, listing its files.

use crate::parse::{parse, too_large};
use crate::rule::{Rule, Violation};
use crate::{MAX_DEPTH, MAX_FILES, MAX_SKILL_FILE_BYTES, Manifest, SKILL_FILE};
use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// A skill folder whose `SKILL.md` follows every rule.
#[derive(Debug, Clone)]
pub struct Found {
    /// The skill's folder (the directory given to [`find`] joined with the folder's name).
    pub folder: PathBuf,
    /// The checked front matter.
    pub manifest: Manifest,
    /// The whole text of the `SKILL.md`, front matter included.
    pub text: String,
}

impl Found {
    /// The Markdown instructions after the front matter.
    pub fn body(&self) -> &str {
        self.manifest.body(&self.text)
    }
}

/// A skill folder whose `SKILL.md` cannot be read or breaks a rule: the file and every violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The `SKILL.md`.
    pub file: PathBuf,
    /// What is wrong, sorted by line; never empty.
    pub violations: Vec<Violation>,
}

impl fmt::Display for Invalid {
    /// One line per violation: `{file}:{line}: {message} (rule `{id}`)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(
                f,
                "{}:{}: {} (rule `{}`)",
                self.file.display(),
                v.line,
                v.message,
                v.rule.id()
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid {}

/// Every skill directly under `dir`: each immediate subfolder (sorted by name) that holds a SKILL.md.
/// Subfolders without one are skipped; hidden folders (name starting with '.') are skipped.
/// A SKILL.md that cannot be read or breaks a rule is an `Invalid`, and the other skills still load.
/// Err only when `dir` itself cannot be read.
///
/// A symbolic link to a folder counts as a subfolder (skills are often linked into place); an
/// entry whose type cannot be read is skipped.
pub fn find(dir: &Path) -> io::Result<(Vec<Found>, Vec<Invalid>)> {
    let mut folders: Vec<(std::ffi::OsString, PathBuf)> = Vec::new();
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let path = entry.path();
        if !fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        if fs::symlink_metadata(path.join(SKILL_FILE)).is_err() {
            continue;
        }
        folders.push((name, path));
    }
    folders.sort();
    let (mut found, mut invalid) = (Vec::new(), Vec::new());
    for (_, folder) in folders {
        match load(&folder) {
            Ok(skill) => found.push(skill),
            Err(bad) => invalid.push(bad),
        }
    }
    Ok((found, invalid))
}

/// One skill folder: its `SKILL.md` read and checked against every rule, with the folder's own
/// name as the name the skill must have.
///
/// [`find`] calls this for each subfolder; it is public for callers that name one skill folder.
pub fn load(folder: &Path) -> Result<Found, Invalid> {
    let file = folder.join(SKILL_FILE);
    let invalid = |violations| Invalid {
        file: file.clone(),
        violations,
    };
    let text = read(&file).map_err(|v| invalid(vec![v]))?;
    let name = folder_name(folder);
    match parse(&text, &name) {
        Ok(manifest) => Ok(Found {
            folder: folder.to_path_buf(),
            manifest,
            text,
        }),
        Err(violations) => Err(invalid(violations)),
    }
}

/// The last component of `folder`'s path (of its canonical path for `.` and the like).
fn folder_name(folder: &Path) -> String {
    let name = match folder.file_name() {
        Some(name) => Some(name.to_os_string()),
        None => folder
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_os_string())),
    };
    name.map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A `SKILL.md`'s text, or the [`Rule::FileUnreadable`] violation that says why not.
fn read(file: &Path) -> Result<String, Violation> {
    let unreadable = |e: io::Error| {
        Violation::new(
            1,
            Rule::FileUnreadable,
            format!("{SKILL_FILE} cannot be read: {e}"),
        )
    };
    let meta = fs::metadata(file).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(Violation::new(
            1,
            Rule::FileUnreadable,
            format!("{SKILL_FILE} is not a regular file"),
        ));
    }
    if meta.len() > MAX_SKILL_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::new();
    fs::File::open(file)
        .and_then(|f| f.take(MAX_SKILL_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_SKILL_FILE_BYTES {
        return Err(too_large(bytes.len() as u64)); // it grew while being read
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        Violation::new(
            line,
            Rule::FileUnreadable,
            format!(
                "{SKILL_FILE} is not UTF-8 text: the byte at offset {} is not valid UTF-8",
                valid.len()
            ),
        )
    })
}

/// Every regular file under `folder` other than its top-level SKILL.md, as '/'-separated relative
/// paths, sorted. Symbolic links are not followed (and not listed). More than MAX_FILES files or
/// nesting deeper than MAX_DEPTH is an io::Error (kind InvalidData) that says so.
///
/// Hidden files are listed like any other. Other special files (sockets, pipes) are not listed. A
/// name that is not UTF-8 is an `InvalidData` error too (it could not be written as a path
/// string), and so is a tree of more than [`MAX_FILES`] folders, so that the walk is bounded
/// however the folder is laid out.
pub fn files(folder: &Path) -> io::Result<Vec<String>> {
    let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidData, message);
    let mut out = Vec::new();
    let mut folders = 0usize;
    // (directory on disk, its relative path with a trailing '/' or "", its depth)
    let mut stack = vec![(folder.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                return Err(invalid(format!(
                    "{}: the name {:?} is not UTF-8",
                    dir.display(),
                    entry.file_name()
                )));
            };
            let rel = format!("{prefix}{name}");
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if depth + 1 > MAX_DEPTH {
                    return Err(invalid(format!(
                        "{}: folders are nested more than {MAX_DEPTH} deep (at {rel})",
                        folder.display()
                    )));
                }
                folders += 1;
                if folders > MAX_FILES {
                    return Err(invalid(format!(
                        "{}: more than {MAX_FILES} folders",
                        folder.display()
                    )));
                }
                stack.push((entry.path(), format!("{rel}/"), depth + 1));
            } else if kind.is_file() && rel != SKILL_FILE {
                out.push(rel);
                if out.len() > MAX_FILES {
                    return Err(invalid(format!(
                        "{}: more than {MAX_FILES} files",
                        folder.display()
                    )));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}
