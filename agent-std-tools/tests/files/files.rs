//! `read_file`, `write_file`, `list_dir` and `delete_file` through `Registry::run_many`, on real
//! files in temp dirs.

use crate::common;

use std::os::unix::fs::{PermissionsExt, symlink};

use agent_core::registry::DEFAULT_OUTPUT_BUDGET;
use agent_core::{RunScope, SkillContext, ToolCall};
use agent_std_tools::FilesConfig;
use common::{call, call_many, get, put, registry, snapshot};
use serde_json::json;

fn ws() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    (tmp, ctx)
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

// ---- read_file ----

#[tokio::test]
async fn read_file_returns_the_text() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.txt", "hello\nworld\n");
    assert_eq!(
        call(&ctx, "read_file", json!({"path": "a.txt"}))
            .await
            .expect_ok(),
        "hello\nworld"
    );
}

#[tokio::test]
async fn read_file_line_ranges_say_what_was_shown_and_where_to_go_on() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "n.txt", numbered(10));
    let answer = call(
        &ctx,
        "read_file",
        json!({"path": "n.txt", "offset": 3, "limit": 2}),
    )
    .await;
    assert_eq!(
        answer.expect_ok(),
        "line 3\nline 4\n\n[showing lines 3-4 of 10. Read on with offset=5.]"
    );
    let answer = call(&ctx, "read_file", json!({"path": "n.txt", "offset": 9})).await;
    assert_eq!(
        answer.expect_ok(),
        "line 9\nline 10\n\n[showing lines 9-10 of 10; end of file]"
    );
}

#[tokio::test]
async fn read_file_offset_past_the_end_and_zero_are_bad_arguments() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "n.txt", numbered(3));
    let answer = call(&ctx, "read_file", json!({"path": "n.txt", "offset": 7})).await;
    assert_eq!(
        answer.err(),
        "invalid arguments: `offset`: `n.txt` has 3 lines; offset 7 is past the end"
    );
    let answer = call(&ctx, "read_file", json!({"path": "n.txt", "offset": 0})).await;
    assert!(answer.err().starts_with("invalid arguments: `offset`"));
    let answer = call(&ctx, "read_file", json!({"path": "n.txt", "limit": 0})).await;
    assert!(answer.err().starts_with("invalid arguments: `limit`"));
}

#[tokio::test]
async fn read_file_refuses_binary_files_clearly() {
    let (tmp, ctx) = ws();
    // An executable's header, named as an image: neither text nor media.
    put(
        tmp.path(),
        "img.png",
        b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    );
    let answer = call(&ctx, "read_file", json!({"path": "img.png"})).await;
    assert_eq!(
        answer.err(),
        "`img.png` is a binary file (16 bytes); read_file shows text, images, PDFs and sound \
         files only"
    );
}

#[tokio::test]
async fn read_file_shows_invalid_utf8_lossily_and_says_so() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "latin1.txt", b"caf\xe9\n");
    let answer = call(&ctx, "read_file", json!({"path": "latin1.txt"})).await;
    let text = answer.expect_ok();
    assert!(text.starts_with("caf\u{FFFD}"), "{text}");
    assert!(text.contains("not valid UTF-8"), "{text}");
}

#[tokio::test]
async fn read_file_of_a_big_file_fits_the_registry_budget_with_a_notice() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "big.txt", numbered(20_000));
    let answer = call(&ctx, "read_file", json!({"path": "big.txt"})).await;
    let text = answer.expect_ok();
    assert!(
        text.chars().count() <= DEFAULT_OUTPUT_BUDGET,
        "{}",
        text.len()
    );
    assert!(
        !text.contains("[output truncated"),
        "the registry had to cut it"
    );
    assert!(text.starts_with("line 1\nline 2\n"));
    let notice = text.rsplit("\n\n").next().unwrap();
    assert!(
        notice.starts_with("[showing lines 1-")
            && notice.contains("of 20000")
            && notice.contains("Read on with offset="),
        "{notice}"
    );
    // The offset it names continues exactly where the text stopped.
    let last_shown: usize = text.lines().rev().find(|l| l.starts_with("line ")).unwrap()[5..]
        .parse()
        .unwrap();
    assert!(
        notice.contains(&format!("offset={}.", last_shown + 1)),
        "{notice}"
    );
}

#[tokio::test]
async fn read_file_budget_comes_from_files_config() {
    let (tmp, ctx) = ws();
    let ctx = ctx.with_extension(FilesConfig {
        max_read_chars: 20,
        ..FilesConfig::default()
    });
    put(tmp.path(), "n.txt", numbered(10));
    let answer = call(&ctx, "read_file", json!({"path": "n.txt"})).await;
    assert_eq!(
        answer.expect_ok(),
        "line 1\nline 2\nline 3\n\n[showing lines 1-3 of 10: the output limit of 20 characters was reached. Read on with offset=4.]"
    );
}

