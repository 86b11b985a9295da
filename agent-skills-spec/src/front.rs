//! Finding the front matter in a `SKILL.md`'s text, and the lines its keys are on.
//!
//! The front matter is the text between a first line `---` and the next line `---` (trailing
//! spaces, tabs and a `\r` before the line break are allowed on both). A UTF-8 byte order mark
//! before the first `---` is skipped. The front matter's first line is line 2 of the file.

use crate::MAX_FRONT_MATTER_BYTES;
use crate::rule::{Rule, Violation, quote};
use std::collections::HashMap;

/// The front matter and where the body begins.
#[derive(Debug)]
pub(crate) struct Split<'t> {
    /// The YAML text between the `---` lines (with its line breaks).
    pub yaml: &'t str,
    /// Byte offset in the whole text just after the closing `---` line and its line break.
    pub body_offset: usize,
}

/// Cuts `text` into front matter and body.
pub(crate) fn split(text: &str) -> Result<Split<'_>, Violation> {
    let start = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let (first, after_first) = line_at(text, start);
    if !is_fence(first) {
        let shown = if first.trim().is_empty() {
            "is empty".to_string()
        } else {
            format!("is {}", quote(first.trim_end(), 40))
        };
        return Err(Violation::new(
            1,
            Rule::FrontMatter,
            format!(
                "SKILL.md must start with a `---` line that opens the YAML front matter; its first line {shown}"
            ),
        ));
    }
    let Some(yaml_start) = after_first else {
        return Err(unclosed());
    };
    let mut pos = yaml_start;
    loop {
        let (line, next) = line_at(text, pos);
        if is_fence(line) {
            let yaml = &text[yaml_start..pos];
            if yaml.len() > MAX_FRONT_MATTER_BYTES {
                return Err(Violation::new(
                    1,
                    Rule::FrontMatter,
                    format!(
                        "the front matter is {} bytes, more than the {MAX_FRONT_MATTER_BYTES} this parser reads",
                        yaml.len()
                    ),
                ));
            }
            return Ok(Split {
                yaml,
                body_offset: next.unwrap_or(text.len()),
            });
        }
        match next {
            Some(next) => pos = next,
            None => return Err(unclosed()),
        }
    }
}

fn unclosed() -> Violation {
    Violation::new(
        1,
        Rule::FrontMatter,
        "the front matter opened by the `---` on line 1 is never closed by another `---` line",
    )
}

/// The line starting at byte `start` (without its line break) and the start of the next line.
fn line_at(text: &str, start: usize) -> (&str, Option<usize>) {
    match text[start..].find('\n') {
        Some(n) => (&text[start..start + n], Some(start + n + 1)),
        None => (&text[start..], None),
    }
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

/// Where the keys of the front matter are: an index built in one pass over its lines, so that
/// finding a key costs the same however many keys there are.
pub(crate) struct Lines<'t> {
    lines: Vec<&'t str>,
    /// Each top-level key (at column 0) and the file lines it is on, in order.
    top: HashMap<&'t str, Vec<usize>>,
}

/// The file's line number of the front matter's first line.
const FIRST_LINE: usize = 2;

impl<'t> Lines<'t> {
    pub(crate) fn new(yaml: &'t str) -> Self {
        let lines: Vec<&str> = yaml
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        let mut top: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, line) in lines.iter().enumerate() {
            if let Some((key, _)) = split_key(line) {
                top.entry(key).or_default().push(i + FIRST_LINE);
            }
        }
        Lines { lines, top }
    }

    /// The file line of the `nth` (0-based) top-level `key:` (at column 0, bare or quoted).
    pub(crate) fn key(&self, key: &str, nth: usize) -> Option<usize> {
        self.top.get(key)?.get(nth).copied()
    }

    /// The keys written as indented `key: value` lines in the block of the top-level key on file
    /// line `parent`: for each key, its file lines in order, each with the text after its colon.
    /// A key written otherwise (e.g. in a flow mapping `{a: b}`) is not in it.
    pub(crate) fn block(&self, parent: usize) -> HashMap<&'t str, Vec<(usize, &'t str)>> {
        let mut keys: HashMap<&str, Vec<(usize, &str)>> = HashMap::new();
        let first = parent + 1 - FIRST_LINE;
        for (i, line) in self.lines.iter().enumerate().skip(first) {
            let trimmed = line.trim_start_matches([' ', '\t']);
            if trimmed.len() == line.len() && !trimmed.is_empty() && !trimmed.starts_with('#') {
                break; // the next top-level key: the block has ended
            }
            if let Some((key, rest)) = split_key(trimmed) {
                keys.entry(key)
                    .or_default()
                    .push((i + FIRST_LINE, rest.trim()));
            }
        }
        keys
    }
}

/// `key` and the text after its colon, if `line` starts with a key: bare (up to the first colon
/// followed by a space or the end of the line) or in single or double quotes.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = match line.chars().next()? {
        q @ ('"' | '\'') => {
            let close = line[1..].find(q)? + 1;
            let rest = line[close + 1..].trim_start_matches([' ', '\t']);
            (&line[1..close], rest.strip_prefix(':')?)
        }
        ' ' | '\t' => return None,
        _ => {
            let colon = line
                .match_indices(':')
                .map(|(i, _)| i)
                .find(|&i| line[i + 1..].is_empty() || line[i + 1..].starts_with([' ', '\t']))?;
            (line[..colon].trim_end(), &line[colon + 1..])
        }
    };
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some((key, rest))
}
