//! The `apply_patch` suite: the V4A grammar, forgiving context matching, and all-or-nothing
//! commits across files, through `Registry::run_many` on real files.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use agent_core::SkillContext;
use common::{call, get, put, snapshot};
use serde_json::json;

fn ws() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    (tmp, ctx)
}

async fn apply(ctx: &SkillContext, body: &str) -> common::Answer {
    call(
        ctx,
        "apply_patch",
        json!({"patch": format!("*** Begin Patch\n{body}\n*** End Patch\n")}),
    )
    .await
}

fn no_temp_files(root: &Path) {
    for (path, _) in snapshot(root) {
        assert!(
            !path.contains(".eugene-"),
            "a temporary file was left: {path}"
        );
    }
}

#[tokio::test]
async fn add_update_delete_and_move_report_a_m_d_lines() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "src/lib.rs", "fn a() {}\nfn b() {}\n");
    put(tmp.path(), "old.txt", "bye\n");
    put(tmp.path(), "mv.txt", "one\ntwo\n");
    let answer = apply(
        &ctx,
        "*** Add File: docs/new.md\n+# Title\n+\n+text\n\
         *** Update File: src/lib.rs\n fn a() {}\n-fn b() {}\n+fn b() { a() }\n\
         *** Delete File: old.txt\n\
         *** Update File: mv.txt\n*** Move to: moved/here.txt\n one\n-two\n+TWO",
    )
    .await;
    assert_eq!(
        answer.expect_ok(),
        "Success. Updated the following files:\nA docs/new.md\nM src/lib.rs\nD old.txt\nM moved/here.txt (moved from mv.txt)"
    );
    assert_eq!(get(tmp.path(), "docs/new.md"), "# Title\n\ntext\n");
    assert_eq!(get(tmp.path(), "src/lib.rs"), "fn a() {}\nfn b() { a() }\n");
    assert!(!tmp.path().join("old.txt").exists());
    assert!(!tmp.path().join("mv.txt").exists());
    assert_eq!(get(tmp.path(), "moved/here.txt"), "one\nTWO\n");
    no_temp_files(tmp.path());
}

#[tokio::test]
async fn a_failing_hunk_leaves_every_file_unchanged() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.txt", "alpha\nbeta\n");
    put(tmp.path(), "b.txt", "gamma\ndelta\n");
    put(tmp.path(), "c.txt", "doomed\n");
    let before = snapshot(tmp.path());
    let answer = apply(
        &ctx,
        "*** Update File: a.txt\n-alpha\n+ALPHA\n\
         *** Add File: new/dir/created.txt\n+x\n\
         *** Delete File: c.txt\n\
         *** Update File: b.txt\n gamma\n-epsilon\n+EPSILON",
    )
    .await;
    let text = answer.err();
    assert!(text.contains("no file was changed"), "{text}");
    assert!(text.contains("`b.txt`"), "names the file: {text}");
    assert!(text.contains("`epsilon`"), "names the line: {text}");
    assert_eq!(snapshot(tmp.path()), before, "a file changed");
}

#[tokio::test]
async fn a_missing_file_late_in_the_patch_leaves_earlier_adds_uncreated() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "keep.txt", "keep\n");
    let before = snapshot(tmp.path());
    let answer = apply(
        &ctx,
        "*** Add File: deep/er/one.txt\n+1\n*** Add File: two.txt\n+2\n*** Delete File: ghost.txt",
    )
    .await;
    assert!(
        answer.err().contains("`ghost.txt` does not exist"),
        "{}",
        answer.text
    );
    assert_eq!(snapshot(tmp.path()), before);
    assert!(
        !tmp.path().join("deep").exists(),
        "created directories are removed"
    );
}

#[tokio::test]
async fn a_failure_while_staging_removes_the_staged_files_and_directories() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.txt", "a\n");
    let before = snapshot(tmp.path());
    // Staging `d/f.txt` creates the directory `d`, so staging the file `d` then fails: after the
    // plan passed, before anything was renamed into place.
    let answer = apply(
        &ctx,
        "*** Update File: a.txt\n-a\n+A\n*** Add File: d/f.txt\n+f\n*** Add File: d\n+x",
    )
    .await;
    let text = answer.err();
    assert!(
        text.contains("no file was changed") && text.contains("`d`"),
        "{text}"
    );
    assert_eq!(snapshot(tmp.path()), before);
    no_temp_files(tmp.path());
}

