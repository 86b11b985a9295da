//! `run_shell` attacked the way a hostile command would: escaping the time limit with `setsid`
//! and double forks, writing outside the workspace, reading a home directory's keys, reaching a
//! loopback port, signalling and reading the agent's process. Real commands, real processes.
//!
//! The sandbox tests need a kernel with Landlock (Linux 5.13 or later with `landlock` among the
//! active LSMs; ABI 6, Linux 6.12, for the signal tests): on a kernel without it they fail and say
//! so, they never pass by skipping.

use crate::common;

use std::path::Path;
use std::time::Duration;

use agent_core::{CancellationToken, SkillContext, ToolCall};
use agent_std_tools::{Confinement, ShellConfig};
use common::{call, registry};
use serde_json::json;

fn ws() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    (tmp, ctx)
}

fn with_config(ctx: SkillContext, config: ShellConfig) -> SkillContext {
    ctx.with_extension(config)
}

/// The Landlock ABI the kernel offers; fails the test, saying what is missing, below `at_least`.
fn require_landlock(at_least: i64) {
    // SAFETY: asks the kernel for its Landlock ABI version; no memory is passed.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    assert!(
        abi >= at_least,
        "this test needs the kernel's Landlock LSM at ABI {at_least} or later (got {abi}): \
         Linux 6.12+ with `landlock` in the `lsm=` boot parameter"
    );
}

/// Pids of live processes whose command line contains `needle` (NUL-separated arguments).
fn processes_running(needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X']));
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && text.contains(needle) {
            found.push(pid);
        }
    }
    found
}

/// A command line that leaves three `sleep`s behind, each escaping the process group a
/// different way, all with `marker` as their argument.
fn escapes(marker: u32) -> String {
    format!(
        "setsid sleep {marker} & \
         (setsid sh -c 'sleep {marker}' &) ; \
         sh -c 'sleep {marker} & exit 0' ; \
         (sleep {marker} &) ; \
         sleep 0.3"
    )
}

async fn wait_until_none_run(needle: &str) -> Vec<i32> {
    // The call has returned; killing is done then. Poll briefly only to tolerate /proc lag.
    for _ in 0..20 {
        let left = processes_running(needle);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    processes_running(needle)
}

#[tokio::test]
async fn setsid_and_double_forks_do_not_outlive_the_timeout() {
    let (_tmp, ctx) = ws();
    let marker = 3001 + (std::process::id() % 1000) * 10;
    let command = format!("{}; sleep 60", escapes(marker));
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": command, "timeout_ms": 1500}),
    )
    .await;
    let text = answer.expect_ok();
    assert!(text.starts_with("timed out after 1500ms"), "{text}");
    let left = wait_until_none_run(&format!("sleep {marker}")).await;
    assert!(left.is_empty(), "these escaped the timeout: {left:?}");
}

#[tokio::test]
async fn setsid_and_double_forks_do_not_outlive_a_command_that_exits() {
    let (_tmp, ctx) = ws();
    let marker = 3002 + (std::process::id() % 1000) * 10;
    let answer = call(&ctx, "run_shell", json!({"command": escapes(marker)})).await;
    assert!(
        answer.expect_ok().starts_with("exit code: 0"),
        "{}",
        answer.text
    );
    let left = wait_until_none_run(&format!("sleep {marker}")).await;
    assert!(left.is_empty(), "these outlived their call: {left:?}");
}

#[tokio::test]
async fn setsid_and_double_forks_do_not_outlive_cancellation() {
    let (tmp, ctx) = ws();
    let marker = 3003 + (std::process::id() % 1000) * 10;
    let token = CancellationToken::new();
    let ctx = ctx.with_cancellation(token.clone());
    let command = format!("{}; touch started; sleep 60", escapes(marker));
    let calls = [ToolCall::new("c", "run_shell", json!({"command": command}))];
    let run = registry().run_many(&calls, &ctx);
    let cancel = async {
        for _ in 0..200 {
            if tmp.path().join("started").exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        token.cancel();
    };
    let (results, ()) = tokio::join!(run, cancel);
    assert!(results[0].is_error(), "{}", results[0].content());
    let left = wait_until_none_run(&format!("sleep {marker}")).await;
    assert!(left.is_empty(), "these survived cancellation: {left:?}");
}

#[tokio::test]
async fn writes_outside_the_workspace_are_refused_and_inside_allowed() {
    require_landlock(1);
    let (tmp, ctx) = ws();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted");
    let command = format!(
        "echo x > '{}'; echo outside=$?; echo y > inside.txt; echo inside=$?; \
         echo z > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"",
        target.display()
    );
    let answer = call(&ctx, "run_shell", json!({ "command": command })).await;
    let text = answer.expect_ok();
    assert!(!target.exists(), "a file was written outside: {text}");
    assert!(
        text.contains("outside=") && !text.contains("outside=0"),
        "{text}"
    );
    assert!(text.contains("inside=0"), "{text}");
    assert!(
        text.contains("\nz"),
        "the private TMPDIR is writable: {text}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("inside.txt")).unwrap(),
        "y\n"
    );
}

#[tokio::test]
async fn the_private_tmpdir_is_gone_after_the_call() {
    let (_tmp, ctx) = ws();
    let answer = call(&ctx, "run_shell", json!({"command": "echo \"$TMPDIR\""})).await;
    let text = answer.expect_ok();
    let dir = text.lines().last().unwrap();
    assert!(dir.contains("eugene-shell-"), "{text}");
    assert!(!Path::new(dir).exists(), "{dir} was left behind");
}

#[tokio::test]
async fn keys_in_the_home_directory_cannot_be_read() {
    require_landlock(1);
    let (_tmp, ctx) = ws();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_x"), "PRIVATE-KEY-MATERIAL\n").unwrap();
    let ctx = with_config(
        ctx,
        ShellConfig {
            env: vec![("HOME".into(), home.path().display().to_string())],
            ..ShellConfig::default()
        },
    );
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "cat ~/.ssh/id_x; ls -a ~; cp ~/.ssh/id_x stolen; cat stolen"}),
    )
    .await;
    let text = answer.expect_ok();
    assert!(!text.contains("PRIVATE-KEY"), "{text}");
    assert!(text.contains("Permission denied"), "{text}");
}

