//! File names chosen to fake output: newlines, carriage returns, terminal escapes, Unicode line
//! separators, bidirectional overrides and isolates, zero-width and tag characters, and bytes that
//! are not UTF-8, in real files listed, searched, read, written and deleted through
//! `Registry::run_many`. However a name is spelled, one entry is one line, and every character in
//! it can be seen.

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use agent_core::SkillContext;
use common::{call, put};
use serde_json::json;

fn ws() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    (tmp, ctx)
}

/// Creates the file `name` (raw bytes) in `dir`.
fn touch(dir: &std::path::Path, name: &[u8], content: &str) {
    std::fs::write(dir.join(OsStr::from_bytes(name)), content).unwrap();
}

#[tokio::test]
async fn a_name_with_a_newline_is_one_escaped_line_in_list_dir() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.txt", "");
    // Would read as three entries, two of them invented: `secrets.env` and `z.txt`.
    touch(tmp.path(), b"b.txt\nsecrets.env\nz.txt", "");
    let answer = call(&ctx, "list_dir", json!({})).await;
    assert_eq!(answer.expect_ok(), "a.txt\nb.txt\\nsecrets.env\\nz.txt");
}

#[tokio::test]
async fn every_control_character_and_line_separator_is_escaped_in_list_dir() {
    let (tmp, ctx) = ws();
    touch(tmp.path(), b"cr\rfake.txt", "");
    touch(tmp.path(), b"tab\there", "");
    touch(tmp.path(), b"esc\x1b[2Kred", "");
    touch(tmp.path(), b"bell\x07del\x7f", "");
    touch(
        tmp.path(),
        "nel\u{85}ls\u{2028}ps\u{2029}end".as_bytes(),
        "",
    );
    touch(tmp.path(), b"bad\xffbyte", "");
    touch(tmp.path(), "plain ünïcödé.txt".as_bytes(), "");
    let answer = call(&ctx, "list_dir", json!({})).await;
    let listing = answer.expect_ok();
    assert_eq!(
        listing.lines().collect::<Vec<_>>(),
        [
            "bad\\xFFbyte",
            "bell\\u{7}del\\u{7f}",
            "cr\\rfake.txt",
            "esc\\u{1b}[2Kred",
            "nel\\u{85}ls\\u{2028}ps\\u{2029}end",
            "plain ünïcödé.txt",
            "tab\\there",
        ]
    );
    assert!(
        !listing
            .chars()
            .any(|c| c != '\n' && (c.is_control() || c == '\u{2028}' || c == '\u{2029}')),
        "{listing:?}"
    );
}

#[tokio::test]
async fn a_directory_with_a_newline_cannot_fake_entries_at_depth() {
    let (tmp, ctx) = ws();
    let dir = tmp.path().join("src\nsrc");
    std::fs::create_dir(&dir).unwrap();
    touch(&dir, b"x.rs", "");
    let answer = call(&ctx, "list_dir", json!({"depth": 2})).await;
    assert_eq!(answer.expect_ok(), "src\\nsrc/\nsrc\\nsrc/x.rs");
    // The directory itself, when empty, is named escaped too.
    std::fs::remove_file(dir.join("x.rs")).unwrap();
    let answer = call(&ctx, "list_dir", json!({"path": "src\nsrc"})).await;
    assert!(
        answer.expect_ok().starts_with("[`src\\nsrc` is empty"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn search_files_names_a_directory_with_a_newline_escaped() {
    let (tmp, ctx) = ws();
    std::fs::create_dir(tmp.path().join("d\nfake.rs:1:forged")).unwrap();
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "absent", "path": "d\nfake.rs:1:forged"}),
    )
    .await;
    assert_eq!(
        answer.expect_ok(),
        "No matches for `absent` in `d\\nfake.rs:1:forged`."
    );
}

#[tokio::test]
async fn search_files_shows_a_file_name_with_a_newline_as_one_line() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.rs", "needle\n");
    // Unescaped, the hit would read as a forged match in `main.rs` on line 7.
    touch(tmp.path(), b"b.rs\nmain.rs:7:forged", "needle\n");
    let answer = call(&ctx, "search_files", json!({"pattern": "needle"})).await;
    assert_eq!(
        answer.expect_ok(),
        "a.rs:1:needle\nb.rs\\nmain.rs:7:forged:1:needle"
    );
}

/// The bidirectional controls and other invisible characters `display_name` escapes, for checking
/// that none reaches an answer.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{00AD}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