#[tokio::test]
async fn a_failure_half_way_through_the_renames_is_rolled_back() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.txt", "a\n");
    put(tmp.path(), "z.txt", "z\n");
    let before = snapshot(tmp.path());
    // Both stage fine, but `a.txt` is renamed into place before the file `d` meets the directory
    // `d` that staging `d/f.txt` created: the rename fails and `a.txt` must be put back.
    let answer = apply(
        &ctx,
        "*** Update File: a.txt\n-a\n+A\n*** Add File: d\n+x\n*** Add File: d/f.txt\n+f\n*** Delete File: z.txt",
    )
    .await;
    assert!(
        answer.err().contains("no file was changed"),
        "{}",
        answer.text
    );
    assert_eq!(snapshot(tmp.path()), before);
    no_temp_files(tmp.path());
}

#[tokio::test]
async fn errors_name_the_file_and_the_context_line() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "main.rs", "fn main() {\n    run();\n}\n");
    let answer = apply(
        &ctx,
        "*** Update File: main.rs\n fn main() {\n-    start();\n+    begin();\n }",
    )
    .await;
    let text = answer.err();
    assert!(text.contains("`main.rs`"), "{text}");
    assert!(text.contains("`    start();`"), "{text}");
    let answer = apply(&ctx, "*** Update File: main.rs\n@@ fn helper() {\n-x\n+y").await;
    assert!(
        answer.err().contains("`@@ fn helper() {`"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn lines_present_but_out_of_order_are_reported_as_such() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "a\nb\nc\n");
    let answer = apply(&ctx, "*** Update File: f.txt\n c\n-a\n+A").await;
    assert!(
        answer.err().contains("not in the file in this order"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn context_matches_ignoring_trailing_whitespace() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.py", "def f():   \n    return 1\t\n");
    apply(
        &ctx,
        "*** Update File: f.py\n def f():\n-    return 1\n+    return 2",
    )
    .await
    .expect_ok();
    assert_eq!(get(tmp.path(), "f.py"), "def f():   \n    return 2\n");
}

#[tokio::test]
async fn context_matches_ignoring_surrounding_whitespace() {
    let (tmp, ctx) = ws();
    put(
        tmp.path(),
        "f.py",
        "class A:\n        def f(self):\n            pass\n",
    );
    apply(
        &ctx,
        "*** Update File: f.py\n     def f(self):\n-        pass\n+            return 1",
    )
    .await
    .expect_ok();
    assert_eq!(
        get(tmp.path(), "f.py"),
        "class A:\n        def f(self):\n            return 1\n"
    );
}

#[tokio::test]
async fn context_matches_after_normalising_unicode_punctuation() {
    let (tmp, ctx) = ws();
    put(
        tmp.path(),
        "notes.txt",
        "title \u{2014} draft\nsay \u{201C}hi\u{201D} and \u{2018}bye\u{2019}\u{00A0}now\n",
    );
    apply(
        &ctx,
        "*** Update File: notes.txt\n title - draft\n-say \"hi\" and 'bye' now\n+say hello",
    )
    .await
    .expect_ok();
    assert_eq!(
        get(tmp.path(), "notes.txt"),
        "title \u{2014} draft\nsay hello\n"
    );
}

#[tokio::test]
async fn exact_matches_win_over_fuzzy_ones() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "x = 1  \nx = 1\n");
    apply(&ctx, "*** Update File: f.txt\n-x = 1\n+x = 2")
        .await
        .expect_ok();
    assert_eq!(get(tmp.path(), "f.txt"), "x = 1  \nx = 2\n");
}

#[tokio::test]
async fn at_at_context_picks_the_right_one_of_repeated_blocks() {
    let (tmp, ctx) = ws();
    put(
        tmp.path(),
        "lib.rs",
        "fn a() {\n    todo!()\n}\n\nfn b() {\n    todo!()\n}\n",
    );
    apply(
        &ctx,
        "*** Update File: lib.rs\n@@ fn b() {\n-    todo!()\n+    42",
    )
    .await
    .expect_ok();
    assert_eq!(
        get(tmp.path(), "lib.rs"),
        "fn a() {\n    todo!()\n}\n\nfn b() {\n    42\n}\n"
    );
}

