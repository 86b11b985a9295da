//! A text read a piece of lines at a time, each piece within the output budget: what lets
//! `load_skill` hand over instructions or a file longer than the budget whole, in pieces, where
//! the registry's truncation would drop everything past the budget.
//!
//! Lines are numbered from 1 and keep their line endings (`\n`, `\r\n`), so the pieces of a text,
//! read one after the other, put together, are the text byte for byte. A piece is whole lines,
//! as many as `limit` asks and the budget holds, followed by a notice when it is not the whole
//! text: which lines it holds, of how many, and the `offset` to continue from. Only a line
//! longer than the budget by itself is cut inside: its first characters are shown, and the
//! notice says so and where the next line starts; the rest of that line cannot be read this way.

use crate::error::SkillError;

/// Which lines to read: from line `offset` (1-based; default 1), at most `limit` of them
/// (default: as many as the budget holds).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Window {
    pub(super) offset: Option<usize>,
    pub(super) limit: Option<usize>,
}

/// The piece of `text` that `window` asks for, `header` first when the piece starts at line 1,
/// in at most `budget` characters (header and notice included, as long as the header and a
/// notice fit at all). `what` names the text in errors and notices (`` `references/a.md` ``).
///
/// Errors (arguments the model can correct): `offset` 0, `offset` past the last line, `limit` 0.
pub(super) fn piece(
    text: &str,
    header: &str,
    window: Window,
    budget: usize,
    what: &str,
) -> Result<String, SkillError> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len();
    let start = window.offset.unwrap_or(1);
    if start == 0 {
        return Err(SkillError::bad_args(
            "offset",
            "lines are numbered from 1: give offset 1 (or leave it out) for the first line",
        ));
    }
    if start > total.max(1) {
        return Err(SkillError::bad_args(
            "offset",
            format!(
                "offset {start} is past the end: {what} has {total} line{}; give an offset from 1 to {}",
                if total == 1 { "" } else { "s" },
                total.max(1)
            ),
        ));
    }
    if window.limit == Some(0) {
        return Err(SkillError::bad_args(
            "limit",
            "limit is how many lines to return and must be at least 1; leave it out for as many \
             as fit",
        ));
    }
    let header = if start == 1 { header } else { "" };
    if total == 0 {
        return Ok(header.to_owned());
    }
    let header_chars = header.chars().count();
    let max_lines = window.limit.unwrap_or(usize::MAX);
    if start == 1 && max_lines >= total && header_chars + text.chars().count() <= budget {
        return Ok(format!("{header}{text}")); // the whole text, as it always was: no notice
    }

    // Whole lines, as many as `limit` asks and fit beside the longest notice they could need
    // (its numbers at most `total + 1`; the notice is ASCII, so bytes are characters).
    let longest_notice = lines_notice(total + 1, total + 1, total + 2, budget).len();
    let room = budget.saturating_sub(header_chars + 2 + longest_notice);
    let mut used = 0;
    let mut end = start - 1; // the last line taken (1-based), start - 1 when none
    let mut by_budget = false;
    for line in &lines[start - 1..] {
        if end - (start - 1) == max_lines {
            break;
        }
        let chars = line.chars().count();
        if used + chars > room {
            by_budget = true;
            break;
        }
        used += chars;
        end += 1;
    }

    let mut out = String::with_capacity(header.len() + used + 128);
    out.push_str(header);
    if end >= start {
        for line in &lines[start - 1..end] {
            out.push_str(line);
        }
        out.push_str("\n\n");
        out.push_str(&lines_notice(
            start,
            end,
            total,
            if by_budget { budget } else { 0 },
        ));
        return Ok(out);
    }

    // Not even line `start` fits: its first characters, and where the next line starts.
    let line = lines[start - 1];
    let notice = long_line_notice(start, line.chars().count(), total);
    let room = budget.saturating_sub(header_chars + 2 + notice.len());
    let shown = match line.char_indices().nth(room) {
        Some((cut, _)) => &line[..cut],
        None => line,
    };
    out.push_str(shown);
    out.push_str("\n\n");
    out.push_str(&notice);
    Ok(out)
}

