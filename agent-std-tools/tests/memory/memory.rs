//! `remember` and `recall` through `Registry::run_many`: a real redb file, parallel callers, a
//! process killed mid-write, another process holding the file.

use crate::common;

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_core::{RetryPolicy, SkillContext, ToolCall};
use agent_std_tools::MemoryConfig;
use common::{call, call_many, registry};
use serde_json::json;

fn ws() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    (tmp, ctx)
}

fn at(root: &Path, db: &Path) -> SkillContext {
    SkillContext::new(root).with_extension(MemoryConfig::at(db))
}

#[tokio::test]
async fn remember_then_recall_in_one_turn_sees_the_write() {
    let (tmp, ctx) = ws();
    let answers = call_many(
        &ctx,
        &[
            (
                "remember",
                json!({"key": "test-command", "value": "cargo nextest run"}),
            ),
            ("recall", json!({"key": "test-command"})),
        ],
    )
    .await;
    assert_eq!(answers[0].expect_ok(), "Remembered `test-command`.");
    assert_eq!(answers[1].expect_ok(), "cargo nextest run");
    assert!(
        tmp.path().join(".agent/memory.redb").is_file(),
        "the default database is under .agent"
    );
}

#[tokio::test]
async fn remembering_again_replaces_and_says_so() {
    let (_tmp, ctx) = ws();
    call(&ctx, "remember", json!({"key": "k", "value": "one"}))
        .await
        .expect_ok();
    let answer = call(&ctx, "remember", json!({"key": "k", "value": "two"})).await;
    assert_eq!(
        answer.expect_ok(),
        "Remembered `k` (replacing what was stored under it)."
    );
    assert_eq!(
        call(&ctx, "recall", json!({"key": "k"})).await.expect_ok(),
        "two"
    );
}

#[tokio::test]
async fn recall_without_arguments_lists_the_keys() {
    let (_tmp, ctx) = ws();
    assert_eq!(
        call(&ctx, "recall", json!({})).await.expect_ok(),
        "Nothing has been remembered yet."
    );
    for key in ["zeta", "alpha", "mid"] {
        call(&ctx, "remember", json!({"key": key, "value": "v"}))
            .await
            .expect_ok();
    }
    assert_eq!(
        call(&ctx, "recall", json!({})).await.expect_ok(),
        "alpha\nmid\nzeta"
    );
}

#[tokio::test]
async fn recall_with_a_query_searches_keys_and_values_ignoring_case() {
    let (_tmp, ctx) = ws();
    call(
        &ctx,
        "remember",
        json!({"key": "style", "value": "Prefers TABS"}),
    )
    .await
    .expect_ok();
    call(&ctx, "remember", json!({"key": "tabs-note", "value": "x"}))
        .await
        .expect_ok();
    call(&ctx, "remember", json!({"key": "other", "value": "spaces"}))
        .await
        .expect_ok();
    assert_eq!(
        call(&ctx, "recall", json!({"query": "tabs"}))
            .await
            .expect_ok(),
        "style: Prefers TABS\ntabs-note: x"
    );
    assert_eq!(
        call(&ctx, "recall", json!({"query": "nothing-like-this"}))
            .await
            .expect_ok(),
        "No memory contains `nothing-like-this`."
    );
}

#[tokio::test]
async fn a_missing_key_and_bad_arguments_say_what_to_do() {
    let (_tmp, ctx) = ws();
    call(&ctx, "remember", json!({"key": "a", "value": "1"}))
        .await
        .expect_ok();
    let answer = call(&ctx, "recall", json!({"key": "b"})).await;
    assert!(
        answer
            .expect_ok()
            .starts_with("Nothing is remembered under `b`")
    );
    let answers = call_many(
        &ctx,
        &[
            ("recall", json!({"key": "a", "query": "a"})),
            ("remember", json!({"key": "  ", "value": "x"})),
            (
                "remember",
                json!({"key": "big", "value": "x".repeat(100_001)}),
            ),
        ],
    )
    .await;
    assert!(answers[0].err().contains("not both"), "{}", answers[0].text);
    assert_eq!(
        answers[1].err(),
        "invalid arguments: `key`: must not be empty"
    );
    assert!(answers[2].err().starts_with("invalid arguments: `value`"));
}