#[tokio::test]
async fn nested_at_at_headers_narrow_down_in_turn() {
    let (tmp, ctx) = ws();
    put(
        tmp.path(),
        "m.py",
        "class A:\n    def f(self):\n        pass\nclass B:\n    def f(self):\n        pass\n",
    );
    apply(
        &ctx,
        "*** Update File: m.py\n@@ class B:\n@@     def f(self):\n-        pass\n+        return 'B'",
    )
    .await
    .expect_ok();
    assert_eq!(
        get(tmp.path(), "m.py"),
        "class A:\n    def f(self):\n        pass\nclass B:\n    def f(self):\n        return 'B'\n"
    );
}

#[tokio::test]
async fn several_chunks_in_one_file_apply_in_order() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "1\n2\n3\n4\n5\n6\n7\n8\n");
    apply(
        &ctx,
        "*** Update File: f.txt\n@@\n 1\n-2\n+two\n 3\n@@\n 6\n-7\n+seven\n 8",
    )
    .await
    .expect_ok();
    assert_eq!(get(tmp.path(), "f.txt"), "1\ntwo\n3\n4\n5\n6\nseven\n8\n");
}

#[tokio::test]
async fn end_of_file_anchors_the_chunk_at_the_end() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "}\nmiddle\n}\n");
    apply(
        &ctx,
        "*** Update File: f.txt\n-}\n+} // end\n*** End of File",
    )
    .await
    .expect_ok();
    assert_eq!(get(tmp.path(), "f.txt"), "}\nmiddle\n} // end\n");
}

#[tokio::test]
async fn pure_additions_go_after_the_at_at_line_or_at_the_end() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "header\nbody\n");
    apply(&ctx, "*** Update File: f.txt\n@@ header\n+inserted")
        .await
        .expect_ok();
    assert_eq!(get(tmp.path(), "f.txt"), "header\ninserted\nbody\n");
    apply(&ctx, "*** Update File: f.txt\n+appended")
        .await
        .expect_ok();
    assert_eq!(
        get(tmp.path(), "f.txt"),
        "header\ninserted\nbody\nappended\n"
    );
}

#[tokio::test]
async fn padded_markers_and_a_blank_separator_line_are_accepted() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "a\nb\n");
    let answer = call(
        &ctx,
        "apply_patch",
        json!({"patch": "  *** Begin Patch\n  *** Update File: f.txt  \n a\n-b\n+B\n\n   *** End Patch   \n"}),
    )
    .await;
    assert!(answer.expect_ok().contains("M f.txt"));
    assert_eq!(get(tmp.path(), "f.txt"), "a\nB\n");
}

#[tokio::test]
async fn crlf_files_keep_crlf_and_files_without_a_final_newline_keep_none() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "win.txt", "one\r\ntwo\r\n");
    put(tmp.path(), "bare.txt", "one\ntwo");
    apply(
        &ctx,
        "*** Update File: win.txt\n one\n-two\n+2\n*** Update File: bare.txt\n one\n-two\n+2",
    )
    .await
    .expect_ok();
    assert_eq!(get(tmp.path(), "win.txt"), "one\r\n2\r\n");
    assert_eq!(get(tmp.path(), "bare.txt"), "one\n2");
}

#[tokio::test]
async fn an_updated_file_keeps_its_permissions() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        tmp.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    apply(&ctx, "*** Update File: run.sh\n-echo hi\n+echo bye")
        .await
        .expect_ok();
    let mode = std::fs::metadata(tmp.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);
}

#[tokio::test]
async fn adding_an_existing_file_or_moving_onto_one_is_refused() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.txt", "a\n");
    put(tmp.path(), "b.txt", "b\n");
    let answer = apply(&ctx, "*** Add File: a.txt\n+new").await;
    assert!(
        answer.err().contains("`a.txt` already exists"),
        "{}",
        answer.text
    );
    let answer = apply(&ctx, "*** Update File: a.txt\n*** Move to: b.txt\n-a\n+A").await;
    assert!(
        answer.err().contains("`b.txt` already exists"),
        "{}",
        answer.text
    );
    assert_eq!(get(tmp.path(), "a.txt"), "a\n");
    assert_eq!(get(tmp.path(), "b.txt"), "b\n");
}

