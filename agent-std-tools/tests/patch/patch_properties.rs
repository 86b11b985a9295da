//! Patches produced by diffing two random texts (with the `similar` crate, rendered as V4A with
//! every unchanged line as context) apply back exactly, and the reversed patch takes the result
//! back to the original.

use agent_std_tools::patch::{Hunk, apply_chunks, parse};
use proptest::prelude::*;
use similar::{ChangeTag, TextDiff};

/// A V4A patch that turns `old` into `new`: one `@@` section holding the whole file.
fn diff(old: &str, new: &str) -> String {
    let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n@@\n");
    for change in TextDiff::from_lines(old, new).iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Equal => ' ',
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
        };
        patch.push(sign);
        patch.push_str(change.value().trim_end_matches('\n'));
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

fn apply(original: &str, patch: &str) -> Result<String, String> {
    let parsed = parse(patch).map_err(|e| e.0)?;
    match &parsed.hunks[..] {
        [Hunk::Update { chunks, .. }] => {
            apply_chunks(original, "f.txt", chunks).map_err(|e| e.to_string())
        }
        other => Err(format!("unexpected hunks {other:?}")),
    }
}

/// Texts of a few lines drawn from a small vocabulary (so lines repeat and diffs have context),
/// each ending with a newline.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "alpha",
            "beta",
            "gamma",
            "    indented",
            "fn x() {}",
            "}",
            "",
        ]),
        1..12,
    )
    .prop_map(|lines| lines.iter().map(|l| format!("{l}\n")).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_diff_applies_back_exactly_and_its_reverse_is_the_identity(old in text(), new in text()) {
        let forward = diff(&old, &new);
        let applied = apply(&old, &forward);
        prop_assert_eq!(applied, Ok(new.clone()), "patch:\n{}", forward);
        let backward = diff(&new, &old);
        let reverted = apply(&new, &backward);
        prop_assert_eq!(reverted, Ok(old.clone()), "reverse:\n{}", backward);
    }
}
