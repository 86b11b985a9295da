//! How many bytes one call may write: the `content` of `write_file` and the text of
//! `apply_patch` are the model's output, as long as its provider sends, so each call is bounded
//! by `FilesConfig::max_write_bytes` (10 MiB by default). Over it, the call is a bad argument and
//! the workspace is left exactly as it was: no file, no directory, no temporary file.

use crate::common;

use agent_core::SkillContext;
use agent_std_tools::FilesConfig;
use common::{call, put, snapshot};
use serde_json::json;

/// The default limit, written out: 10 MiB.
const TEN_MIB: usize = 10 * 1024 * 1024;

/// An `Add File` patch of `path` whose text is exactly `len` bytes long.
fn add_patch(path: &str, len: usize) -> String {
    let head = format!("*** Begin Patch\n*** Add File: {path}\n+");
    let tail = "\n*** End Patch";
    format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()))
}

#[tokio::test]
async fn a_write_over_the_default_limit_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "keep.txt", "old\n");
    let ctx = SkillContext::new(tmp.path());
    let before = snapshot(tmp.path());
    let big = "x".repeat(TEN_MIB + 1);
    for path in ["keep.txt", "new/dir/big.txt"] {
        let answer = call(&ctx, "write_file", json!({"path": path, "content": big})).await;
        assert_eq!(
            answer.err(),
            format!(
                "invalid arguments: `content`: {} bytes, but one write_file call writes \
                 at most {TEN_MIB} bytes (FilesConfig::max_write_bytes), so nothing was written. \
                 Write a smaller file, or write it in parts: the first with write_file, the rest \
                 added with apply_patch",
                TEN_MIB + 1
            )
        );
    }
    let answer = call(
        &ctx,
        "apply_patch",
        json!({"patch": add_patch("new/big.txt", TEN_MIB + 1)}),
    )
    .await;
    assert!(
        answer
            .err()
            .contains("one apply_patch call writes at most 10485760 bytes"),
        "{}",
        answer.text
    );
    assert_eq!(snapshot(tmp.path()), before);
    // The limit itself is allowed.
    let answer = call(
        &ctx,
        "write_file",
        json!({"path": "keep.txt", "content": &big[..TEN_MIB]}),
    )
    .await;
    answer.expect_ok();
    assert_eq!(
        std::fs::metadata(tmp.path().join("keep.txt"))
            .unwrap()
            .len(),
        TEN_MIB as u64
    );
}

#[tokio::test]
async fn the_limit_comes_from_files_config() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path()).with_extension(FilesConfig {
        max_write_bytes: 100,
        ..FilesConfig::default()
    });
    let answer = call(
        &ctx,
        "write_file",
        json!({"path": "a.txt", "content": "x".repeat(101)}),
    )
    .await;
    assert!(
        answer
            .err()
            .contains("`content`: 101 bytes, but one write_file call writes at most 100 bytes"),
        "{}",
        answer.text
    );
    let answer = call(
        &ctx,
        "apply_patch",
        json!({"patch": add_patch("b.txt", 101)}),
    )
    .await;
    assert_eq!(
        answer.err(),
        "invalid arguments: `patch`: 101 bytes, but one apply_patch call writes at most \
         100 bytes (FilesConfig::max_write_bytes), so nothing was written. Split it into smaller \
         patches"
    );
    assert!(snapshot(tmp.path()).is_empty());
    call(
        &ctx,
        "write_file",
        json!({"path": "a.txt", "content": "x".repeat(100)}),
    )
    .await
    .expect_ok();
    call(
        &ctx,
        "apply_patch",
        json!({"patch": add_patch("b.txt", 100)}),
    )
    .await
    .expect_ok();
    assert_eq!(snapshot(tmp.path()).len(), 2);
}
