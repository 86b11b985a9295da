//! The memory store's file, attacked: symbolic links at `.agent` and `.agent/memory.redb` that
//! stay inside the workspace, a hard link from `.agent/memory.redb` to a file outside, a damaged
//! (truncated) database, and a `recall` before anything was remembered. Real redb files in temp
//! dirs, through `Registry::run_many`.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::Path;

use agent_core::SkillContext;
use agent_std_tools::MemoryConfig;
use common::{call, get, put, snapshot};
use serde_json::json;

fn ws() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    (tmp, ctx)
}

// ---- symbolic links ----

#[tokio::test]
async fn a_store_linked_to_a_file_inside_is_refused_and_the_file_is_untouched() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "src/main.rs", "fn main() {}\n");
    std::fs::create_dir(tmp.path().join(".agent")).unwrap();
    symlink("../src/main.rs", tmp.path().join(".agent/memory.redb")).unwrap();
    let before = snapshot(tmp.path());
    for (skill, args) in [
        ("remember", json!({"key": "k", "value": "v"})),
        ("recall", json!({})),
        ("recall", json!({"key": "k"})),
    ] {
        let answer = call(&ctx, skill, args).await;
        answer.assert_safety(".agent/memory.redb");
        assert!(
            answer.text.contains("symbolic link") && answer.text.contains("remove"),
            "the refusal should say what to do: {}",
            answer.text
        );
    }
    assert_eq!(get(tmp.path(), "src/main.rs"), "fn main() {}\n");
    assert_eq!(snapshot(tmp.path()), before);
}

#[tokio::test]
async fn a_dot_agent_linked_to_a_directory_inside_is_refused() {
    let (tmp, ctx) = ws();
    std::fs::create_dir(tmp.path().join("state")).unwrap();
    symlink("state", tmp.path().join(".agent")).unwrap();
    let before = snapshot(tmp.path());
    for (skill, args) in [
        ("remember", json!({"key": "k", "value": "v"})),
        ("recall", json!({})),
    ] {
        let answer = call(&ctx, skill, args).await;
        answer.assert_safety(".agent");
        assert!(answer.text.contains("symbolic link"), "{}", answer.text);
    }
    // Nothing was created through the link.
    assert_eq!(snapshot(tmp.path()), before);
    assert!(!tmp.path().join("state/memory.redb").exists());
}

#[tokio::test]
async fn a_store_linked_to_another_store_inside_is_refused() {
    let (tmp, ctx) = ws();
    // A real store, elsewhere in the workspace, that the link would write into.
    let other = SkillContext::new(tmp.path()).with_extension(MemoryConfig::at("other.redb"));
    call(&other, "remember", json!({"key": "mine", "value": "1"}))
        .await
        .expect_ok();
    std::fs::create_dir(tmp.path().join(".agent")).unwrap();
    symlink("../other.redb", tmp.path().join(".agent/memory.redb")).unwrap();
    call(&ctx, "remember", json!({"key": "k", "value": "v"}))
        .await
        .assert_safety(".agent/memory.redb");
    assert_eq!(call(&other, "recall", json!({})).await.expect_ok(), "mine");
}

// ---- hard links ----

#[tokio::test]
async fn a_store_hard_linked_to_a_file_outside_is_refused_and_the_file_is_untouched() {
    let outside = tempfile::tempdir().unwrap();
    // A file redb would fill (an empty one), and another workspace's real store.
    let empty = outside.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let (other_tmp, other) = ws();
    call(
        &other,
        "remember",
        json!({"key": "theirs", "value": "secret"}),
    )
    .await
    .expect_ok();
    let theirs = other_tmp.path().join(".agent/memory.redb");
    wait_until_closed(&theirs).await;
    for target in [&empty, &theirs] {
        let (tmp, ctx) = ws();
        std::fs::create_dir(tmp.path().join(".agent")).unwrap();
        std::fs::hard_link(target, tmp.path().join(".agent/memory.redb")).unwrap();
        let before = std::fs::read(target).unwrap();
        for (skill, args) in [
            ("remember", json!({"key": "k", "value": "v".repeat(1000)})),
            ("recall", json!({})),
            ("recall", json!({"key": "theirs"})),
            ("recall", json!({"query": "secret"})),
        ] {
            let answer = call(&ctx, skill, args).await;
            answer.assert_safety(".agent/memory.redb");
            assert!(
                answer.text.contains("hard link")
                    && answer.text.contains("Delete `.agent/memory.redb`"),
                "the refusal should say what is wrong and what to do: {}",
                answer.text
            );
            assert!(!answer.text.contains("secret"), "{}", answer.text);
        }
        assert_eq!(
            std::fs::read(target).unwrap(),
            before,
            "`{}` changed through the link",
            target.display()
        );
        // Deleting the link, as the refusal says, starts a store of this workspace's own.
        std::fs::remove_file(tmp.path().join(".agent/memory.redb")).unwrap();
        call(&ctx, "remember", json!({"key": "k", "value": "v"}))
            .await
            .expect_ok();
        assert_eq!(std::fs::read(target).unwrap(), before);
    }
    assert_eq!(
        call(&other, "recall", json!({})).await.expect_ok(),
        "theirs"
    );
}

// ---- recall of an absent store ----