#[tokio::test]
async fn read_file_cuts_a_single_huge_line() {
    let (tmp, ctx) = ws();
    let ctx = ctx.with_extension(FilesConfig {
        max_read_chars: 10,
        ..FilesConfig::default()
    });
    put(tmp.path(), "min.js", format!("{}\nnext\n", "x".repeat(50)));
    let answer = call(&ctx, "read_file", json!({"path": "min.js"})).await;
    assert_eq!(
        answer.expect_ok(),
        "xxxxxxxxxx\n\n[line 1 is 50 characters long; showing its first 10. Read on with offset=2.]"
    );
}

#[tokio::test]
async fn read_file_of_an_empty_file_directory_or_missing_file_says_so() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "empty.txt", "");
    put(tmp.path(), "dir/x", "x");
    let answers = call_many(
        &ctx,
        &[
            ("read_file", json!({"path": "empty.txt"})),
            ("read_file", json!({"path": "dir"})),
            ("read_file", json!({"path": "nope.txt"})),
        ],
    )
    .await;
    assert_eq!(answers[0].expect_ok(), "[`empty.txt` is empty]");
    assert!(
        answers[1].err().contains("`dir` is a directory"),
        "{}",
        answers[1].text
    );
    assert_eq!(answers[2].err(), "`nope.txt` does not exist");
}

#[tokio::test]
async fn read_file_and_apply_patch_refuse_a_fifo_instead_of_hanging() {
    let (tmp, ctx) = ws();
    let fifo = std::ffi::CString::new(tmp.path().join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let answer = call(&ctx, "read_file", json!({"path": "pipe"})).await;
    assert!(
        answer.err().contains("not a regular file"),
        "{}",
        answer.text
    );
    let answer = call(
        &ctx,
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Update File: pipe\n-a\n+b\n*** End Patch"}),
    )
    .await;
    assert!(
        answer.err().contains("not a regular file"),
        "{}",
        answer.text
    );
}

/// A thread that waits for a reader of the FIFO at `path` and writes `text` to it once.
fn fifo_writer(path: &std::path::Path, text: &'static str) -> std::thread::JoinHandle<()> {
    let path = path.to_owned();
    std::thread::spawn(move || {
        use std::io::Write;
        let mut pipe = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        let _ = pipe.write_all(text.as_bytes());
    })
}

/// Lets a [`fifo_writer`] that nobody read from finish, and waits for it.
fn release_fifo_writer(path: &std::path::Path, writer: std::thread::JoinHandle<()>) {
    use std::os::unix::fs::OpenOptionsExt;
    let _reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .unwrap();
    writer.join().unwrap();
}

#[tokio::test]
async fn walks_never_open_a_fifo_named_like_an_ignore_file() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "logs/keep.txt", "kept\n");
    let fifo_path = tmp.path().join("logs/.gitignore");
    let fifo = std::ffi::CString::new(fifo_path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    // A writer waits on the pipe, so that a walk that opens it (which would hang without a
    // writer) reads a rule hiding `keep.txt` instead.
    let writer = fifo_writer(&fifo_path, "keep.txt\n");
    let listing = call(&ctx, "list_dir", json!({"path": "logs"})).await;
    release_fifo_writer(&fifo_path, writer);
    assert_eq!(listing.expect_ok(), "keep.txt");
    let writer = fifo_writer(&fifo_path, "keep.txt\n");
    let found = call(&ctx, "search_files", json!({"pattern": "kept"})).await;
    release_fifo_writer(&fifo_path, writer);
    assert_eq!(found.expect_ok(), "logs/keep.txt:1:kept");
}

#[tokio::test]
async fn read_file_keeps_crlf_lines_readable() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "w.txt", "a\r\nb\r\n");
    assert_eq!(
        call(&ctx, "read_file", json!({"path": "w.txt"}))
            .await
            .expect_ok(),
        "a\nb"
    );
}

// ---- write_file ----

#[tokio::test]
async fn write_file_creates_parents_and_reports() {
    let (tmp, ctx) = ws();
    let answer = call(
        &ctx,
        "write_file",
        json!({"path": "a/b/c.txt", "content": "one\ntwo\n"}),
    )
    .await;
    assert_eq!(answer.expect_ok(), "Created `a/b/c.txt` (8 bytes, 2 lines)");
    assert_eq!(get(tmp.path(), "a/b/c.txt"), "one\ntwo\n");
}

