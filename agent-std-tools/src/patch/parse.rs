//! The V4A grammar: text in, a [`Patch`] out. Pure: no filesystem.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: <path>        then lines starting with `+`
//! *** Delete File: <path>
//! *** Update File: <path>
//! *** Move to: <path>         optional, right after Update File
//! @@ <context line>           optional; seeks forward to that line
//!  context / -removed / +added
//! *** End of File             optional; the chunk must match at the end of the file
//! *** End Patch
//! ```
//!
//! # Which line is a marker
//!
//! The rule follows the format's reference implementation (codex's `apply-patch` parser):
//!
//! - **The boundaries** are the first and last non-blank lines, compared after trimming, so
//!   ` *** Begin Patch` and ` *** End Patch` are accepted (also right after a `+` line). A patch
//!   wrapped the way models send it to a shell — a first line `<<'EOF'`, `<<"EOF"` or `<<EOF` and a
//!   last line `EOF` around the boundaries — is unwrapped first.
//! - **Where a file header is expected** (after `*** Begin Patch`, after a `*** Delete File`, after
//!   the `+` lines of an `*** Add File`), headers are compared after trimming:
//!   `  *** Update File: x` is a header. `*** Move to:` right after its `*** Update File` is
//!   already inside the changes: unpadded, it is the move; ` *** Move to: x` is a context line.
//! - **Inside the changes to a file, the first character decides.** A line starting with a space is
//!   a context line whatever its text — ` @@ def foo():`, ` *** End Patch`, ` *** Add File: x` are
//!   lines of the file, not markers. `-` removes, `+` adds, and an empty line is an empty context
//!   line (models often drop the leading space). Only a line starting with none of these is read
//!   as a marker (`@@`, `*** End of File`, or the next file's header, trailing spaces ignored).

/// A parsed patch: the file operations in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The operations.
    pub hunks: Vec<Hunk>,
}

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// `*** Add File:` — create a file with this content.
    Add {
        /// The new file.
        path: String,
        /// Its whole content.
        content: String,
    },
    /// `*** Delete File:` — remove a file.
    Delete {
        /// The file to remove.
        path: String,
    },
    /// `*** Update File:` — change a file, and maybe move it.
    Update {
        /// The file to change.
        path: String,
        /// `*** Move to:` — where the changed file goes.
        move_to: Option<String>,
        /// The changes, in file order.
        chunks: Vec<Chunk>,
    },
}

impl Hunk {
    /// The path the hunk names first.
    pub fn path(&self) -> &str {
        match self {
            Hunk::Add { path, .. } | Hunk::Delete { path } | Hunk::Update { path, .. } => path,
        }
    }
}

/// One `@@` section of an update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// Text of the `@@` headers before the lines; each is found in turn, moving forward.
    pub context: Vec<String>,
    /// The ` `, `-` and `+` lines, in order.
    pub lines: Vec<DiffLine>,
    /// Whether `*** End of File` closed the chunk: it must match at the end of the file.
    pub end_of_file: bool,
    /// The 1-based line of the patch where the chunk starts, for error messages.
    pub line: usize,
}

/// One line of a chunk, without its one-character prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    /// ` `: a line that stays; the file's own text is kept (it may differ in whitespace or
    /// punctuation from what the patch says).
    Context(String),
    /// `-`: a line to remove.
    Remove(String),
    /// `+`: a line to add.
    Add(String),
}

impl Chunk {
    /// The lines the file must contain (context and removed lines, in order).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                DiffLine::Context(t) | DiffLine::Remove(t) => Some(t.as_str()),
                DiffLine::Add(_) => None,
            })
            .collect()
    }

    /// The lines the patch puts in their place (context and added lines, in order).
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                DiffLine::Context(t) | DiffLine::Add(t) => Some(t.as_str()),
                DiffLine::Remove(_) => None,
            })
            .collect()
    }

    fn has_lines(&self) -> bool {
        !self.lines.is_empty()
    }
}

/// Why a patch text could not be parsed; the message names the patch line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF: &str = "*** End of File";

