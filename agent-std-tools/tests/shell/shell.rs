//! `run_shell` through `Registry::run_many`: real `sh` child processes, real process groups.

use crate::common;

use std::time::Duration;

use agent_core::{CancellationToken, SkillContext, ToolCall};
use agent_std_tools::ShellConfig;
use common::{call, registry};
use serde_json::json;

fn ws() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    (tmp, ctx)
}

/// Whether the process is gone (or a zombie nobody reaped yet: it runs no more).
fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Waits (up to a generous bound, polling) for the process to be gone.
async fn wait_gone(pid: i32) -> bool {
    for _ in 0..200 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// A `sleep` argument no other test uses: the command runs in a PID namespace of its own, so
/// the process is found by its command line in this side's `/proc`, not by the `$!` it sees.
fn marker(test: u32) -> String {
    format!("30.{}{test}", std::process::id())
}

/// The pids (in this side's `/proc`) of the live processes running `sleep <marker>`.
fn processes(marker: &str) -> Vec<i32> {
    let needle = format!("sleep\0{marker}\0");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(&needle) && !is_gone(pid) {
            found.push(pid);
        }
    }
    found
}

/// Waits (polling, up to a generous bound) for a process running `sleep <marker>` to start.
async fn find_process(marker: &str) -> i32 {
    for _ in 0..200 {
        if let Some(&pid) = processes(marker).first() {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no process runs `sleep {marker}`");
}

#[tokio::test]
async fn reports_exit_code_stdout_and_stderr() {
    let (_tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "echo out; echo err >&2; exit 3"}),
    )
    .await;
    assert_eq!(
        answer.expect_ok(),
        "exit code: 3\n[stdout]\nout\n[stderr]\nerr"
    );
    let answer = call(&ctx, "run_shell", json!({"command": "true"})).await;
    assert_eq!(answer.expect_ok(), "exit code: 0\n(no output)");
}

#[tokio::test]
async fn runs_in_the_workspace_root() {
    let (tmp, ctx) = ws();
    common::put(tmp.path(), "marker.txt", "here");
    let answer = call(&ctx, "run_shell", json!({"command": "pwd; cat marker.txt"})).await;
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    assert_eq!(
        answer.expect_ok(),
        format!("exit code: 0\n[stdout]\n{}\nhere", root.display())
    );
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group_and_says_so() {
    let (_tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "run_shell",
        json!({
            "command": format!("sleep {} & echo started; sleep 30", marker(1)),
            "timeout_ms": 500
        }),
    )
    .await;
    let text = answer.expect_ok();
    assert!(
        text.starts_with(
            "timed out after 500ms: the command and every process it started were killed"
        ),
        "{text}"
    );
    assert!(
        text.contains("exit code: none (killed by signal 9)"),
        "{text}"
    );
    assert!(
        text.contains("[stdout]\nstarted"),
        "output before the timeout is kept: {text}"
    );
    assert!(
        processes(&marker(1)).is_empty(),
        "the background sleep survived the timeout: {text}"
    );
}

#[tokio::test]
async fn the_default_timeout_comes_from_shell_config() {
    let (_tmp, ctx) = ws();
    let ctx = ctx.with_extension(ShellConfig {
        default_timeout: Duration::from_millis(300),
        ..ShellConfig::default()
    });
    let answer = call(&ctx, "run_shell", json!({"command": "sleep 20"})).await;
    assert!(
        answer.expect_ok().starts_with("timed out after 300ms"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn timeouts_beyond_the_maximum_or_zero_are_bad_arguments() {
    let (_tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "true", "timeout_ms": 600_001}),
    )
    .await;
    assert_eq!(
        answer.err(),
        "invalid arguments: `timeout_ms`: must be at most 600000"
    );
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "true", "timeout_ms": 0}),
    )
    .await;
    assert!(answer.err().starts_with("invalid arguments: `timeout_ms`"));
    let ctx = ctx.with_extension(ShellConfig {
        max_timeout: Duration::from_secs(5),
        ..ShellConfig::default()
    });
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "true", "timeout_ms": 6_000}),
    )
    .await;
    assert_eq!(
        answer.err(),
        "invalid arguments: `timeout_ms`: must be at most 5000"
    );
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_counts_the_cut() {
    let (_tmp, ctx) = ws();
    let ctx = ctx.with_extension(ShellConfig {
        max_output_chars: 100,
        ..ShellConfig::default()
    });
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "printf 'START'; head -c 1000000 /dev/zero | tr '\\0' x; printf 'END'"}),
    )
    .await;
    let text = answer.expect_ok();
    let stdout = text.strip_prefix("exit code: 0\n[stdout]\n").expect(text);
    let (head, rest) = stdout.split_once("\n[... ").unwrap();
    let (cut, tail) = rest.split_once(" characters cut ...]\n").unwrap();
    assert_eq!(head, format!("START{}", "x".repeat(45)));
    assert_eq!(tail, format!("{}END", "x".repeat(47)));
    assert_eq!(cut, (1_000_008 - 100).to_string());
}