#[tokio::test]
async fn memory_persists_across_contexts_and_can_live_elsewhere() {
    let (tmp, _) = ws();
    let elsewhere = tempfile::tempdir().unwrap();
    let db = elsewhere.path().join("nested/dir/mem.redb");
    call(
        &at(tmp.path(), &db),
        "remember",
        json!({"key": "k", "value": "kept"}),
    )
    .await
    .expect_ok();
    assert!(db.is_file());
    assert!(!tmp.path().join(".agent").exists());
    // A fresh context (as in a new session) reads it back.
    let fresh = at(tmp.path(), &db);
    assert_eq!(
        call(&fresh, "recall", json!({"key": "k"}))
            .await
            .expect_ok(),
        "kept"
    );
    // A relative path is relative to the workspace.
    let relative = SkillContext::new(tmp.path()).with_extension(MemoryConfig::at("state/m.redb"));
    call(&relative, "remember", json!({"key": "r", "value": "1"}))
        .await
        .expect_ok();
    assert!(tmp.path().join("state/m.redb").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_callers_lose_no_write() {
    let (_tmp, ctx) = ws();
    let mut tasks = Vec::new();
    for task in 0..16 {
        let ctx = ctx.clone();
        tasks.push(tokio::spawn(async move {
            // Each task is its own caller, with a batch of its own.
            let calls: Vec<ToolCall> = (0..4)
                .map(|i| {
                    ToolCall::new(
                        format!("{task}-{i}"),
                        "remember",
                        json!({"key": format!("k{task:02}-{i}"), "value": format!("v{task}-{i}")}),
                    )
                })
                .collect();
            let results = registry().run_many(&calls, &ctx).await;
            for result in results {
                assert!(!result.is_error(), "{}", result.content());
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let listing = call(&ctx, "recall", json!({})).await;
    let keys: Vec<&str> = listing.expect_ok().lines().collect();
    assert_eq!(keys.len(), 64, "{keys:?}");
    let everything = call(&ctx, "recall", json!({"query": "v"})).await;
    for task in 0..16 {
        for i in 0..4 {
            let line = format!("k{task:02}-{i}: v{task}-{i}");
            assert!(
                everything.expect_ok().lines().any(|l| l == line),
                "{line} is missing"
            );
        }
    }
}

const CHILD_DB: &str = "EUGENE_MEMORY_CHILD_DB";

/// Not a test of its own: the child process of `memory_survives_the_process_being_killed`. It
/// remembers one key after another, printing each that returned, until it is killed.
#[tokio::test]
#[ignore = "run as a child process by memory_survives_the_process_being_killed"]
async fn child_remembers_until_killed() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return;
    };
    let root = Path::new(&db).parent().unwrap().to_path_buf();
    let ctx = at(&root, Path::new(&db));
    for i in 0.. {
        let answer = call(
            &ctx,
            "remember",
            json!({"key": format!("key-{i:05}"), "value": format!("value {i}")}),
        )
        .await;
        answer.expect_ok();
        println!("COMMITTED {i}");
    }
}

#[tokio::test]
async fn memory_survives_the_process_being_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("memory.redb");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "memory::child_remembers_until_killed",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, &db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let last = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(stdout).lines();
        loop {
            let line = lines.next().expect("the child ended early").unwrap();
            if let Some(n) = line.strip_prefix("COMMITTED ") {
                let n: u32 = n.parse().unwrap();
                if n >= 12 {
                    return (n, lines);
                }
            }
        }
    })
    .await
    .unwrap();
    // SIGKILL, most likely in the middle of the next write: no clean shutdown.
    child.kill().unwrap();
    child.wait().unwrap();
    drop(last.1);
    let committed = last.0;

    let ctx = at(tmp.path(), &db);
    let listing = call(&ctx, "recall", json!({})).await;
    let keys: Vec<&str> = listing.expect_ok().lines().collect();
    assert!(
        keys.len() > committed as usize,
        "{} keys survived, {} were committed",
        keys.len(),
        committed + 1
    );
    let everything = call(&ctx, "recall", json!({"query": "value"})).await;
    for i in 0..=committed {
        let line = format!("key-{i:05}: value {i}");
        assert!(
            everything.expect_ok().lines().any(|l| l == line),
            "{line} is missing"
        );
    }
    // And the store still takes writes.
    call(&ctx, "remember", json!({"key": "after", "value": "kill"}))
        .await
        .expect_ok();
}

#[tokio::test]
async fn another_process_holding_the_database_is_a_retried_temporary_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("held.redb");
    let ctx = SkillContext::new(tmp.path()).with_extension(MemoryConfig {
        lock_wait: Duration::from_millis(100),
        ..MemoryConfig::at(&db)
    });
    call(&ctx, "remember", json!({"key": "k", "value": "v"}))
        .await
        .expect_ok();
    // What redb does when it opens a file: an exclusive `flock`. A second open file description
    // conflicts with it exactly as another process's would.
    let holder = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&db)
        .unwrap();
    // This process keeps the database open for a moment after the call; wait for it to let go.
    let mut locked = false;
    for _ in 0..200 {
        // SAFETY: flock on a valid, open file descriptor.
        if unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            locked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        locked,
        "the memory database was never closed after its last call"
    );
    let mut quick = agent_core::Registry::new();
    agent_std_tools::add_all(&mut quick);
    quick.with_retry_policy(RetryPolicy {
        initial_delay: Duration::from_millis(10),
        ..RetryPolicy::default()
    });
    let results = quick
        .run_many(&[ToolCall::new("1", "recall", json!({"key": "k"}))], &ctx)
        .await;
    assert!(results[0].is_error());
    assert!(
        results[0]
            .content()
            .starts_with("temporary failure: the memory database")
            && results[0].content().contains("in use by another process"),
        "{}",
        results[0].content()
    );
    drop(holder);
    assert_eq!(
        call(&ctx, "recall", json!({"key": "k"})).await.expect_ok(),
        "v"
    );
}
