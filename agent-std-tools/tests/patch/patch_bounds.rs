//! `apply_patch` in bounded work and memory: many hunks that match only loosely, a long context
//! over repeated lines; a 2 GiB file deleted, refused for an update or a move, and put back by a
//! patch that fails after deleting it, each in a process of its own whose peak memory is
//! measured; files at and over the size limits; a FIFO to delete or update refused as one; a
//! cancelled patch changes nothing; a first line with a byte-order mark matches.
//!
//! No test asserts a duration. A generous `tokio::time::timeout` guards each call that once ran
//! for minutes, so that the old behaviour fails the test instead of hanging it.

use crate::common;

use std::fs::File;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::Path;
use std::time::Duration;

use agent_core::{CancellationToken, SkillContext, SkillError};
use agent_std_tools::patch::{MAX_FILE_BYTES, MAX_TOTAL_BYTES};
use common::child::{child_args, in_child, report};
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

// ---- files of any size ----

/// The size of the audit's file: 2 GiB, sparse (`set_len`), so it costs no disk.
const BIG: u64 = 2 << 30;

/// Peak memory a child process may reach: its runtime and the patch take a few MB; reading the
/// 2 GiB file would take 2 GB.
const PEAK_BOUND: u64 = 100 << 20;

/// Creates a sparse file of [`BIG`] bytes with marks at its start and end; returns its inode.
fn sparse(root: &Path, rel: &str) -> u64 {
    let file = File::create(root.join(rel)).unwrap();
    file.set_len(BIG).unwrap();
    file.write_all_at(b"head", 0).unwrap();
    file.write_all_at(b"tail", BIG - 4).unwrap();
    file.metadata().unwrap().ino()
}

/// Asserts the sparse file at `rel` is still the very one [`sparse`] made, marks and all.
fn assert_intact(root: &Path, rel: &str, ino: u64) {
    let file = File::open(root.join(rel)).unwrap_or_else(|e| panic!("`{rel}`: {e}"));
    let meta = file.metadata().unwrap();
    assert_eq!((meta.ino(), meta.len()), (ino, BIG), "`{rel}` was replaced");
    let mut mark = [0; 4];
    file.read_exact_at(&mut mark, 0).unwrap();
    assert_eq!(&mark, b"head");
    file.read_exact_at(&mut mark, BIG - 4).unwrap();
    assert_eq!(&mark, b"tail");
}

/// Applies `body` in `root` in a process of its own; returns the answer and the process's peak.
fn patch_in_child(root: &Path, body: &str) -> common::child::Measured {
    let measured = in_child(
        "patch_bounds::child_applies_a_patch",
        json!({
            "root": root,
            "patch": format!("*** Begin Patch\n{body}\n*** End Patch\n"),
        }),
    );
    eprintln!(
        "peak memory of the child: {} MB",
        measured.peak_bytes / 1_000_000
    );
    measured
}

/// Not a test of its own: the process [`patch_in_child`] starts.
#[tokio::test]
#[ignore = "run as a child process by the tests that measure peak memory"]
async fn child_applies_a_patch() {
    let Some(args) = child_args() else {
        return;
    };
    let ctx = SkillContext::new(args["root"].as_str().unwrap());
    report(&guarded(&ctx, "apply_patch", json!({"patch": args["patch"]})).await);
}

fn no_temp_files(root: &Path) {
    for entry in std::fs::read_dir(root).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(
            !name.to_string_lossy().contains(".eugene-"),
            "a temporary file was left: {name:?}"
        );
    }
}

#[test]
fn deleting_a_2_gib_file_does_not_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    sparse(tmp.path(), "big.bin");
    put(tmp.path(), "small.txt", "a\n");
    let measured = patch_in_child(
        tmp.path(),
        "*** Delete File: big.bin\n*** Update File: small.txt\n-a\n+b",
    );
    assert_eq!(
        measured.answer.expect_ok(),
        "Success. Updated the following files:\nD big.bin\nM small.txt"
    );
    assert!(!tmp.path().join("big.bin").exists());
    assert_eq!(get(tmp.path(), "small.txt"), "b\n");
    no_temp_files(tmp.path());
    assert!(
        measured.peak_bytes < PEAK_BOUND,
        "deleting a {BIG}-byte file took {} bytes of memory",
        measured.peak_bytes
    );
}