#[tokio::test]
async fn large_stdout_and_stderr_are_read_concurrently() {
    // Each stream is far larger than a pipe buffer; reading one after the other would deadlock.
    let (_tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "run_shell",
        json!({
            "command": "head -c 300000 /dev/zero | tr '\\0' o; head -c 300000 /dev/zero | tr '\\0' e >&2; echo; echo tail-out; echo tail-err >&2",
            "timeout_ms": 60_000
        }),
    )
    .await;
    let text = answer.expect_ok();
    assert!(
        text.starts_with("exit code: 0\n[stdout]\nooo"),
        "{}",
        &text[..100]
    );
    assert!(
        text.contains("tail-out\n[stderr]\neee"),
        "stderr follows stdout"
    );
    assert!(text.ends_with("tail-err"));
    assert_eq!(text.matches("characters cut").count(), 2);
}

#[tokio::test]
async fn standard_input_is_empty_so_readers_do_not_hang() {
    let (_tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "cat; read line; echo done", "timeout_ms": 20_000}),
    )
    .await;
    assert_eq!(answer.expect_ok(), "exit code: 0\n[stdout]\ndone");
}

#[tokio::test]
async fn cancelling_the_run_kills_the_process_group() {
    let (_tmp, ctx) = ws();
    let token = CancellationToken::new();
    let ctx = ctx.with_cancellation(token.clone());
    let calls = [ToolCall::new(
        "1",
        "run_shell",
        json!({"command": format!("sleep {} & wait", marker(2))}),
    )];
    let run = tokio::spawn({
        let ctx = ctx.clone();
        async move { registry().run_many(&calls, &ctx).await }
    });
    let background = find_process(&marker(2)).await;
    token.cancel();
    let results = run.await.unwrap();
    assert!(results[0].is_error());
    assert!(
        results[0].content().contains("cancelled"),
        "{}",
        results[0].content()
    );
    assert!(
        wait_gone(background).await,
        "the background sleep {background} survived cancellation"
    );
}

#[tokio::test]
async fn a_background_process_is_killed_when_the_command_exits() {
    let (_tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": format!("sleep {} & echo hi", marker(3)), "timeout_ms": 60_000}),
    )
    .await;
    let text = answer.expect_ok();
    assert!(text.starts_with("exit code: 0\n"), "{text}");
    assert!(text.contains("[stdout]\nhi"), "{text}");
    // Gone by the time the result is back, not eventually: the call waited for it.
    assert!(
        processes(&marker(3)).is_empty(),
        "the background sleep outlived its call"
    );
}

#[tokio::test]
async fn a_call_past_its_disk_quota_is_stopped_in_the_workspace_and_in_tmpdir() {
    let (tmp, ctx) = ws();
    let ctx = ctx.with_extension(ShellConfig {
        max_disk_growth: Some(16 * 1024 * 1024),
        ..ShellConfig::default()
    });
    // 1 GiB asked for, in the workspace and then in TMPDIR: each stopped near the quota. (The
    // files are written with fsync, so the free space the quota reads drops as they grow.)
    for target in ["big", "$TMPDIR/big"] {
        let command = format!(
            "dd if=/dev/zero of={target} bs=1M count=1024 oflag=dsync 2>/dev/null; echo finished"
        );
        let answer = call(&ctx, "run_shell", json!({ "command": command })).await;
        let text = answer.expect_ok();
        assert!(
            text.contains("stopped: the command added"),
            "{target}: {text}"
        );
        assert!(!text.contains("finished"), "{target}: {text}");
    }
    let kept = std::fs::metadata(tmp.path().join("big")).map_or(0, |m| m.len());
    assert!(
        kept < 512 * 1024 * 1024,
        "{kept} bytes written past a 16 MiB quota"
    );
    // Within the quota (a generous one: other tests write on this filesystem too), a command
    // runs as before.
    let ctx = ctx.with_extension(ShellConfig {
        max_disk_growth: Some(1024 * 1024 * 1024),
        ..ShellConfig::default()
    });
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "head -c 1000 /dev/zero > small && echo ok"}),
    )
    .await;
    assert!(answer.expect_ok().contains("ok"), "{}", answer.text);
}
