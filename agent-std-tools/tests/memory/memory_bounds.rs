//! The memory store's limits, attacked: `recall` over a 1 GB store (5,000 values of 100 KB, as
//! a version without limits let the model write) in a process of its own whose peak memory is
//! measured; answers cut at the output limit, with the rest counted; `remember` past the key
//! limit and on a full store refused with nothing changed. The big stores are written with redb
//! directly, in the store's own table, as an older version of `remember` wrote them.

use crate::common;

use std::path::Path;

use agent_core::SkillContext;
use agent_std_tools::MemoryConfig;
use agent_std_tools::memory::{MAX_KEYS, MAX_STORE_BYTES};
use common::child::{child_args, in_child, report};
use common::{Answer, call};
use redb::{Database, TableDefinition};
use serde_json::json;

/// The table `remember` writes.
const TABLE: TableDefinition<&str, &str> = TableDefinition::new("memory");

/// The default store of the workspace at `root`.
fn store(root: &Path) -> std::path::PathBuf {
    root.join(".agent/memory.redb")
}

/// Writes `count` memories (`key-00000`…, values `value_of(i)`) into the store at `path`, in one
/// transaction.
fn write_store(path: &Path, count: usize, value_of: impl Fn(usize) -> String) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let db = Database::builder()
        .set_cache_size(16 << 20)
        .create(path)
        .unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut table = txn.open_table(TABLE).unwrap();
        for i in 0..count {
            table
                .insert(format!("key-{i:05}").as_str(), value_of(i).as_str())
                .unwrap();
        }
    }
    txn.commit().unwrap();
}

