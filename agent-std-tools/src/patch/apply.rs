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

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;

use super::parse::{Chunk, DiffLine};

/// Work units every patched file may use, whatever its size.
const WORK_FLOOR: u64 = 20_000_000;

/// Work units allowed per line of the file and of the patch, on top of [`WORK_FLOOR`].
const WORK_PER_LINE: u64 = 256;

/// How often (in work units) the stop flag is asked.
const CHECK_EVERY: u64 = 1 << 16;

/// Why applying the chunks ended without a result.
pub(crate) enum Failure {
    /// A context line did not match, or the work budget ran out: said for the model.
    Message(String),
    /// The caller's stop flag was set.
    Stopped,
}

/// The work budget of one file and the caller's stop flag.
struct Work<'a> {
    left: u64,
    since_check: u64,
    stop: &'a dyn Fn() -> bool,
    path: &'a str,
}

impl Work<'_> {
    fn spend(&mut self, units: usize) -> Result<(), Failure> {
        let units = units as u64;
        if units > self.left {
            return Err(Failure::Message(format!(
                "`{}`: finding where the changes go would take too much work (the context lines occur at too many places in the file); give fewer, more distinctive context lines, or split the change",
                self.path
            )));
        }
        self.left -= units;
        self.since_check += units;
        if self.since_check >= CHECK_EVERY {
            self.since_check = 0;
            self.check()?;
        }
        Ok(())
    }

    fn check(&self) -> Result<(), Failure> {
        if (self.stop)() {
            Err(Failure::Stopped)
        } else {
            Ok(())
        }
    }
}

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

/// Where `pattern` occurs in `lines` at or after `start` (at the very end first, if
/// `end_of_file`), trying the four passes in turn. Public only with the cargo feature
/// `test-utils`, for the tests of the matching passes.
#[cfg(feature = "test-utils")]
pub fn seek(
    lines: &[String],
    pattern: &[String],
    start: usize,
    end_of_file: bool,
) -> Option<usize> {
    let mut work = Work {
        left: u64::MAX,
        since_check: 0,
        stop: &|| false,
        path: "",
    };
    Index::new(lines)
        .seek(pattern, start, end_of_file, &mut work)
        .ok()
        .flatten()
}

/// How many passes there are, from exact to most forgiving.
const PASSES: usize = 4;

/// A line's text as pass `pass` compares it.
fn key(pass: usize, line: &str) -> Cow<'_, str> {
    match pass {
        0 => Cow::Borrowed(line),
        1 => Cow::Borrowed(line.trim_end()),
        2 => Cow::Borrowed(line.trim()),
        _ => normalised(line.trim()),
    }
}

/// The file's lines, indexed for each pass (built the first time the pass is needed).
struct Index<'a> {
    lines: &'a [String],
    passes: [OnceCell<PassIndex<'a>>; PASSES],
}

/// One pass's view of the file: each line as a number (equal numbers, equal text for the pass),
/// and where each number occurs.
struct PassIndex<'a> {
    ids: Vec<u32>,
    by_key: HashMap<Cow<'a, str>, u32>,
    /// The lines where each id occurs, ascending.
    postings: Vec<Vec<u32>>,
}

impl<'a> Index<'a> {
    fn new(lines: &'a [String]) -> Index<'a> {
        Index {
            lines,
            passes: Default::default(),
        }
    }

    fn pass(&self, pass: usize) -> &PassIndex<'a> {
        self.passes[pass].get_or_init(|| {
            let mut by_key: HashMap<Cow<'a, str>, u32> = HashMap::new();
            let mut postings: Vec<Vec<u32>> = Vec::new();
            let mut ids = Vec::with_capacity(self.lines.len());
            for (i, line) in self.lines.iter().enumerate() {
                let next = postings.len() as u32;
                let id = *by_key.entry(key(pass, line)).or_insert(next);
                if id == next {
                    postings.push(Vec::new());
                }
                postings[id as usize].push(i as u32);
                ids.push(id);
            }
            PassIndex {
                ids,
                by_key,
                postings,
            }
        })
    }

