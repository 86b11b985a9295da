//! Applying the chunks of an `*** Update File` to a file's text. Pure: text in, text out.
//!
//! Context is found with four passes, each more forgiving than the last: exact, then ignoring
//! trailing whitespace, then ignoring surrounding whitespace, then also treating Unicode dashes,
//! quotes and spaces as their ASCII twins (models often "typeset" code they copy).

use super::parse::{Chunk, DiffLine};

/// Applies `chunks` to `original` (the text of `path`), or says which context line did not
/// match. Line endings (`\n` or `\r\n`) and the absence of a final newline are kept.
///
/// ```
/// use agent_std_tools::patch::{apply_chunks, parse, Hunk};
///
/// let patch = parse("*** Begin Patch\n*** Update File: f\n a\n-b\n+B\n*** End Patch").unwrap();
/// let Hunk::Update { chunks, .. } = &patch.hunks[0] else { unreachable!() };
/// assert_eq!(apply_chunks("a\nb\nc\n", "f", chunks).unwrap(), "a\nB\nc\n");
/// ```
pub fn apply_chunks(original: &str, path: &str, chunks: &[Chunk]) -> Result<String, String> {
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

    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut at = 0;
    for chunk in chunks {
        for context in &chunk.context {
            match seek(&lines, std::slice::from_ref(context), at, false) {
                Some(i) => at = i + 1,
                None => {
                    return Err(format!(
                        "`{path}`: could not find the context line `@@ {context}` (the `@@` section at patch line {}){}",
                        chunk.line,
                        after(at)
                    ));
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
        let mut found = seek(&lines, &old, at, chunk.end_of_file);
        if found.is_none() && matches!(diff.last(), Some(DiffLine::Context(t)) if t.is_empty()) {
            // A trailing blank context line is usually the model's separator, not file content.
            diff = &diff[..diff.len() - 1];
            old = old_of(diff);
            found = seek(&lines, &old, at, chunk.end_of_file);
        }
        let Some(start) = found else {
            return Err(mismatch(path, &lines, chunk, at));
        };
        replacements.push((start, old.len(), new_block(diff, &lines, start)));
        at = start + old.len();
    }

    // Applied from the last place to the first, so earlier indexes stay valid. The sort is
    // stable: additions at the same place keep the patch's order.
    replacements.sort_by_key(|&(start, _, _)| start);
    for (start, len, new) in replacements.into_iter().rev() {
        lines.splice(start..start + len, new);
    }
    let mut text = lines.join(eol);
    if !lines.is_empty() && (trailing_newline || original.is_empty()) {
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

/// Where `pattern` occurs in `lines` at or after `start` (at the very end first, if
/// `end_of_file`), trying the four passes in turn.
pub fn seek(
    lines: &[String],
    pattern: &[String],
    start: usize,
    end_of_file: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start.min(lines.len()));
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let passes: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| normalise(a.trim()) == normalise(b.trim()),
    ];
    for same in passes {
        let matches_at = |i: usize| (0..pattern.len()).all(|j| same(&lines[i + j], &pattern[j]));
        if end_of_file && last >= start && matches_at(last) {
            return Some(last);
        }
        if let Some(i) = (start..=last).find(|&i| matches_at(i)) {
            return Some(i);
        }
    }
    None
}

/// Maps typographic punctuation and exotic spaces to ASCII.
pub fn normalise(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{FF07}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
            | '\u{00BB}' | '\u{FF02}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

fn after(at: usize) -> String {
    if at == 0 {
        String::new()
    } else {
        format!(" after line {at}")
    }
}

/// The message for a chunk whose lines were not found: names the first line that is not in the
/// file at all, or says the lines are there but not together in this order.
fn mismatch(path: &str, lines: &[String], chunk: &Chunk, at: usize) -> String {
    let rest = &lines[at.min(lines.len())..];
    let old = chunk.old_lines();
    let missing = old.iter().find(|wanted| {
        !wanted.trim().is_empty()
            && !rest
                .iter()
                .any(|l| normalise(l.trim()) == normalise(wanted.trim()))
    });
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

    fn v(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_passes_go_from_exact_to_unicode_normalised() {
        let lines = v(&["a  ", "  b", "x – y “q”"]);
        assert_eq!(seek(&lines, &v(&["a"]), 0, false), Some(0));
        assert_eq!(seek(&lines, &v(&["b"]), 0, false), Some(1));
        assert_eq!(seek(&lines, &v(&["x - y \"q\""]), 0, false), Some(2));
        assert_eq!(seek(&lines, &v(&["nope"]), 0, false), None);
    }

    #[test]
    fn end_of_file_prefers_the_last_occurrence() {
        let lines = v(&["x", "y", "x"]);
        assert_eq!(seek(&lines, &v(&["x"]), 0, true), Some(2));
        assert_eq!(seek(&lines, &v(&["x"]), 0, false), Some(0));
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