/// `[lines 3-40 of 120; call again with offset=41 for more]`, or `...: the end]`; with the
/// budget named when it is what stopped the piece (`budget` 0 when it is not).
fn lines_notice(start: usize, end: usize, total: usize, budget: usize) -> String {
    let fit = if budget > 0 {
        format!(", as many as fit in the output budget of {budget} characters")
    } else {
        String::new()
    };
    if end < total {
        format!(
            "[lines {start}-{end} of {total}{fit}; call again with offset={} for more]",
            end + 1
        )
    } else {
        format!("[lines {start}-{end} of {total}{fit}: the end]")
    }
}

/// The notice after the first characters of a line longer than the budget.
fn long_line_notice(line: usize, chars: usize, total: usize) -> String {
    let next = if line < total {
        format!("call again with offset={} for the lines after it", line + 1)
    } else {
        "it is the last line".to_owned()
    };
    format!(
        "[line {line} of {total} has {chars} characters, more than the output budget holds: only \
         its beginning is shown; {next}]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, offset: Option<usize>, limit: Option<usize>, budget: usize) -> String {
        piece(text, "", Window { offset, limit }, budget, "`f`").unwrap()
    }

    /// The text of a piece without its notice.
    fn body(piece: &str) -> &str {
        piece.rfind("\n\n[line").map_or(piece, |at| &piece[..at])
    }

    #[test]
    fn pieces_put_together_are_the_text_byte_for_byte() {
        let text = "one\r\ntwo\n\nfour é\nfive without a newline";
        for budget in [400, 250, 180] {
            for limit in [None, Some(1), Some(2), Some(7)] {
                let mut joined = String::new();
                let mut offset = 1;
                loop {
                    let piece = read(text, Some(offset), limit, budget);
                    assert!(piece.chars().count() <= budget, "{piece:?}");
                    joined.push_str(body(&piece));
                    match piece.split("offset=").nth(1) {
                        Some(rest) => offset = rest.split(' ').next().unwrap().parse().unwrap(),
                        None => break,
                    }
                }
                assert_eq!(joined, text, "budget {budget}, limit {limit:?}");
            }
        }
    }

    #[test]
    fn a_whole_text_comes_back_as_it_is_and_a_part_says_which_lines() {
        assert_eq!(read("a\nb\n", None, None, 1000), "a\nb\n");
        assert_eq!(
            read("a\nb\nc\n", None, Some(2), 1000),
            "a\nb\n\n\n[lines 1-2 of 3; call again with offset=3 for more]"
        );
        assert_eq!(
            read("a\nb\nc\n", Some(3), None, 1000),
            "c\n\n\n[lines 3-3 of 3: the end]"
        );
    }

    #[test]
    fn bad_windows_are_errors_that_say_what_to_give() {
        let error = |offset, limit| {
            piece("a\nb\n", "", Window { offset, limit }, 1000, "`f`")
                .unwrap_err()
                .to_string()
        };
        assert!(error(Some(0), None).contains("numbered from 1"));
        assert!(error(Some(3), None).contains("offset 3 is past the end: `f` has 2 lines"));
        assert!(error(None, Some(0)).contains("at least 1"));
        // An empty text has nothing past line 1.
        assert_eq!(read("", Some(1), None, 1000), "");
        assert!(
            piece(
                "",
                "",
                Window {
                    offset: Some(2),
                    limit: None
                },
                1000,
                "`f`"
            )
            .is_err()
        );
    }

    #[test]
    fn a_line_longer_than_the_budget_shows_its_beginning_and_where_the_next_starts() {
        let long = format!("{}\nshort\n", "x".repeat(1_000));
        let piece = read(&long, None, None, 300);
        assert!(piece.chars().count() <= 300, "{}", piece.chars().count());
        assert!(piece.starts_with("xxx"));
        assert!(piece.contains("line 1 of 2 has 1001 characters"), "{piece}");
        assert!(piece.ends_with("call again with offset=2 for the lines after it]"));
        assert_eq!(
            read(&long, Some(2), None, 300),
            "short\n\n\n[lines 2-2 of 2: the end]"
        );
    }

    #[test]
    fn the_header_comes_with_the_first_line_only() {
        let window = Window {
            offset: None,
            limit: Some(1),
        };
        let first = piece("a\nb\n", "HEAD\n", window, 1000, "`f`").unwrap();
        assert!(first.starts_with("HEAD\na\n"), "{first}");
        let window = Window {
            offset: Some(2),
            limit: None,
        };
        let second = piece("a\nb\n", "HEAD\n", window, 1000, "`f`").unwrap();
        assert!(second.starts_with("b\n"), "{second}");
    }
}
