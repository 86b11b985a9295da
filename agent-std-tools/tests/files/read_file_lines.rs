//! `read_file` cuts long lines by characters, not bytes, wherever they are in the file.
//! (Its memory is measured in `read_file_bounds.rs`.)

use crate::common;

use std::time::Duration;

use agent_core::SkillContext;
use agent_std_tools::FilesConfig;
use common::{Answer, call, put};
use serde_json::json;

/// How long a call may take before the test calls it hung: far longer than any of them needs.
const HANG_GUARD: Duration = Duration::from_secs(60);

async fn guarded(ctx: &SkillContext, name: &str, args: serde_json::Value) -> Answer {
    tokio::time::timeout(HANG_GUARD, call(ctx, name, args))
        .await
        .unwrap_or_else(|_| panic!("`{name}` did not finish within {HANG_GUARD:?}"))
}

#[tokio::test]
async fn read_file_cuts_long_lines_by_characters_not_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    put(
        tmp.path(),
        "mixed.txt",
        format!("short\nalso short\n{}\r\nlast\n", "é".repeat(100_000)),
    );
    let ctx = SkillContext::new(tmp.path()).with_extension(FilesConfig {
        max_read_chars: 50,
        ..FilesConfig::default()
    });
    let answer = guarded(&ctx, "read_file", json!({"path": "mixed.txt"})).await;
    assert_eq!(
        answer.expect_ok(),
        "short\nalso short\n\n[showing lines 1-2 of 4: the output limit of 50 characters was reached. Read on with offset=3.]"
    );
    let answer = guarded(&ctx, "read_file", json!({"path": "mixed.txt", "offset": 3})).await;
    assert_eq!(
        answer.expect_ok(),
        format!(
            "{}\n\n[line 3 is 100000 characters long; showing its first 50. Read on with offset=4.]",
            "é".repeat(50)
        )
    );
    let answer = guarded(&ctx, "read_file", json!({"path": "mixed.txt", "offset": 4})).await;
    assert_eq!(
        answer.expect_ok(),
        "last\n\n[showing lines 4-4 of 4; end of file]"
    );
}