/// Parses V4A patch text.
///
/// ```
/// use agent_std_tools::patch::{parse, Hunk};
///
/// let patch = parse("*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n").unwrap();
/// assert_eq!(patch.hunks, [Hunk::Add { path: "hello.txt".into(), content: "hi\n".into() }]);
/// ```
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    let (Some(mut first), Some(mut last)) = (first, last) else {
        return Err(ParseError(format!(
            "the patch is empty; it must start with `{BEGIN}` and end with `{END}`"
        )));
    };
    if last > first && is_heredoc_start(lines[first]) && lines[last].trim() == "EOF" {
        let inner = |i: &usize| !lines[*i].trim().is_empty();
        match (
            (first + 1..last).find(inner),
            (first + 1..last).rev().find(inner),
        ) {
            (Some(f), Some(l)) => (first, last) = (f, l),
            _ => {
                return Err(ParseError(format!(
                    "the patch between `{}` and `EOF` is empty; it must start with `{BEGIN}` and end with `{END}`",
                    lines[first].trim()
                )));
            }
        }
    }
    if lines[first].trim() != BEGIN {
        return Err(ParseError(format!(
            "line {}: the patch must start with `{BEGIN}`, found `{}`",
            first + 1,
            lines[first].trim()
        )));
    }
    if last == first || lines[last].trim() != END {
        return Err(ParseError(format!(
            "line {}: the patch must end with `{END}`, found `{}`",
            last + 1,
            lines[last].trim()
        )));
    }

    let mut parser = Parser {
        lines: &lines,
        at: first + 1,
        end: last,
    };
    let mut hunks = Vec::new();
    while parser.at < parser.end {
        let line = parser.lines[parser.at];
        let marker = line.trim();
        if marker.is_empty() {
            parser.at += 1;
            continue;
        }
        let number = parser.at + 1;
        parser.at += 1;
        if let Some(path) = marker.strip_prefix(ADD) {
            let path = path_of(path, number, ADD)?;
            hunks.push(parser.add(path)?);
        } else if let Some(path) = marker.strip_prefix(DELETE) {
            let path = path_of(path, number, DELETE)?;
            hunks.push(Hunk::Delete { path });
        } else if let Some(path) = marker.strip_prefix(UPDATE) {
            let path = path_of(path, number, UPDATE)?;
            hunks.push(parser.update(path, number)?);
        } else {
            return Err(ParseError(format!(
                "line {number}: expected `{ADD}`, `{DELETE}` or `{UPDATE}`, found `{marker}`"
            )));
        }
    }
    if hunks.is_empty() {
        return Err(ParseError(
            "the patch has no file operations between its first and last lines".to_owned(),
        ));
    }
    Ok(Patch { hunks })
}

struct Parser<'a> {
    lines: &'a [&'a str],
    at: usize,
    end: usize,
}

impl Parser<'_> {
    /// Whether the line at `self.at` starts the next file operation (or is `*** End Patch`),
    /// where a header is expected: padding is allowed.
    fn at_file_marker(&self) -> bool {
        self.at >= self.end || is_file_marker(self.lines[self.at].trim())
    }

    /// Whether the line at `self.at` ends the changes to a file: the next file operation, not
    /// padded (a line starting with a space is a context line there).
    fn at_unpadded_file_marker(&self) -> bool {
        self.at >= self.end || {
            let line = self.lines[self.at];
            !line.starts_with(char::is_whitespace) && is_file_marker(line.trim_end())
        }
    }

    fn add(&mut self, path: String) -> Result<Hunk, ParseError> {
        let mut content = String::new();
        while !self.at_file_marker() {
            let line = self.lines[self.at];
            let number = self.at + 1;
            self.at += 1;
            match line.strip_prefix('+') {
                Some(text) => {
                    content.push_str(text);
                    content.push('\n');
                }
                None if line.trim().is_empty() && self.at_file_marker() => {}
                None => {
                    return Err(ParseError(format!(
                        "line {number}: every line of `{ADD} {path}` must start with `+`, found `{line}`"
                    )));
                }
            }
        }
        Ok(Hunk::Add { path, content })
    }

    fn update(&mut self, path: String, header_line: usize) -> Result<Hunk, ParseError> {
        let mut move_to = None;
        if self.at < self.end
            && let Some(dest) = self.lines[self.at].trim_end().strip_prefix(MOVE)
        {
            move_to = Some(path_of(dest, self.at + 1, MOVE)?);
            self.at += 1;
        }
        let mut chunks: Vec<Chunk> = Vec::new();
        let mut current = Chunk {
            line: self.at + 1,
            ..Chunk::default()
        };
        while !self.at_unpadded_file_marker() {
            let line = self.lines[self.at];
            let number = self.at + 1;
            self.at += 1;
            // The first character decides: a leading space means context, whatever follows.
            if let Some(text) = line.strip_prefix(' ') {
                current.lines.push(DiffLine::Context(text.to_owned()));
                continue;
            }
            let trimmed = line.trim_end();
            if trimmed == "@@" || trimmed.starts_with("@@ ") {
                if current.has_lines() {
                    chunks.push(std::mem::take(&mut current));
                }
                if current.context.is_empty() && !current.has_lines() {
                    current.line = number;
                }
                let text = trimmed[2..].strip_prefix(' ').unwrap_or(&trimmed[2..]);
                if !text.trim().is_empty() {
                    current.context.push(text.to_owned());
                }
                continue;
            }
            if trimmed == EOF {
                if !current.has_lines() {
                    return Err(ParseError(format!(
                        "line {number}: `{EOF}` must follow the lines of a change to `{path}`"
                    )));
                }
                current.end_of_file = true;
                chunks.push(std::mem::take(&mut current));
                current.line = number + 1;
                continue;
            }
            if let Some(text) = line.strip_prefix('-') {
                current.lines.push(DiffLine::Remove(text.to_owned()));
            } else if let Some(text) = line.strip_prefix('+') {
                current.lines.push(DiffLine::Add(text.to_owned()));
            } else if line.is_empty() {
                current.lines.push(DiffLine::Context(String::new()));
            } else {
                return Err(ParseError(format!(
                    "line {number}: in the changes to `{path}`, every line must start with ` ` (context), `-` (remove) or `+` (add), or be `@@ ...`; found `{line}`"
                )));
            }
        }
        if current.has_lines() {
            chunks.push(current);
        } else if !current.context.is_empty() {
            return Err(ParseError(format!(
                "line {}: the `@@` section for `{path}` has no lines to change",
                current.line
            )));
        }
        // Trailing empty context lines before the next marker are usually the model's blank
        // separators; they are kept, and matching drops a trailing empty line if it must.
        if chunks.is_empty() && move_to.is_none() {
            return Err(ParseError(format!(
                "line {header_line}: `{UPDATE} {path}` has no changes"
            )));
        }
        Ok(Hunk::Update {
            path,
            move_to,
            chunks,
        })
    }
}