/// A value of `len` bytes that starts with its number.
fn value(i: usize, len: usize) -> String {
    let mut value = format!("value {i} ");
    while value.len() < len {
        value.push_str("lorem ipsum ");
    }
    value.truncate(len);
    value
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

// ---- a 1 GB store ----

/// Peak memory a child may reach: its runtime, one value, the answer and redb's cache take a few
/// MB; the old `recall` held every match, and redb cached up to 1 GiB.
const PEAK_BOUND: u64 = 100 << 20;

/// Not a test of its own: the process that makes one call and reports its peak memory.
#[tokio::test]
#[ignore = "run as a child process by the tests that measure peak memory"]
async fn child_calls_a_memory_skill() {
    let Some(args) = child_args() else {
        return;
    };
    let ctx = SkillContext::new(args["root"].as_str().unwrap());
    let answer = call(&ctx, args["skill"].as_str().unwrap(), args["args"].clone()).await;
    report(&answer);
}

fn in_child_call(root: &Path, skill: &str, args: serde_json::Value) -> common::child::Measured {
    let measured = in_child(
        "memory_bounds::child_calls_a_memory_skill",
        json!({"root": root, "skill": skill, "args": args}),
    );
    eprintln!(
        "{skill} {args}: peak memory of the child {} MB",
        measured.peak_bytes / 1_000_000
    );
    measured
}

#[tokio::test]
async fn recall_over_a_1_gb_store_holds_one_value_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let db = store(tmp.path());
    write_store(&db, 5_000, |i| value(i, 100_000));
    let size = std::fs::metadata(&db).unwrap().len();
    assert!(size > 1_000_000_000, "the store is {size} bytes");

    let search = in_child_call(tmp.path(), "recall", json!({"query": "V"}));
    let text = search.answer.expect_ok();
    assert!(
        text.starts_with("key-00000: value 0 lorem ipsum"),
        "{text:.200}"
    );
    assert!(
        text.chars().count() <= 16_000,
        "{} chars",
        text.chars().count()
    );
    assert!(
        text.contains("[showing 1 of the 5000 memories that contain `V`, the first cut at 15000 characters; narrow the query"),
        "{}",
        &text[text.len().saturating_sub(400)..]
    );
    assert!(
        search.peak_bytes < PEAK_BOUND,
        "recall over a {size}-byte store took {} bytes of memory",
        search.peak_bytes
    );

    let listing = in_child_call(tmp.path(), "recall", json!({}));
    let text = listing.answer.expect_ok();
    assert!(text.starts_with("key-00000\nkey-00001\n"), "{text:.200}");
    assert!(
        text.contains("of 5000 keys"),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(listing.peak_bytes < PEAK_BOUND, "{}", listing.peak_bytes);

    let one = in_child_call(tmp.path(), "recall", json!({"key": "key-04999"}));
    assert!(one.answer.expect_ok().starts_with("value 4999 lorem"));
    assert!(one.peak_bytes < PEAK_BOUND, "{}", one.peak_bytes);

    // Over the size limit: it takes no more, and says so.
    let ctx = SkillContext::new(tmp.path());
    let answer = call(&ctx, "remember", json!({"key": "more", "value": "x"})).await;
    let text = answer.err();
    assert!(
        text.contains(".agent/memory.redb") && text.contains(&MAX_STORE_BYTES.to_string()),
        "{text}"
    );
    assert!(text.contains("nothing was remembered"), "{text}");
    wait_until_closed(&db).await;
    assert_eq!(std::fs::metadata(&db).unwrap().len(), size);
}

// ---- answers cut at the output limit ----

#[tokio::test]
async fn a_search_stops_at_the_output_limit_and_counts_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    write_store(&store(tmp.path()), 300, |i| value(i, 1_000));
    let ctx = SkillContext::new(tmp.path());
    let text = call(&ctx, "recall", json!({"query": "lorem"})).await;
    let text = text.expect_ok();
    let (shown, notice) = text.split_once("\n\n").unwrap();
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        (10..20).contains(&lines.len()),
        "{} memories shown",
        lines.len()
    );
    assert!(
        lines[0].starts_with("key-00000: value 0 lorem"),
        "{}",
        lines[0]
    );
    assert!(shown.chars().count() <= 15_000);
    assert_eq!(
        notice,
        format!(
            "[showing {} of the 300 memories that contain `lorem`; narrow the query, or recall one by its `key`]",
            lines.len()
        )
    );
    // A search that fits is whole, without a notice.
    assert_eq!(
        call(&ctx, "recall", json!({"query": "value 299 "}))
            .await
            .expect_ok(),
        format!("key-00299: {}", value(299, 1_000))
    );
    // The limit is the context's.
    let small = SkillContext::new(tmp.path()).with_extension(MemoryConfig {
        max_recall_chars: 100,
        ..MemoryConfig::default()
    });
    let text = call(&small, "recall", json!({})).await;
    assert_eq!(
        text.expect_ok(),
        format!(
            "{}\n\n[showing 10 of 300 keys; recall with a `query` to find the others]",
            (0..10)
                .map(|i| format!("key-{i:05}"))
                .collect::<Vec<_>>()
                .join("\n")
        )
    );
    let text = call(&small, "recall", json!({"query": "value 7 "})).await;
    assert_eq!(
        text.expect_ok(),
        format!(
            "key-00007: {}\n\n[the memory under `key-00007` is cut at 100 characters; recall it by its `key` to see it whole]",
            &value(7, 1_000)[..89]
        )
    );
}

// ---- remember past the limits ----

/// Asserts `answer` refused a `remember` and the store at `db` still holds `keys` keys and not
/// `key`.
async fn assert_refused(ctx: &SkillContext, answer: &Answer, db: &Path, key: &str, keys: usize) {
    let text = answer.err();
    assert!(text.contains("nothing was remembered"), "{text}");
    let found = call(ctx, "recall", json!({"key": key})).await;
    assert!(
        found.expect_ok().starts_with("Nothing is remembered under"),
        "{}",
        found.text
    );
    let listing = call(ctx, "recall", json!({"query": "value"})).await;
    assert!(
        listing.expect_ok().contains(&format!(" {keys} memories")),
        "{}",
        &listing.text[listing.text.len().saturating_sub(200)..]
    );
    assert!(db.is_file());
}