#[test]
fn updating_or_moving_a_2_gib_file_is_refused_without_reading_it() {
    let tmp = tempfile::tempdir().unwrap();
    let ino = sparse(tmp.path(), "big.log");
    put(tmp.path(), "small.txt", "a\n");
    for body in [
        "*** Update File: small.txt\n-a\n+b\n*** Update File: big.log\n head\n+more",
        "*** Update File: big.log\n*** Move to: moved.log",
    ] {
        let measured = patch_in_child(tmp.path(), body);
        let text = measured.answer.err();
        assert!(text.contains("no file was changed"), "{text}");
        assert!(
            text.contains("`big.log`") && text.contains(&BIG.to_string()),
            "names the file and its size: {text}"
        );
        assert!(
            text.contains(&MAX_FILE_BYTES.to_string()) && text.contains("4 MiB"),
            "says the limit: {text}"
        );
        assert!(
            text.contains("run_shell") && text.contains("mv"),
            "says what to do instead: {text}"
        );
        assert!(
            measured.peak_bytes < PEAK_BOUND,
            "refusing a {BIG}-byte file took {} bytes of memory",
            measured.peak_bytes
        );
        assert_intact(tmp.path(), "big.log", ino);
        assert_eq!(get(tmp.path(), "small.txt"), "a\n");
        assert!(!tmp.path().join("moved.log").exists());
        no_temp_files(tmp.path());
    }
}

#[test]
fn a_patch_that_fails_after_deleting_a_2_gib_file_puts_it_back() {
    let tmp = tempfile::tempdir().unwrap();
    let ino = sparse(tmp.path(), "big.bin");
    put(tmp.path(), "a.txt", "a\n");
    // Everything stages; then `big.bin` goes, `a.txt` is renamed into place, and the file `d`
    // meets the directory `d` that staging `d/f.txt` created: that rename fails, and both must
    // be put back.
    let measured = patch_in_child(
        tmp.path(),
        "*** Delete File: big.bin\n*** Update File: a.txt\n-a\n+A\n\
         *** Add File: d\n+x\n*** Add File: d/f.txt\n+f",
    );
    let text = measured.answer.err();
    assert!(text.contains("no file was changed"), "{text}");
    assert_intact(tmp.path(), "big.bin", ino);
    assert_eq!(get(tmp.path(), "a.txt"), "a\n");
    assert!(!tmp.path().join("d").exists());
    no_temp_files(tmp.path());
    assert!(
        measured.peak_bytes < PEAK_BOUND,
        "deleting and restoring a {BIG}-byte file took {} bytes of memory",
        measured.peak_bytes
    );
}

#[tokio::test]
async fn a_file_at_the_limit_is_patched_and_one_byte_more_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let line = format!("{}\n", "x".repeat(1023));
    let at_limit = line.repeat(MAX_FILE_BYTES as usize / line.len());
    assert_eq!(at_limit.len() as u64, MAX_FILE_BYTES);
    put(tmp.path(), "at.txt", &at_limit);
    put(tmp.path(), "over.txt", format!("{at_limit}y"));
    let ctx = SkillContext::new(tmp.path());
    patch(&ctx, "*** Update File: at.txt\n+added")
        .await
        .expect_ok();
    assert!(get(tmp.path(), "at.txt").ends_with("x\nadded\n"));
    let answer = patch(&ctx, "*** Update File: over.txt\n+added").await;
    let text = answer.err();
    assert!(
        text.contains("`over.txt`") && text.contains(&(MAX_FILE_BYTES + 1).to_string()),
        "{text}"
    );
    assert_eq!(get(tmp.path(), "over.txt"), format!("{at_limit}y"));
}

#[tokio::test]
async fn a_patch_over_the_total_limit_is_refused_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let line = format!("{}\n", "x".repeat(1023));
    let file = line.repeat(MAX_FILE_BYTES as usize / line.len());
    let count = MAX_TOTAL_BYTES / MAX_FILE_BYTES + 1;
    let mut body = String::new();
    for i in 0..count {
        put(tmp.path(), &format!("f{i}.txt"), &file);
        body.push_str(&format!("*** Update File: f{i}.txt\n+added {i}\n"));
    }
    let ctx = SkillContext::new(tmp.path());
    let answer = patch(&ctx, body.trim_end()).await;
    let text = answer.err();
    assert!(text.contains("no file was changed"), "{text}");
    assert!(
        text.contains(&MAX_TOTAL_BYTES.to_string()) && text.contains("split"),
        "says the limit and what to do: {text}"
    );
    for i in 0..count {
        assert_eq!(
            get(tmp.path(), &format!("f{i}.txt")),
            file,
            "f{i}.txt changed"
        );
    }
}

#[tokio::test]
async fn a_fifo_to_delete_or_update_is_refused_as_one_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("pipe");
    let c_fifo = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o644) }, 0);
    let ctx = SkillContext::new(tmp.path());
    // Deleted files are only checked, never opened; the refusal reads as one once opened does.
    for body in ["*** Delete File: pipe", "*** Update File: pipe\n+x"] {
        let answer = patch(&ctx, body).await;
        let text = answer.err();
        assert_eq!(
            text,
            "apply_patch failed, no file was changed: `pipe` is not a regular file but a FIFO (a \
             named pipe); only regular files are read or written",
            "{body}"
        );
        assert!(fifo.symlink_metadata().unwrap().file_type().is_fifo());
    }
}
