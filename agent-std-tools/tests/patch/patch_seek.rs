//! The indexed context search of `apply_patch` finds exactly what comparing the pattern at every
//! place, pass by pass, finds (the search it replaced, kept here as the reference).

use agent_std_tools::patch::{normalise, seek};
use proptest::prelude::*;

/// The reference: each pass compares the pattern at every place from `start`.
fn naive(lines: &[String], pattern: &[String], start: usize, end_of_file: bool) -> Option<usize> {
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

/// Lines from a small vocabulary, with the variants the passes forgive.
fn line() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a",
        "a ",
        " a",
        "b",
        "b\t",
        "c - d",
        "c \u{2013} d",
        "\u{feff}a",
        "",
        "  ",
        "x",
    ])
    .prop_map(str::to_owned)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn indexed_seek_matches_the_reference(
        lines in prop::collection::vec(line(), 0..40),
        pattern in prop::collection::vec(line(), 0..6),
        start in 0usize..45,
        end_of_file: bool,
    ) {
        prop_assert_eq!(
            seek(&lines, &pattern, start, end_of_file),
            naive(&lines, &pattern, start, end_of_file)
        );
    }
}