/// Asserts that a `remember` with `args` is refused again and leaves the store's file exactly as
/// it was (both compared with the store closed).
async fn assert_refused_again_byte_for_byte(
    ctx: &SkillContext,
    db: &Path,
    args: serde_json::Value,
) {
    wait_until_closed(db).await;
    let before = std::fs::read(db).unwrap();
    let answer = call(ctx, "remember", args).await;
    assert!(
        answer.err().contains("nothing was remembered"),
        "{}",
        answer.text
    );
    wait_until_closed(db).await;
    assert!(
        std::fs::read(db).unwrap() == before,
        "the refused remember changed the store"
    );
}

#[tokio::test]
async fn remember_past_the_key_limit_is_refused_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = store(tmp.path());
    write_store(&db, MAX_KEYS, |i| value(i, 20));
    let size = std::fs::metadata(&db).unwrap().len();
    let ctx = SkillContext::new(tmp.path());
    let answer = call(&ctx, "remember", json!({"key": "one-more", "value": "x"})).await;
    let text = answer.err();
    assert!(
        text.contains(&MAX_KEYS.to_string()) && text.contains("replace"),
        "says the limit and what to do: {text}"
    );
    assert_refused(&ctx, &answer, &db, "one-more", MAX_KEYS).await;
    assert_refused_again_byte_for_byte(&ctx, &db, json!({"key": "one-more", "value": "x"})).await;
    assert_eq!(std::fs::metadata(&db).unwrap().len(), size);
    // Replacing what a key holds adds no key, and is still allowed.
    call(
        &ctx,
        "remember",
        json!({"key": "key-00007", "value": "new"}),
    )
    .await
    .expect_ok();
    assert_eq!(
        call(&ctx, "recall", json!({"key": "key-00007"}))
            .await
            .expect_ok(),
        "new"
    );
}

#[tokio::test]
async fn remember_on_a_full_store_is_refused_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path()).with_extension(MemoryConfig {
        max_store_bytes: 2 << 20,
        ..MemoryConfig::default()
    });
    let db = store(tmp.path());
    let mut stored = 0;
    let refused = loop {
        let answer = call(
            &ctx,
            "remember",
            json!({"key": format!("key-{stored:05}"), "value": value(stored, 50_000)}),
        )
        .await;
        if answer.is_error {
            break answer;
        }
        stored += 1;
        assert!(stored < 1_000, "remember never refused");
    };
    let text = refused.err();
    assert!(
        text.contains(&(2u64 << 20).to_string()) && text.contains("2 MiB"),
        "says the limit: {text}"
    );
    assert!(
        text.contains("move") && text.contains("delete"),
        "says what to do: {text}"
    );
    assert_refused(&ctx, &refused, &db, &format!("key-{stored:05}"), stored).await;
    assert_refused_again_byte_for_byte(&ctx, &db, json!({"key": "k", "value": "v"})).await;
    let size = std::fs::metadata(&db).unwrap().len();
    eprintln!("{stored} memories of 50,000 bytes stored, then refused at {size} bytes");
    // Past the limit by what redb allocated in one step: it doubles a full file.
    assert!((2 << 20..(4 << 20) + (1 << 20)).contains(&size), "{size}");
    // The default limit, on a store an older version filled past it.
    let tmp = tempfile::tempdir().unwrap();
    let db = store(tmp.path());
    write_store(&db, 400, |i| value(i, 100_000));
    assert!(std::fs::metadata(&db).unwrap().len() > MAX_STORE_BYTES);
    let ctx = SkillContext::new(tmp.path());
    let answer = call(&ctx, "remember", json!({"key": "k", "value": "v"})).await;
    assert!(answer.err().contains("64 MiB"), "{}", answer.text);
    assert_refused(&ctx, &answer, &db, "k", 400).await;
    assert_refused_again_byte_for_byte(&ctx, &db, json!({"key": "k", "value": "v"})).await;
}