/// Whether a trimmed line names a file operation or ends the patch.
fn is_file_marker(marker: &str) -> bool {
    [ADD, DELETE, UPDATE].iter().any(|m| marker.starts_with(m)) || marker == END
}

/// Whether a line opens a shell here-document (`<<'EOF'`, `<<"EOF"`, `<<EOF`), the way models
/// often wrap a patch meant for a shell command.
fn is_heredoc_start(line: &str) -> bool {
    matches!(line.trim(), "<<'EOF'" | "<<\"EOF\"" | "<<EOF")
}

fn path_of(rest: &str, line: usize, marker: &str) -> Result<String, ParseError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(ParseError(format!(
            "line {line}: `{marker}` needs a path after it"
        )));
    }
    Ok(path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_of_hunk() {
        let text = "*** Begin Patch\n\
                    *** Add File: a.txt\n\
                    +one\n\
                    +two\n\
                    *** Delete File: b.txt\n\
                    *** Update File: c.txt\n\
                    *** Move to: d.txt\n\
                    @@ fn main() {\n \
                    keep\n\
                    -old\n\
                    +new\n\
                    *** End of File\n\
                    *** End Patch";
        let patch = parse(text).unwrap();
        assert_eq!(patch.hunks.len(), 3);
        assert_eq!(
            patch.hunks[0],
            Hunk::Add {
                path: "a.txt".into(),
                content: "one\ntwo\n".into()
            }
        );
        assert_eq!(
            patch.hunks[1],
            Hunk::Delete {
                path: "b.txt".into()
            }
        );
        let Hunk::Update {
            path,
            move_to,
            chunks,
        } = &patch.hunks[2]
        else {
            panic!("expected an update")
        };
        assert_eq!(path, "c.txt");
        assert_eq!(move_to.as_deref(), Some("d.txt"));
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].context, ["fn main() {"]);
        assert_eq!(chunks[0].old_lines(), ["keep", "old"]);
        assert_eq!(chunks[0].new_lines(), ["keep", "new"]);
        assert!(chunks[0].end_of_file);
    }

    #[test]
    fn padded_markers_and_crlf_are_accepted() {
        let text = "  *** Begin Patch  \r\n   *** Update File:   x.rs  \r\n@@\r\n-a\r\n+b\r\n *** End Patch \r\n";
        let patch = parse(text).unwrap();
        assert_eq!(patch.hunks[0].path(), "x.rs");
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse("*** Begin Patch\n*** Update File: x\n?what\n*** End Patch").unwrap_err();
        assert!(err.0.starts_with("line 3:"), "{err}");
        let err = parse("*** Begin Patch\n*** Add File: x\n+a\n").unwrap_err();
        assert!(err.0.contains("*** End Patch"), "{err}");
        let err = parse("hello").unwrap_err();
        assert!(err.0.contains("*** Begin Patch"), "{err}");
    }
}