#[tokio::test]
async fn write_file_overwrites_atomically_keeping_permissions() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "s.sh", "old");
    std::fs::set_permissions(
        tmp.path().join("s.sh"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    let answer = call(
        &ctx,
        "write_file",
        json!({"path": "s.sh", "content": "new"}),
    )
    .await;
    assert_eq!(answer.expect_ok(), "Overwrote `s.sh` (3 bytes, 1 line)");
    assert_eq!(get(tmp.path(), "s.sh"), "new");
    let mode = std::fs::metadata(tmp.path().join("s.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    let names: Vec<String> = snapshot(tmp.path()).into_iter().map(|(p, _)| p).collect();
    assert_eq!(names, ["s.sh"], "no temporary file is left");
}

#[tokio::test]
async fn write_file_replaces_rather_than_edits_in_place() {
    // A hard link to the old file keeps the old content: the write was a rename of a new file,
    // so no reader ever saw a half-written file.
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "old content");
    std::fs::hard_link(tmp.path().join("f.txt"), tmp.path().join("old_view")).unwrap();
    call(
        &ctx,
        "write_file",
        json!({"path": "f.txt", "content": "new content"}),
    )
    .await
    .expect_ok();
    assert_eq!(get(tmp.path(), "f.txt"), "new content");
    assert_eq!(get(tmp.path(), "old_view"), "old content");
}

#[tokio::test]
async fn write_file_refuses_a_directory_and_a_file_in_the_way() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "dir/x", "x");
    put(tmp.path(), "file", "f");
    let answers = call_many(
        &ctx,
        &[
            ("write_file", json!({"path": "dir", "content": "x"})),
            (
                "write_file",
                json!({"path": "file/child.txt", "content": "x"}),
            ),
            ("write_file", json!({"path": ".", "content": "x"})),
        ],
    )
    .await;
    assert!(
        answers[0].err().contains("`dir` is a directory"),
        "{}",
        answers[0].text
    );
    assert!(
        answers[1].err().contains("`file` is a file"),
        "{}",
        answers[1].text
    );
    assert!(
        answers[2].err().contains("workspace root"),
        "{}",
        answers[2].text
    );
}

// ---- list_dir ----

fn tree(root: &std::path::Path) {
    put(root, "Cargo.toml", "");
    put(root, "src/main.rs", "");
    put(root, "src/util/mod.rs", "");
    put(root, "b.txt", "");
    put(root, "a.txt", "");
    put(root, ".hidden/secret", "");
    put(root, ".env", "");
    put(root, "target/debug/app", "");
    put(root, "logs/run.log", "");
    put(root, "logs/keep.txt", "");
    put(root, ".gitignore", "/target\n*.log\n");
}

#[tokio::test]
async fn list_dir_is_sorted_with_slashes_and_respects_gitignore_and_hidden() {
    let (tmp, ctx) = ws();
    tree(tmp.path());
    let answer = call(&ctx, "list_dir", json!({})).await;
    assert_eq!(answer.expect_ok(), "Cargo.toml\na.txt\nb.txt\nlogs/\nsrc/");
}

#[tokio::test]
async fn list_dir_depth_descends_and_paths_are_relative_to_the_directory() {
    let (tmp, ctx) = ws();
    tree(tmp.path());
    let answer = call(&ctx, "list_dir", json!({"path": "src", "depth": 2})).await;
    assert_eq!(answer.expect_ok(), "main.rs\nutil/\nutil/mod.rs");
    let answer = call(&ctx, "list_dir", json!({"depth": 3})).await;
    assert_eq!(
        answer.expect_ok(),
        "Cargo.toml\na.txt\nb.txt\nlogs/\nlogs/keep.txt\nsrc/\nsrc/main.rs\nsrc/util/\nsrc/util/mod.rs"
    );
}

#[tokio::test]
async fn list_dir_applies_the_root_gitignore_to_subdirectories() {
    let (tmp, ctx) = ws();
    tree(tmp.path());
    let answer = call(&ctx, "list_dir", json!({"path": "logs"})).await;
    assert_eq!(answer.expect_ok(), "keep.txt");
}

#[tokio::test]
async fn list_dir_of_an_ignored_or_hidden_directory_lists_it_when_asked() {
    let (tmp, ctx) = ws();
    tree(tmp.path());
    assert_eq!(
        call(&ctx, "list_dir", json!({"path": "target"}))
            .await
            .expect_ok(),
        "debug/"
    );
    assert_eq!(
        call(&ctx, "list_dir", json!({"path": ".hidden"}))
            .await
            .expect_ok(),
        "secret"
    );
}

#[tokio::test]
async fn list_dir_marks_symlinks_and_caps_entries_with_a_notice() {
    let (tmp, ctx) = ws();
    for i in 0..30 {
        put(tmp.path(), &format!("f{i:02}.txt"), "");
    }
    symlink("f00.txt", tmp.path().join("link")).unwrap();
    let full = call(&ctx, "list_dir", json!({})).await;
    assert!(
        full.expect_ok().lines().any(|l| l == "link@"),
        "{}",
        full.text
    );
    let ctx = ctx.with_extension(FilesConfig {
        max_list_entries: 5,
        ..FilesConfig::default()
    });
    let answer = call(&ctx, "list_dir", json!({})).await;
    assert_eq!(
        answer.expect_ok(),
        "f00.txt\nf01.txt\nf02.txt\nf03.txt\nf04.txt\n\n[listing cut at 5 entries; list a subdirectory or use a smaller depth]"
    );
}

