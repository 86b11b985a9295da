//! `search_files` within bounds: a regex too big to compile is refused, a line longer than the
//! limit ends its file's search instead of being buffered, a cancelled search stops.
//!
//! No test asserts a duration. A generous `tokio::time::timeout` guards each call that once ran
//! for minutes, so that the old behaviour fails the test instead of hanging it.

use crate::common;

use std::time::Duration;

use agent_core::{CancellationToken, SkillContext, SkillError};
use common::{Answer, call, put};
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

#[tokio::test]
async fn a_regex_too_big_to_compile_is_a_clear_bad_argument() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "a.txt", "a".repeat(200_000));
    let ctx = SkillContext::new(tmp.path());
    let answer = guarded(&ctx, "search_files", json!({"pattern": "a{100000}"})).await;
    let text = answer.err();
    assert!(text.starts_with("invalid arguments: `pattern`"), "{text}");
    assert!(text.contains("too big"), "{text}");
}

#[tokio::test]
async fn a_line_longer_than_the_limit_is_reported_not_buffered() {
    let tmp = tempfile::tempdir().unwrap();
    let mut long = String::from("needle first\n");
    long.push_str(&"x".repeat(5 * 1024 * 1024));
    long.push_str(" needle in the long line\nneedle after\n");
    put(tmp.path(), "big.txt", long);
    put(tmp.path(), "small.txt", "a needle\n");
    let ctx = SkillContext::new(tmp.path());
    let answer = guarded(&ctx, "search_files", json!({"pattern": "needle"})).await;
    let text = answer.expect_ok();
    assert!(
        text.starts_with("big.txt:1:needle first\nsmall.txt:1:a needle"),
        "{text}"
    );
    assert!(
        !text.contains("needle after"),
        "the search of big.txt ends at its long line: {text}"
    );
    assert!(
        text.contains(
            "[1 file has a line longer than 4194304 bytes and was searched only up to it: big.txt]"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_cancelled_search_stops_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..200 {
        put(tmp.path(), &format!("d{}/f{i}.txt", i % 10), "needle\n");
    }
    let result = tokio::time::timeout(
        HANG_GUARD,
        agent_std_tools::search::search_files(
            &cancelled(tmp.path()),
            "needle".into(),
            None,
            None,
            None,
        ),
    )
    .await
    .expect("hung");
    assert!(
        matches!(result, Err(SkillError::Cancelled)),
        "a search whose run was cancelled stops: {result:?}"
    );
}
