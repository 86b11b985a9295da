//! `read_file`'s memory is bounded by its output limit, whatever the shape of the file: a file of
//! one line far longer than the limit is read in chunks, cut, and never held whole.
//!
//! The only test in its binary, so that the peak memory it measures (`VmHWM` of
//! `/proc/self/status`) is its own.

mod common;

use std::io::Write;
use std::time::Duration;

use agent_core::SkillContext;
use common::call;
use serde_json::json;

/// The peak resident memory of this process so far, in bytes.
fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("a VmHWM line");
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

#[tokio::test]
async fn one_long_line_is_cut_without_holding_the_file() {
    const LINE: usize = 48 * 1024 * 1024;
    let tmp = tempfile::tempdir().unwrap();
    {
        // Written a mebibyte at a time, so the test itself does not raise the peak.
        let mut file = std::fs::File::create(tmp.path().join("one.txt")).unwrap();
        let chunk = vec![b'x'; 1024 * 1024];
        for _ in 0..LINE / chunk.len() {
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b"\nsecond\n").unwrap();
    }
    let ctx = SkillContext::new(tmp.path());
    let before = peak_memory();
    let answer = tokio::time::timeout(
        Duration::from_secs(120),
        call(&ctx, "read_file", json!({"path": "one.txt", "limit": 5})),
    )
    .await
    .expect("read_file did not finish");
    let grown = peak_memory().saturating_sub(before);
    eprintln!("reading the {LINE}-byte line raised the peak memory by {grown} bytes");
    assert!(
        grown < 16 * 1024 * 1024,
        "reading one {LINE}-byte line raised the peak memory by {grown} bytes"
    );
    let text = answer.expect_ok();
    let (shown, notice) = text.split_once("\n\n").unwrap();
    assert_eq!(
        shown,
        "x".repeat(15_000),
        "the line's start, cut at the limit"
    );
    assert!(
        notice.starts_with("[line 1 is more than ") && notice.contains("showing its first 15000"),
        "{notice}"
    );
    assert!(notice.contains("Read on with offset=2."), "{notice}");
}