    /// [`seek`] over the index, within `work`.
    fn seek(
        &self,
        pattern: &[String],
        start: usize,
        end_of_file: bool,
        work: &mut Work<'_>,
    ) -> Result<Option<usize>, Failure> {
        let (n, m) = (self.lines.len(), pattern.len());
        if m == 0 {
            return Ok(Some(start.min(n)));
        }
        if m > n {
            return Ok(None);
        }
        let last = n - m;
        'passes: for pass in 0..PASSES {
            let index = self.pass(pass);
            work.spend(m)?;
            let mut wanted = Vec::with_capacity(m);
            for line in pattern {
                match index.by_key.get(&key(pass, line)) {
                    Some(&id) => wanted.push(id),
                    // A line the file does not hold: this pass cannot match anywhere.
                    None => continue 'passes,
                }
            }
            if end_of_file && last >= start {
                work.spend(m)?;
                if index.ids[last..] == wanted[..] {
                    return Ok(Some(last));
                }
            }
            if start <= last
                && let Some(i) = index.find(&wanted, start, last, work)?
            {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }
}

impl PassIndex<'_> {
    /// The first place in `start..=last` where the ids `wanted` occur in order.
    fn find(
        &self,
        wanted: &[u32],
        start: usize,
        last: usize,
        work: &mut Work<'_>,
    ) -> Result<Option<usize>, Failure> {
        let m = wanted.len();
        // The pattern line with the fewest places it could be at: the anchor.
        let mut anchor: Option<(usize, usize, &[u32])> = None;
        for (j, &id) in wanted.iter().enumerate() {
            let places = &self.postings[id as usize];
            let from = places.partition_point(|&q| (q as usize) < start + j);
            let to = places.partition_point(|&q| (q as usize) <= last + j);
            if anchor.is_none_or(|(_, _, best)| to - from < best.len()) {
                anchor = Some((j, from, &places[from..to]));
            }
        }
        work.spend(m.saturating_mul(2 * (usize::BITS - self.ids.len().leading_zeros()) as usize))?;
        let Some((j, _, candidates)) = anchor else {
            return Ok(None);
        };
        let scan = last - start + 1 + m;
        if candidates.len().saturating_mul(m) <= scan {
            for &place in candidates {
                let i = place as usize - j;
                let same = wanted
                    .iter()
                    .zip(&self.ids[i..])
                    .take_while(|(a, b)| a == b)
                    .count();
                work.spend(same + 1)?;
                if same == m {
                    return Ok(Some(i));
                }
            }
            return Ok(None);
        }
        // Many candidates: one linear scan (Knuth-Morris-Pratt) is cheaper than checking each.
        work.spend(scan + m)?;
        Ok(kmp(&self.ids[start..last + m], wanted).map(|i| start + i))
    }
}

/// Where `needle` first occurs in `haystack`, in time linear in both.
fn kmp(haystack: &[u32], needle: &[u32]) -> Option<usize> {
    let m = needle.len();
    // fail[i]: the length of the longest proper prefix of needle[..=i] that is also its suffix.
    let mut fail = vec![0usize; m];
    let mut k = 0;
    for i in 1..m {
        while k > 0 && needle[i] != needle[k] {
            k = fail[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut k = 0;
    for (i, &id) in haystack.iter().enumerate() {
        while k > 0 && id != needle[k] {
            k = fail[k - 1];
        }
        if id == needle[k] {
            k += 1;
        }
        if k == m {
            return Some(i + 1 - m);
        }
    }
    None
}

/// Maps typographic punctuation and exotic spaces to ASCII, and drops zero-width no-break spaces
/// (byte-order marks). Public only with the cargo feature `test-utils`, for the tests of the
/// matching passes.
pub fn normalise(s: &str) -> String {
    s.chars().filter_map(ascii_twin).collect()
}

/// [`normalise`], without allocating when there is nothing to change.
fn normalised(s: &str) -> Cow<'_, str> {
    if s.chars().all(|c| ascii_twin(c) == Some(c)) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(normalise(s))
    }
}

/// What `c` becomes in the most forgiving pass; `None`: it is dropped.
fn ascii_twin(c: char) -> Option<char> {
    Some(match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{FF07}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
        | '\u{00BB}' | '\u{FF02}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        '\u{FEFF}' => return None,
        other => other,
    })
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
    let loose = index.pass(PASSES - 1);
    let old = chunk.old_lines();
    let missing = old.iter().find(|wanted| {
        !wanted.trim().is_empty()
            && !loose
                .by_key
                .get(&key(PASSES - 1, wanted))
                .is_some_and(|&id| {
                    loose.postings[id as usize]
                        .last()
                        .is_some_and(|&last| last as usize >= at)
                })
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
    fn the_indexed_search_agrees_with_comparing_everywhere() {
        let lines = v(&["a", "b", "a", "b", "c", "a", "b", "c"]);
        let naive = |pattern: &[String], start: usize| {
            (start..=lines.len().saturating_sub(pattern.len()))
                .find(|&i| pattern.iter().zip(&lines[i..]).all(|(p, l)| p == l))
        };
        for pattern in [
            v(&["a", "b"]),
            v(&["a", "b", "c"]),
            v(&["b", "c"]),
            v(&["c"]),
        ] {
            for start in 0..lines.len() {
                assert_eq!(
                    seek(&lines, &pattern, start, false),
                    naive(&pattern, start),
                    "{pattern:?} from {start}"
                );
            }
        }
        // The second pass finds `a  ` as `a`.
        let spaced = v(&["a", "b", "x", "a  ", "b", "c"]);
        assert_eq!(seek(&spaced, &v(&["a", "b", "c"]), 0, false), Some(3));
        // KMP over a pattern whose lines all repeat.
        let many = v(&["x"; 50]);
        let mut hay = v(&["x"; 40]);
        hay.push("y".into());
        hay.extend(v(&["x"; 60]));
        assert_eq!(seek(&hay, &many, 0, false), Some(41));
        assert_eq!(kmp(&[1, 1, 2, 1, 1, 1, 2], &[1, 1, 2]), Some(0));
        assert_eq!(kmp(&[1, 2, 1, 1, 1, 2], &[1, 1, 2]), Some(3));
        assert_eq!(kmp(&[1, 2, 1], &[1, 1]), None);
    }

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
