//! Applying the chunks of an `*** Update File` to a file's text. Pure: text in, text out.
//!
//! Context is found with four passes, each more forgiving than the last: exact, then ignoring
//! trailing whitespace, then ignoring surrounding whitespace, then also treating Unicode dashes,
//! quotes and spaces as their ASCII twins (models often "typeset" code they copy).
//!
//! # Bounded work
//!
//! The file's lines are indexed once per pass by their text as that pass compares it, so a pass
//! finds its candidates by lookup instead of comparing the pattern at every place: a pattern
//! line the file does not hold rules the pass out at once; otherwise the pattern is checked only
//! where its rarest line occurs, or the file is scanned once in linear time (KMP), whichever is
//! cheaper. The work left is counted against a budget proportional to the sizes of the file and
//! the patch; a patch that would need more fails with an error saying so, and the caller's stop
//! flag is checked as the work goes.
//!
//! A byte-order mark at the start of the file is not part of its first line: that line matches
//! context written without it, and the mark stays at the start of the result.

use super::budget::{Failure, WORK_FLOOR, WORK_PER_LINE, Work};
use super::parse::{Chunk, DiffLine};
use super::seek::Index;

/// Applies `chunks` to `original` (the text of `path`), or says which context line did not
/// match. Line endings (`\n` or `\r\n`), the absence of a final newline and a leading byte-order
/// mark are kept.
///
/// The pure step of [`apply_patch_in`](super::apply_patch_in), public so that a patch can be
/// applied to text that is not a file of the workspace (an editor's buffer, a preview of the
/// change before it is made) with the same matching and the same work budget. `path` only
/// names the text in error messages.
///
/// ```
/// use agent_std_tools::patch::{apply_chunks, parse, Hunk};
///
/// let patch = parse("*** Begin Patch\n*** Update File: f\n a\n-b\n+B\n*** End Patch").unwrap();
/// let Hunk::Update { chunks, .. } = &patch.hunks[0] else { unreachable!() };
/// assert_eq!(apply_chunks("a\nb\nc\n", "f", chunks).unwrap(), "a\nB\nc\n");
/// ```
pub fn apply_chunks(original: &str, path: &str, chunks: &[Chunk]) -> Result<String, ApplyError> {
    apply_chunks_until(original, path, chunks, &|| false).map_err(|failure| {
        ApplyError(match failure {
            Failure::Message(message) => message,
            Failure::Stopped => format!("`{path}`: stopped"),
        })
    })
}

/// Why the chunks of an update could not be applied: a context line that is not in the file, or
/// a search past its work budget. The message names the file and the patch line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyError(pub String);

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ApplyError {}

/// [`apply_chunks`], within the work budget, ending early once `stop` says so.
pub(crate) fn apply_chunks_until(
    original: &str,
    path: &str,
    chunks: &[Chunk],
    stop: &dyn Fn() -> bool,
) -> Result<String, Failure> {
    let patch_lines: usize = chunks.iter().map(|c| c.lines.len() + c.context.len()).sum();
    let file_lines = original.bytes().filter(|&b| b == b'\n').count() + 1;
    let budget = WORK_FLOOR + WORK_PER_LINE * (file_lines + patch_lines) as u64;
    apply_with_budget(original, path, chunks, budget, stop)
}