#[tokio::test]
async fn list_dir_errors_name_the_problem() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "");
    let answers = call_many(
        &ctx,
        &[
            ("list_dir", json!({"path": "f.txt"})),
            ("list_dir", json!({"path": "missing"})),
            ("list_dir", json!({"depth": 0})),
            ("list_dir", json!({"path": "empty"})),
        ],
    )
    .await;
    assert!(
        answers[0].err().contains("is a file"),
        "{}",
        answers[0].text
    );
    assert_eq!(answers[1].err(), "`missing` does not exist");
    assert!(answers[2].err().starts_with("invalid arguments: `depth`"));
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let answer = call(&ctx, "list_dir", json!({"path": "empty"})).await;
    assert!(
        answer.expect_ok().contains("`empty` is empty"),
        "{}",
        answer.text
    );
}

// ---- delete_file ----

#[tokio::test]
async fn delete_file_removes_a_file() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "gone.txt", "x");
    assert_eq!(
        call(&ctx, "delete_file", json!({"path": "gone.txt"}))
            .await
            .expect_ok(),
        "Deleted `gone.txt`"
    );
    assert!(!tmp.path().join("gone.txt").exists());
}

#[tokio::test]
async fn delete_file_refuses_directories_unless_recursive() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "d/e/f.txt", "x");
    let answer = call(&ctx, "delete_file", json!({"path": "d"})).await;
    assert!(answer.err().contains("recursive: true"), "{}", answer.text);
    assert!(tmp.path().join("d/e/f.txt").exists());
    let answer = call(&ctx, "remove_file", json!({"path": "d", "recursive": true})).await;
    assert_eq!(
        answer.expect_ok(),
        "Deleted the directory `d` and everything in it"
    );
    assert!(!tmp.path().join("d").exists());
}

#[tokio::test]
async fn delete_file_of_a_symlink_removes_the_link_not_the_target() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "target.txt", "keep me");
    symlink("target.txt", tmp.path().join("link")).unwrap();
    call(&ctx, "delete_file", json!({"path": "link"}))
        .await
        .expect_ok();
    assert!(std::fs::symlink_metadata(tmp.path().join("link")).is_err());
    assert_eq!(get(tmp.path(), "target.txt"), "keep me");
}

#[tokio::test]
async fn delete_file_of_a_missing_path_says_so() {
    let (_tmp, ctx) = ws();
    assert_eq!(
        call(&ctx, "delete_file", json!({"path": "ghost"}))
            .await
            .err(),
        "`ghost` does not exist"
    );
}

#[tokio::test]
async fn delete_file_is_deferred_until_tool_search_loads_it() {
    let registry = registry();
    let visible: Vec<String> = registry.definitions().into_iter().map(|d| d.name).collect();
    assert!(!visible.contains(&"delete_file".to_owned()), "{visible:?}");
    assert!(visible.contains(&"tool_search".to_owned()));
    let session = RunScope::new();
    let ctx = SkillContext::default().with_scope(session.clone());
    let results = registry
        .run_many(
            &[ToolCall::new(
                "1",
                "tool_search",
                json!({"query": "remove a file"}),
            )],
            &ctx,
        )
        .await;
    assert!(
        results[0].content().contains("delete_file"),
        "{}",
        results[0].content()
    );
    let loaded: Vec<String> = registry
        .definitions_for(&session)
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert!(loaded.contains(&"delete_file".to_owned()), "{loaded:?}");
    let meta = registry.metadata("remove_file").unwrap();
    assert!(meta.is_destructive && meta.should_defer && !meta.is_read_only);
}

#[tokio::test]
async fn a_write_to_a_path_ending_in_a_slash_is_refused_and_creates_nothing() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "keep.txt", "kept\n");
    let before = snapshot(tmp.path());
    for path in ["newdir/", "newdir/.", "keep.txt/"] {
        let answer = call(
            &ctx,
            "write_file",
            json!({"path": path, "content": "text\n"}),
        )
        .await;
        let text = answer.err();
        assert!(
            text.starts_with("invalid arguments: `path`") && text.contains("names a directory"),
            "{text}"
        );
        assert_eq!(snapshot(tmp.path()), before, "{path} changed the workspace");
    }
    let answer = call(
        &ctx,
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Add File: newdir/\n+text\n*** End Patch"}),
    )
    .await;
    assert!(
        answer.err().contains("names a directory"),
        "{}",
        answer.text
    );
    assert_eq!(snapshot(tmp.path()), before);
}