#[tokio::test]
async fn recall_before_anything_was_remembered_creates_nothing() {
    let (tmp, ctx) = ws();
    let answers = [
        call(&ctx, "recall", json!({})).await,
        call(&ctx, "recall", json!({"key": "k"})).await,
        call(&ctx, "recall", json!({"query": "q"})).await,
    ];
    for answer in &answers {
        assert_eq!(answer.expect_ok(), "Nothing has been remembered yet.");
    }
    assert!(!tmp.path().join(".agent").exists(), "recall created .agent");
    assert_eq!(snapshot(tmp.path()), []);

    // The same for a store named by MemoryConfig, and an empty .agent stays empty.
    std::fs::create_dir(tmp.path().join(".agent")).unwrap();
    call(&ctx, "recall", json!({})).await.expect_ok();
    let named = SkillContext::new(tmp.path()).with_extension(MemoryConfig::at("state/m.redb"));
    assert_eq!(
        call(&named, "recall", json!({})).await.expect_ok(),
        "Nothing has been remembered yet."
    );
    assert_eq!(snapshot(tmp.path()), [(".agent/".to_owned(), None)]);

    // The first remember still creates the store.
    call(&ctx, "remember", json!({"key": "k", "value": "v"}))
        .await
        .expect_ok();
    assert!(tmp.path().join(".agent/memory.redb").is_file());
    assert_eq!(
        call(&ctx, "recall", json!({"key": "k"})).await.expect_ok(),
        "v"
    );
}

// ---- a damaged store ----

/// Writes a real store with the skill in a workspace of its own and returns its bytes.
async fn a_real_store() -> Vec<u8> {
    let (tmp, ctx) = ws();
    for i in 0..20 {
        call(
            &ctx,
            "remember",
            json!({"key": format!("key-{i}"), "value": "v".repeat(500)}),
        )
        .await
        .expect_ok();
    }
    std::fs::read(tmp.path().join(".agent/memory.redb")).unwrap()
}

fn assert_damaged(answer: &common::Answer, shown: &str) {
    let text = answer.err();
    assert!(
        !text.contains("panicked") && !text.contains("assertion"),
        "a panic leaked out: {text}"
    );
    assert!(
        text.contains("damaged") && text.contains(shown),
        "the error should say the store at `{shown}` is damaged: {text}"
    );
    assert!(
        text.contains("move") && text.contains("delete"),
        "the error should say how to reset the store: {text}"
    );
}

#[tokio::test]
async fn a_truncated_store_is_reported_as_damaged_and_left_as_it_was() {
    let store = a_real_store().await;
    assert!(store.len() > 8192, "{}", store.len());
    for keep in [store.len() / 2, 4096, 1000, 64, 10] {
        let (tmp, ctx) = ws();
        let truncated = &store[..keep];
        put(tmp.path(), ".agent/memory.redb", truncated);
        for (skill, args) in [
            ("recall", json!({})),
            ("recall", json!({"key": "key-1"})),
            ("remember", json!({"key": "k", "value": "v"})),
        ] {
            let answer = call(&ctx, skill, args).await;
            assert_damaged(&answer, ".agent/memory.redb");
            assert_eq!(
                std::fs::read(tmp.path().join(".agent/memory.redb")).unwrap(),
                truncated,
                "{skill} changed the damaged store (kept {keep} bytes)"
            );
        }
        // Moving the damaged file away, as the error says, gives a fresh store.
        std::fs::rename(
            tmp.path().join(".agent/memory.redb"),
            tmp.path().join(".agent/memory.redb.damaged"),
        )
        .unwrap();
        call(&ctx, "remember", json!({"key": "k", "value": "v"}))
            .await
            .expect_ok();
        assert_eq!(
            call(&ctx, "recall", json!({"key": "k"})).await.expect_ok(),
            "v"
        );
    }
}

#[tokio::test]
async fn a_file_that_is_no_database_is_reported_as_damaged_and_kept() {
    let (tmp, ctx) = ws();
    let text = "notes, not a database\n".repeat(100);
    put(tmp.path(), ".agent/memory.redb", &text);
    for (skill, args) in [
        ("recall", json!({})),
        ("remember", json!({"key": "k", "value": "v"})),
    ] {
        assert_damaged(&call(&ctx, skill, args).await, ".agent/memory.redb");
    }
    assert_eq!(get(tmp.path(), ".agent/memory.redb"), text);
}

#[tokio::test]
async fn a_truncated_store_named_by_memory_config_is_reported_with_its_path() {
    let store = a_real_store().await;
    let (tmp, _) = ws();
    let db = tmp.path().join("elsewhere/m.redb");
    put(tmp.path(), "elsewhere/m.redb", &store[..store.len() / 2]);
    let ctx = SkillContext::new(tmp.path()).with_extension(MemoryConfig::at(&db));
    let answer = call(&ctx, "recall", json!({})).await;
    assert_damaged(&answer, &db.display().to_string());
}

#[tokio::test]
async fn a_store_truncated_in_place_after_use_is_reported_as_damaged() {
    let (tmp, ctx) = ws();
    for i in 0..20 {
        call(
            &ctx,
            "remember",
            json!({"key": format!("key-{i}"), "value": "v".repeat(500)}),
        )
        .await
        .expect_ok();
    }
    let path = tmp.path().join(".agent/memory.redb");
    wait_until_closed(&path).await;
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    assert_damaged(&call(&ctx, "recall", json!({})).await, ".agent/memory.redb");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len / 2);
}

/// Waits for this process to close the database after its last call (it lingers a moment), by
/// taking the lock redb holds while it is open.
async fn wait_until_closed(path: &Path) {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).unwrap();
    for _ in 0..400 {
        // SAFETY: flock on a valid, open file descriptor.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            // SAFETY: as above.
            unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the memory database was never closed after its last call");
}