fn apply_with_budget(
    original: &str,
    path: &str,
    chunks: &[Chunk],
    budget: u64,
    stop: &dyn Fn() -> bool,
) -> Result<String, Failure> {
    let mut work = Work {
        left: budget,
        since_check: 0,
        stop,
        path,
    };
    let (bom, original) = match original.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", original),
    };
    // CRLF only when every line ends so: in a file with mixed endings each line keeps its own
    // (a `\r` stays part of its line's text), so lines the patch does not touch keep their bytes.
    let crlf = original.contains("\r\n")
        && original.matches('\n').count() == original.matches("\r\n").count();
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut lines: Vec<String> = original
        .split('\n')
        .map(|l| {
            if crlf {
                l.strip_suffix('\r').unwrap_or(l).to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect();
    let trailing_newline = original.ends_with('\n');
    if trailing_newline || original.is_empty() {
        lines.pop();
    }

    let index = Index::new(&lines);
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut at = 0;
    for chunk in chunks {
        work.check()?;
        for context in &chunk.context {
            match index.seek(std::slice::from_ref(context), at, false, &mut work)? {
                Some(i) => at = i + 1,
                None => {
                    return Err(Failure::Message(format!(
                        "`{path}`: could not find the context line `@@ {context}` (the `@@` section at patch line {}){}",
                        chunk.line,
                        after(at)
                    )));
                }
            }
        }
        let mut diff: &[DiffLine] = &chunk.lines;
        let mut old: Vec<String> = old_of(diff);
        if old.is_empty() {
            // Pure addition: after the `@@` context if there is one, else at the end of the file.
            // An addition at the end does not move the cursor: later chunks are still looked for
            // from where the last one matched (as the reference implementation does).
            if chunk.context.is_empty() {
                replacements.push((lines.len(), 0, new_block(diff, &lines, lines.len())));
            } else {
                replacements.push((at, 0, new_block(diff, &lines, at)));
            }
            continue;
        }
        let mut found = index.seek(&old, at, chunk.end_of_file, &mut work)?;
        if found.is_none() && matches!(diff.last(), Some(DiffLine::Context(t)) if t.is_empty()) {
            // A trailing blank context line is usually the model's separator, not file content.
            diff = &diff[..diff.len() - 1];
            old = old_of(diff);
            found = index.seek(&old, at, chunk.end_of_file, &mut work)?;
        }
        let Some(start) = found else {
            return Err(Failure::Message(mismatch(path, &index, chunk, at)));
        };
        replacements.push((start, old.len(), new_block(diff, &lines, start)));
        at = start + old.len();
    }
    drop(index);

    // Put together in one pass, in file order. The sort is stable: additions at the same place
    // keep the patch's order.
    replacements.sort_by_key(|&(start, _, _)| start);
    let mut result: Vec<String> = Vec::with_capacity(lines.len());
    let mut next = 0;
    let mut old_lines = lines.into_iter();
    for (start, len, new) in replacements {
        let start = start.max(next);
        result.extend(old_lines.by_ref().take(start - next));
        old_lines.by_ref().take(len).for_each(drop);
        next = start + len;
        result.extend(new);
    }
    result.extend(old_lines);
    let mut text = String::from(bom);
    text.push_str(&result.join(eol));
    if !result.is_empty() && (trailing_newline || original.is_empty()) {
        text.push_str(eol);
    }
    Ok(text)
}

fn old_of(diff: &[DiffLine]) -> Vec<String> {
    diff.iter()
        .filter_map(|l| match l {
            DiffLine::Context(t) | DiffLine::Remove(t) => Some(t.clone()),
            DiffLine::Add(_) => None,
        })
        .collect()
}

/// The lines replacing the match at `start`: context lines keep the file's own text, added lines
/// come from the patch.
fn new_block(diff: &[DiffLine], lines: &[String], start: usize) -> Vec<String> {
    let mut block = Vec::new();
    let mut old_index = start;
    for line in diff {
        match line {
            DiffLine::Context(text) => {
                block.push(
                    lines
                        .get(old_index)
                        .cloned()
                        .unwrap_or_else(|| text.clone()),
                );
                old_index += 1;
            }
            DiffLine::Remove(_) => old_index += 1,
            DiffLine::Add(text) => block.push(text.clone()),
        }
    }
    block
}

fn after(at: usize) -> String {
    if at == 0 {
        String::new()
    } else {
        format!(" after line {at}")
    }
}

/// The message for a chunk whose lines were not found: names the first line that is not in the
/// file at all (after `at`, by the most forgiving pass), or says the lines are there but not
/// together in this order.
fn mismatch(path: &str, index: &Index<'_>, chunk: &Chunk, at: usize) -> String {
    let old = chunk.old_lines();
    let missing = index.first_missing(&old, at);
    let where_ = if chunk.end_of_file {
        " at the end of the file"
    } else {
        ""
    };
    match missing {
        Some(line) => format!(
            "`{path}`: the context line `{line}` (patch line {}) is not in the file{}{where_}; read the file again and patch what it holds now",
            chunk.line,
            after(at)
        ),
        None => format!(
            "`{path}`: the {} lines starting with `{}` (patch line {}) are not in the file in this order{}{where_}; read the file again and patch what it holds now",
            old.len(),
            old.first().copied().unwrap_or(""),
            chunk.line,
            after(at)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_past_the_budget_is_a_clear_error() {
        let chunk = Chunk {
            lines: vec![DiffLine::Context("x".into()), DiffLine::Remove("y".into())],
            ..Chunk::default()
        };
        let text = "x\n".repeat(1000) + "y\n";
        let chunks = std::slice::from_ref(&chunk);
        let Err(Failure::Message(message)) = apply_with_budget(&text, "f", chunks, 10, &|| false)
        else {
            panic!("expected the budget to run out");
        };
        assert!(message.contains("too much work"), "{message}");
        assert!(apply_with_budget(&text, "f", chunks, 100_000, &|| false).is_ok());
        assert!(matches!(
            apply_with_budget(&text, "f", chunks, 100_000, &|| true),
            Err(Failure::Stopped)
        ));
    }

    #[test]
    fn a_byte_order_mark_is_kept_and_not_matched() {
        let chunk = Chunk {
            lines: vec![DiffLine::Remove("a".into()), DiffLine::Add("A".into())],
            ..Chunk::default()
        };
        assert_eq!(
            apply_chunks("\u{feff}a\nb\n", "f", std::slice::from_ref(&chunk)).unwrap(),
            "\u{feff}A\nb\n"
        );
        let with_mark = Chunk {
            lines: vec![
                DiffLine::Remove("\u{feff}a".into()),
                DiffLine::Add("A".into()),
            ],
            ..Chunk::default()
        };
        assert_eq!(
            apply_chunks("\u{feff}a\n", "f", std::slice::from_ref(&with_mark)).unwrap(),
            "\u{feff}A\n"
        );
    }

    #[test]
    fn crlf_and_missing_final_newline_are_kept() {
        let chunk = Chunk {
            lines: vec![DiffLine::Remove("b".into()), DiffLine::Add("B".into())],
            ..Chunk::default()
        };
        assert_eq!(
            apply_chunks("a\r\nb\r\n", "f", std::slice::from_ref(&chunk)).unwrap(),
            "a\r\nB\r\n"
        );
        assert_eq!(
            apply_chunks("a\nb", "f", std::slice::from_ref(&chunk)).unwrap(),
            "a\nB"
        );
    }
}