#[tokio::test]
async fn the_system_stays_readable_and_programs_run() {
    require_landlock(1);
    let (_tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "run_shell",
        json!({"command": "head -c 4 /etc/hostname >/dev/null && echo etc-ok; ls /usr/bin | grep -c . >/dev/null && echo usr-ok; echo piped | tr a-z A-Z"}),
    )
    .await;
    let text = answer.expect_ok();
    assert!(text.contains("etc-ok"), "{text}");
    assert!(text.contains("usr-ok"), "{text}");
    assert!(text.contains("PIPED"), "{text}");
}

fn curl() -> &'static str {
    assert!(
        Path::new("/usr/bin/curl").exists(),
        "this test connects with curl: install it (apt-get install curl)"
    );
    "/usr/bin/curl"
}

#[tokio::test]
async fn loopback_connections_are_refused_unless_the_network_is_allowed() {
    require_landlock(4);
    let curl = curl();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("{curl} -s -m 3 http://127.0.0.1:{port}/ ; echo curl=$?");

    let (_tmp, ctx) = ws();
    let answer = call(&ctx, "run_shell", json!({ "command": command })).await;
    let text = answer.expect_ok().to_owned();
    assert!(!text.contains("curl=0"), "{text}");
    let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
    assert!(
        accepted.is_err(),
        "the sandboxed command reached the port: {text}"
    );

    // The same command with the network allowed does connect: the sandbox is what stopped it.
    let (_tmp2, ctx) = ws();
    let ctx = with_config(
        ctx,
        ShellConfig {
            network: true,
            ..ShellConfig::default()
        },
    );
    let serve = async {
        let (mut socket, _) = listener.accept().await.unwrap();
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buf = [0u8; 1024];
        let _ = socket.read(&mut buf).await;
        socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello")
            .await
            .unwrap();
    };
    let (answer, ()) = tokio::join!(
        call(&ctx, "run_shell", json!({ "command": command })),
        serve
    );
    let text = answer.expect_ok();
    assert!(text.contains("hello") && text.contains("curl=0"), "{text}");
}

#[tokio::test]
async fn processes_outside_the_sandbox_cannot_be_signalled() {
    require_landlock(6);
    let (_tmp, ctx) = ws();
    let mut victim = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let agent = std::process::id();
    let command = format!(
        "kill -9 {}; echo victim=$?; kill -0 {agent}; echo agent=$?; \
         if [ \"$PPID\" = 0 ]; then echo parent=unnamed; else kill -TERM $PPID; echo parent=$?; fi",
        victim.id()
    );
    let answer = call(&ctx, "run_shell", json!({ "command": command })).await;
    let text = answer.expect_ok().to_owned();
    let alive = victim.try_wait().unwrap().is_none();
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert!(
        alive,
        "the command killed a process outside its sandbox: {text}"
    );
    assert!(text.contains("victim=1"), "{text}");
    assert!(text.contains("agent=1"), "{text}");
    // In a PID namespace of its own the supervisor has no pid the command could use.
    assert!(
        text.contains("parent=1") || text.contains("parent=unnamed"),
        "{text}"
    );
}

#[tokio::test]
async fn the_agents_environment_and_memory_cannot_be_read_through_proc() {
    require_landlock(1);
    let (_tmp, ctx) = ws();
    let agent = std::process::id();
    let mut command = String::new();
    for file in [
        format!("/proc/{agent}/environ"),
        format!("/proc/{agent}/mem"),
        format!("/proc/{agent}/maps"),
        "/proc/$PPID/environ".to_owned(),
        "/proc/$PPID/maps".to_owned(),
    ] {
        command.push_str(&format!(
            "if head -c 1 {file} >/dev/null 2>&1; then echo 'READ {file}'; else echo 'denied {file}'; fi; "
        ));
    }
    command.push_str("head -c 1 /proc/self/environ >/dev/null && echo self-ok");
    let answer = call(&ctx, "run_shell", json!({ "command": command })).await;
    let text = answer.expect_ok();
    assert!(!text.contains("READ"), "{text}");
    assert_eq!(text.matches("denied").count(), 5, "{text}");
    assert!(
        text.contains("self-ok"),
        "its own /proc stays readable: {text}"
    );
}

#[tokio::test]
async fn with_confinement_off_the_same_write_goes_through() {
    let (_tmp, ctx) = ws();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted");
    let ctx = with_config(
        ctx,
        ShellConfig {
            confinement: Confinement::Off,
            ..ShellConfig::default()
        },
    );
    let command = format!("echo x > '{}'", target.display());
    call(&ctx, "run_shell", json!({ "command": command }))
        .await
        .expect_ok();
    assert!(
        target.exists(),
        "Confinement::Off runs unconfined, as documented"
    );
}

#[tokio::test]
async fn cargo_builds_and_runs_a_crate_inside_the_sandbox() {
    require_landlock(1);
    let (_tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "run_shell",
        json!({
            "command": "cargo new --quiet --offline --vcs none hello && cd hello && cargo run --quiet --offline 2>&1",
            "timeout_ms": 300_000
        }),
    )
    .await;
    let text = answer.expect_ok();
    assert!(text.starts_with("exit code: 0"), "{text}");
    assert!(text.contains("Hello, world!"), "{text}");
}
