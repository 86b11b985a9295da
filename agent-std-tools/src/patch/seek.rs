//! Finding a chunk's lines in the file: four passes, each more forgiving than the last, over the
//! file's lines indexed once per pass ([`Index`]), with the work counted against the file's
//! budget (`budget.rs`).

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;

use super::budget::{Failure, Work};

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
pub(super) struct Index<'a> {
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
    pub(super) fn new(lines: &'a [String]) -> Index<'a> {
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
    pub(super) fn seek(
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

impl Index<'_> {
    /// The first of `old` that is not in the file at all after line `at`, by the most
    /// forgiving pass (blank lines aside): what a chunk that did not match is told about.
    pub(super) fn first_missing<'o>(&self, old: &[&'o str], at: usize) -> Option<&'o str> {
        let loose = self.pass(PASSES - 1);
        old.iter().copied().find(|wanted| {
            !wanted.trim().is_empty()
                && !loose
                    .by_key
                    .get(&key(PASSES - 1, wanted))
                    .is_some_and(|&id| {
                        loose.postings[id as usize]
                            .last()
                            .is_some_and(|&last| last as usize >= at)
                    })
        })
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
}