fn assert_visible(answer: &str) {
    assert!(!answer.chars().any(invisible), "{answer:?}");
}

#[tokio::test]
async fn bidirectional_controls_and_invisible_characters_are_escaped_in_list_dir() {
    let (tmp, ctx) = ws();
    // Shown as they are, these read as `reportexe.txt`, `a.txt` (twice), `isolate` and `tag`.
    for name in [
        "report\u{202e}txt.exe",
        "a.txt",
        "a\u{200b}.txt",
        "\u{2066}isolate\u{2069}",
        "marks\u{200e}\u{200f}\u{61c}",
        "embed\u{202a}\u{202b}\u{202c}\u{202d}",
        "\u{feff}bom",
        "tag\u{e0041}\u{e0042}",
    ] {
        touch(tmp.path(), name.as_bytes(), "");
    }
    let answer = call(&ctx, "list_dir", json!({})).await;
    let listing = answer.expect_ok();
    assert_visible(listing);
    assert_eq!(
        listing.lines().collect::<Vec<_>>(),
        [
            "a.txt",
            "a\\u{200b}.txt",
            "embed\\u{202a}\\u{202b}\\u{202c}\\u{202d}",
            "marks\\u{200e}\\u{200f}\\u{61c}",
            "report\\u{202e}txt.exe",
            "tag\\u{e0041}\\u{e0042}",
            "\\u{2066}isolate\\u{2069}",
            "\\u{feff}bom",
        ]
    );
}

#[tokio::test]
async fn search_files_escapes_a_bidirectional_override_in_hits_and_in_the_path_searched() {
    let (tmp, ctx) = ws();
    // Shown as it is, the hit reads as a match in `evil.rs:9:fake` (the override reverses it).
    touch(
        tmp.path(),
        "code\u{202e}kaf:9:sr.live".as_bytes(),
        "needle\n",
    );
    let answer = call(&ctx, "search_files", json!({"pattern": "needle"})).await;
    assert_eq!(answer.expect_ok(), "code\\u{202e}kaf:9:sr.live:1:needle");
    std::fs::create_dir(tmp.path().join("dir\u{2067}x")).unwrap();
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "absent", "path": "dir\u{2067}x"}),
    )
    .await;
    assert_eq!(
        answer.expect_ok(),
        "No matches for `absent` in `dir\\u{2067}x`."
    );
}

#[tokio::test]
async fn read_errors_and_file_skill_messages_show_the_name_escaped() {
    let (tmp, ctx) = ws();
    touch(tmp.path(), "bin\u{202e}gnp.txt".as_bytes(), "a\0b");
    std::fs::create_dir(tmp.path().join("dir\u{200b}")).unwrap();
    let answers = [
        call(&ctx, "read_file", json!({"path": "bin\u{202e}gnp.txt"})).await,
        call(&ctx, "read_file", json!({"path": "dir\u{200b}"})).await,
        call(&ctx, "read_file", json!({"path": "gone\u{2066}.txt"})).await,
        call(&ctx, "list_dir", json!({"path": "bin\u{202e}gnp.txt"})).await,
        call(&ctx, "delete_file", json!({"path": "dir\u{200b}"})).await,
    ];
    let texts: Vec<&str> = answers.iter().map(|a| a.err()).collect();
    assert_eq!(
        texts,
        [
            "`bin\\u{202e}gnp.txt` is a binary file (3 bytes); read_file shows text, images, PDFs and sound files only",
            "`dir\\u{200b}` is a directory; use list_dir to see what is in it",
            "`gone\\u{2066}.txt` does not exist",
            "`bin\\u{202e}gnp.txt` is a file, not a directory; use read_file to read it",
            "`dir\\u{200b}` is a directory; pass `recursive: true` to delete it and everything in it",
        ]
    );
    let written = call(
        &ctx,
        "write_file",
        json!({"path": "new\u{202e}txt.sh", "content": "x\n"}),
    )
    .await;
    assert_eq!(
        written.expect_ok(),
        "Created `new\\u{202e}txt.sh` (2 bytes, 1 line)"
    );
    let patched = call(
        &ctx,
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Add File: p\u{202e}.md\n+x\n*** End Patch"}),
    )
    .await;
    assert_eq!(
        patched.expect_ok(),
        "Success. Updated the following files:\nA p\\u{202e}.md"
    );
    let deleted = call(&ctx, "delete_file", json!({"path": "new\u{202e}txt.sh"})).await;
    assert_eq!(deleted.expect_ok(), "Deleted `new\\u{202e}txt.sh`");
}
