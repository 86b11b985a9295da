//! `search_files` through `Registry::run_many`: ripgrep's engine over a real tree.

use crate::common;

use std::os::unix::fs::symlink;

use agent_core::SkillContext;
use common::{call, put};
use serde_json::json;

fn project() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    put(root, "src/main.rs", "fn main() {\n    helper();\n}\n");
    put(root, "src/lib.rs", "pub fn helper() {}\n// TODO: more\n");
    put(root, "src/deep/mod.rs", "// TODO: deep\nfn inner() {}\n");
    put(
        root,
        "README.md",
        "# Project\nTODO: write docs\n--help flag\n",
    );
    put(root, "target/debug/out.rs", "// TODO: generated\n");
    put(root, "notes.log", "TODO: log line\n");
    put(root, ".gitignore", "/target\n*.log\n");
    put(root, ".hidden/h.rs", "// TODO: hidden\n");
    put(root, "blob.bin", b"TODO\x00\x01\x02binary");
    let ctx = SkillContext::new(root);
    (tmp, ctx)
}

#[tokio::test]
async fn matches_are_path_line_text_sorted_and_skip_ignored_hidden_and_binary_files() {
    let (_tmp, ctx) = project();
    let answer = call(&ctx, "search_files", json!({"pattern": "TODO"})).await;
    assert_eq!(
        answer.expect_ok(),
        "README.md:2:TODO: write docs\nsrc/deep/mod.rs:1:// TODO: deep\nsrc/lib.rs:2:// TODO: more"
    );
}

#[tokio::test]
async fn the_pattern_is_a_regex() {
    let (_tmp, ctx) = project();
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": r"fn\s+(main|inner)\("}),
    )
    .await;
    assert_eq!(
        answer.expect_ok(),
        "src/deep/mod.rs:2:fn inner() {}\nsrc/main.rs:1:fn main() {"
    );
}

#[tokio::test]
async fn a_pattern_starting_with_a_dash_is_just_a_pattern() {
    let (_tmp, ctx) = project();
    let answer = call(&ctx, "search_files", json!({"pattern": "--help"})).await;
    assert_eq!(answer.expect_ok(), "README.md:3:--help flag");
    let answer = call(&ctx, "search_files", json!({"pattern": "-e"})).await;
    assert!(
        answer.expect_ok().starts_with("No matches"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn an_invalid_regex_is_a_bad_argument_on_pattern() {
    let (_tmp, ctx) = project();
    let answer = call(&ctx, "search_files", json!({"pattern": "fn (main"})).await;
    assert!(
        answer
            .err()
            .starts_with("invalid arguments: `pattern`: not a valid regex"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn glob_filters_file_names() {
    let (_tmp, ctx) = project();
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "TODO", "glob": "*.md"}),
    )
    .await;
    assert_eq!(answer.expect_ok(), "README.md:2:TODO: write docs");
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "TODO", "glob": "src/deep/**"}),
    )
    .await;
    assert_eq!(answer.expect_ok(), "src/deep/mod.rs:1:// TODO: deep");
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "x", "glob": "src/[a"}),
    )
    .await;
    assert!(
        answer.err().starts_with("invalid arguments: `glob`"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn path_narrows_to_a_directory_or_a_file() {
    let (_tmp, ctx) = project();
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "TODO", "path": "src/deep"}),
    )
    .await;
    assert_eq!(answer.expect_ok(), "src/deep/mod.rs:1:// TODO: deep");
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "fn", "path": "src/main.rs"}),
    )
    .await;
    assert_eq!(answer.expect_ok(), "src/main.rs:1:fn main() {");
    // A file named explicitly is searched even if ignored, as ripgrep does.
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "TODO", "path": "notes.log"}),
    )
    .await;
    assert_eq!(answer.expect_ok(), "notes.log:1:TODO: log line");
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "TODO", "path": "nowhere"}),
    )
    .await;
    assert_eq!(answer.err(), "`nowhere` does not exist");
}

#[tokio::test]
async fn the_root_gitignore_applies_when_searching_a_subdirectory() {
    let (tmp, ctx) = project();
    put(tmp.path(), "src/trace.log", "TODO: in a log under src\n");
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "TODO", "path": "src"}),
    )
    .await;
    assert!(!answer.expect_ok().contains("trace.log"), "{}", answer.text);
    assert!(
        answer.expect_ok().contains("src/lib.rs:2"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn results_are_capped_with_a_notice_that_counts_them() {
    let (tmp, ctx) = project();
    let many: String = (0..50).map(|i| format!("needle {i}\n")).collect();
    put(tmp.path(), "many.txt", many);
    put(tmp.path(), "more.txt", "needle x\n");
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "needle", "max_results": 3}),
    )
    .await;
    assert_eq!(
        answer.expect_ok(),
        "many.txt:1:needle 0\nmany.txt:2:needle 1\nmany.txt:3:needle 2\n\n[showing 3 of 51 matching lines in 2 files; narrow `pattern`, `path` or `glob`, or raise `max_results`]"
    );
}

#[tokio::test]
async fn no_matches_is_said_plainly_and_long_lines_are_cut() {
    let (tmp, ctx) = project();
    let answer = call(&ctx, "search_files", json!({"pattern": "zebra"})).await;
    assert_eq!(
        answer.expect_ok(),
        "No matches for `zebra` in the workspace."
    );
    put(
        tmp.path(),
        "min.js",
        format!("var needle={};\n", "1".repeat(1000)),
    );
    let answer = call(&ctx, "search_files", json!({"pattern": "needle"})).await;
    let text = answer.expect_ok();
    assert!(text.starts_with("min.js:1:var needle=1111"), "{text}");
    assert!(text.ends_with("… [712 more characters]"), "{text}");
}

#[tokio::test]
async fn symlinked_files_and_directories_are_not_followed() {
    let (tmp, ctx) = project();
    symlink("src", tmp.path().join("src_link")).unwrap();
    symlink("README.md", tmp.path().join("readme_link")).unwrap();
    let answer = call(&ctx, "search_files", json!({"pattern": "write docs"})).await;
    assert_eq!(answer.expect_ok(), "README.md:2:TODO: write docs");
}

#[tokio::test]
async fn many_searches_run_concurrently_in_one_batch() {
    let (_tmp, ctx) = project();
    let calls: Vec<(&str, serde_json::Value)> = (0..12)
        .map(|_| ("search_files", json!({"pattern": "helper"})))
        .collect();
    let answers = common::call_many(&ctx, &calls).await;
    for answer in answers {
        assert_eq!(
            answer.expect_ok(),
            "src/lib.rs:1:pub fn helper() {}\nsrc/main.rs:2:    helper();"
        );
    }
}
