//! `apply_patch` in bounded work: many hunks that match only loosely, a long context over
//! repeated lines; a cancelled patch changes nothing; a first line with a byte-order mark matches.
//!
//! No test asserts a duration. A generous `tokio::time::timeout` guards each call that once ran
//! for minutes, so that the old behaviour fails the test instead of hanging it.

mod common;

use std::time::Duration;

use agent_core::{CancellationToken, SkillContext, SkillError};
use common::{Answer, call, get, put, snapshot};
use serde_json::json;

/// How long a call may take before the test calls it hung: far longer than any of them needs.
const HANG_GUARD: Duration = Duration::from_secs(60);

async fn guarded(ctx: &SkillContext, name: &str, args: serde_json::Value) -> Answer {
    tokio::time::timeout(HANG_GUARD, call(ctx, name, args))
        .await
        .unwrap_or_else(|_| panic!("`{name}` did not finish within {HANG_GUARD:?}"))
}

fn cancelled(root: &std::path::Path) -> SkillContext {
    let token = CancellationToken::new();
    token.cancel();
    SkillContext::new(root).with_cancellation(token)
}

async fn patch(ctx: &SkillContext, body: &str) -> Answer {
    guarded(
        ctx,
        "apply_patch",
        json!({"patch": format!("*** Begin Patch\n{body}\n*** End Patch\n")}),
    )
    .await
}

#[tokio::test]
async fn many_hunks_that_match_only_loosely_apply_in_bounded_work() {
    // Each context line differs from the file only in its dashes, so only the last, most
    // forgiving pass finds it; the others used to scan the rest of the file for every hunk.
    let tmp = tempfile::tempdir().unwrap();
    let lines = 100_000;
    let file: String = (0..lines)
        .map(|i| format!("item {i} \u{2013} x\n"))
        .collect();
    put(tmp.path(), "f.txt", &file);
    let mut body = String::from("*** Update File: f.txt\n");
    for i in (0..lines).step_by(4) {
        body.push_str(&format!(
            "@@\n item {i} - x\n-item {} \u{2013} x\n+changed {}\n",
            i + 1,
            i + 1
        ));
    }
    let ctx = SkillContext::new(tmp.path());
    let answer = patch(&ctx, body.trim_end()).await;
    assert_eq!(
        answer.expect_ok(),
        "Success. Updated the following files:\nM f.txt"
    );
    let after = get(tmp.path(), "f.txt");
    assert_eq!(after.lines().count(), lines);
    assert_eq!(after.lines().nth(1), Some("changed 1"));
    assert_eq!(after.lines().nth(99_997), Some("changed 99997"));
    assert_eq!(after.lines().nth(99_998), Some("item 99998 \u{2013} x"));
}

#[tokio::test]
async fn a_long_context_over_repeated_lines_applies_in_bounded_work() {
    // 60,000 identical lines, then one that matches only with its dash made ASCII: the
    // context (30,000 lines) almost matches at every place before it, in every pass.
    let tmp = tempfile::tempdir().unwrap();
    let mut file = "same\n".repeat(60_000);
    file.push_str("end \u{2013}\ntail\n");
    put(tmp.path(), "f.txt", &file);
    let mut body = String::from("*** Update File: f.txt\n");
    body.push_str(&" same\n".repeat(30_000));
    body.push_str(" end -\n-tail\n+TAIL");
    let ctx = SkillContext::new(tmp.path());
    let answer = patch(&ctx, &body).await;
    assert_eq!(
        answer.expect_ok(),
        "Success. Updated the following files:\nM f.txt"
    );
    assert!(get(tmp.path(), "f.txt").ends_with("same\nend \u{2013}\nTAIL\n"));
}

#[tokio::test]
async fn a_cancelled_patch_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "a.txt", "one\ntwo\n");
    let before = snapshot(tmp.path());
    let result = tokio::time::timeout(
        HANG_GUARD,
        agent_std_tools::patch::apply_patch(
            &cancelled(tmp.path()),
            "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+2\n*** End Patch".into(),
        ),
    )
    .await
    .expect("hung");
    assert!(matches!(result, Err(SkillError::Cancelled)), "{result:?}");
    assert_eq!(snapshot(tmp.path()), before);
}

#[tokio::test]
async fn a_first_line_with_a_byte_order_mark_matches_and_keeps_it() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "bom.txt", "\u{feff}first\nsecond\nthird\n");
    put(tmp.path(), "bom2.txt", "\u{feff}first\r\nsecond\r\n");
    let ctx = SkillContext::new(tmp.path());
    let answer = patch(
        &ctx,
        "*** Update File: bom.txt\n first\n-second\n+2nd\n\
         *** Update File: bom2.txt\n-first\n+FIRST\n second",
    )
    .await;
    answer.expect_ok();
    assert_eq!(get(tmp.path(), "bom.txt"), "\u{feff}first\n2nd\nthird\n");
    assert_eq!(get(tmp.path(), "bom2.txt"), "\u{feff}FIRST\r\nsecond\r\n");
}