#[tokio::test]
async fn a_pure_move_needs_no_chunks() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.txt", "content\n");
    apply(&ctx, "*** Update File: a.txt\n*** Move to: sub/b.txt")
        .await
        .expect_ok();
    assert_eq!(get(tmp.path(), "sub/b.txt"), "content\n");
    assert!(!tmp.path().join("a.txt").exists());
}

#[tokio::test]
async fn a_path_in_two_operations_is_refused() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "a.txt", "a\n");
    let answer = apply(
        &ctx,
        "*** Update File: a.txt\n-a\n+b\n*** Delete File: ./a.txt",
    )
    .await;
    assert!(
        answer.err().contains("more than one operation"),
        "{}",
        answer.text
    );
    assert_eq!(get(tmp.path(), "a.txt"), "a\n");
}

#[tokio::test]
async fn malformed_patches_are_bad_arguments_naming_the_line() {
    let (_tmp, ctx) = ws();
    for (patch, expected) in [
        ("", "empty"),
        (
            "*** Update File: a\n-x",
            "must start with `*** Begin Patch`",
        ),
        (
            "*** Begin Patch\n*** Add File: a\n+x",
            "must end with `*** End Patch`",
        ),
        (
            "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch",
            "line 3",
        ),
        (
            "*** Begin Patch\n*** Frobnicate: a\n*** End Patch",
            "line 2",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            "no changes",
        ),
        (
            "*** Begin Patch\n*** Update File:\n-x\n*** End Patch",
            "needs a path",
        ),
        ("*** Begin Patch\n*** End Patch", "no file operations"),
    ] {
        let answer = call(&ctx, "apply_patch", json!({ "patch": patch })).await;
        let text = answer.err();
        assert!(
            text.starts_with("invalid arguments: `patch`:"),
            "{patch:?}: {text}"
        );
        assert!(text.contains(expected), "{patch:?}: {text}");
    }
}

#[tokio::test]
async fn binary_files_are_not_patched() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "blob.bin", [0xff, 0xfe, 0x00, 0x01]);
    let answer = apply(&ctx, "*** Update File: blob.bin\n-x\n+y").await;
    assert!(answer.err().contains("not UTF-8"), "{}", answer.text);
}

#[tokio::test]
async fn directories_are_not_deleted_by_a_patch() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "dir/f.txt", "f\n");
    let answer = apply(&ctx, "*** Delete File: dir").await;
    assert!(answer.err().contains("is a directory"), "{}", answer.text);
    assert!(tmp.path().join("dir/f.txt").exists());
}

#[tokio::test]
async fn mixed_line_endings_are_kept_line_by_line() {
    let (tmp, ctx) = ws();
    // Mostly `\n`, one `\r\n` line: the lines the patch does not touch must keep their bytes.
    put(tmp.path(), "mixed.txt", "one\ntwo\r\nthree\nfour\n");
    apply(&ctx, "*** Update File: mixed.txt\n-one\n+ONE")
        .await
        .expect_ok();
    assert_eq!(get(tmp.path(), "mixed.txt"), "ONE\ntwo\r\nthree\nfour\n");
}

#[tokio::test]
async fn one_file_named_twice_through_a_linked_directory_is_refused() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "real/a.txt", "one\ntwo\nthree\n");
    std::os::unix::fs::symlink("real", tmp.path().join("alias")).unwrap();
    let before = snapshot(tmp.path());
    // Two updates of the same file under two names: applied one after the other, the second
    // would overwrite the first and lose it.
    let answer = apply(
        &ctx,
        "*** Update File: real/a.txt\n-one\n+ONE\n*** Update File: alias/a.txt\n-three\n+THREE",
    )
    .await;
    assert!(
        answer.err().contains("more than one operation"),
        "{}",
        answer.text
    );
    // Two adds of one new file likewise.
    let answer = apply(
        &ctx,
        "*** Add File: real/new/b.txt\n+first\n*** Add File: alias/new/b.txt\n+second",
    )
    .await;
    assert!(
        answer.err().contains("more than one operation"),
        "{}",
        answer.text
    );
    assert_eq!(snapshot(tmp.path()), before);
}

#[tokio::test]
async fn a_moved_file_keeps_its_permissions() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        tmp.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    apply(
        &ctx,
        "*** Update File: run.sh\n*** Move to: bin/run.sh\n-echo hi\n+echo bye",
    )
    .await
    .expect_ok();
    let mode = std::fs::metadata(tmp.path().join("bin/run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);
}
