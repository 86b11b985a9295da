//! `apply_patch` and text that looks like its own markers: inside the changes to a file a line
//! starting with a space is context, whatever its text; boundaries and headers may be padded; a
//! patch wrapped in a shell here-document is unwrapped. Through `Registry::run_many` on real files,
//! plus a property test over the pure parser and applier.

use crate::common;

use agent_core::SkillContext;
use agent_std_tools::patch::{Hunk, apply_chunks, parse};
use common::{call, get, put};
use proptest::prelude::*;
use serde_json::json;

fn ws() -> (tempfile::TempDir, SkillContext) {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    (tmp, ctx)
}

async fn patch(ctx: &SkillContext, text: &str) -> common::Answer {
    call(ctx, "apply_patch", json!({ "patch": text })).await
}

#[tokio::test]
async fn a_context_line_that_looks_like_an_at_at_header_is_context() {
    let (tmp, ctx) = ws();
    let file = "def foo():\n    return 1\n\nA V4A hunk:\n@@ def foo():\n    return 1\n";
    put(tmp.path(), "f.md", file);
    let answer = patch(
        &ctx,
        "*** Begin Patch\n*** Update File: f.md\n@@\n @@ def foo():\n-    return 1\n+    return 2\n*** End Patch",
    )
    .await;
    answer.expect_ok();
    assert_eq!(
        get(tmp.path(), "f.md"),
        "def foo():\n    return 1\n\nA V4A hunk:\n@@ def foo():\n    return 2\n",
        "line 6 changes, line 2 stays"
    );
}

#[tokio::test]
async fn context_lines_that_look_like_file_markers_are_context() {
    for marker in [
        "*** End Patch",
        "*** Add File: x",
        "*** Update File: y",
        "*** Delete File: z",
        "*** End of File",
        "@@ -1 +1 @@",
        "*** Begin Patch",
    ] {
        let (tmp, ctx) = ws();
        let file = format!("old\nintro\n{marker}\nold\nend\n");
        put(tmp.path(), "doc.md", &file);
        let text = format!(
            "*** Begin Patch\n*** Update File: doc.md\n {marker}\n-old\n+new\n end\n*** End Patch\n"
        );
        let answer = patch(&ctx, &text).await;
        assert!(!answer.is_error, "{marker:?}: {}", answer.text);
        assert_eq!(
            get(tmp.path(), "doc.md"),
            format!("old\nintro\n{marker}\nnew\nend\n"),
            "{marker:?}"
        );
        assert!(!tmp.path().join("x").exists(), "{marker:?} added a file");
    }
}

#[tokio::test]
async fn a_context_line_like_end_patch_before_the_real_end_is_context() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "p.txt", "a\n*** End Patch\nb\n");
    let answer = patch(
        &ctx,
        "*** Begin Patch\n*** Update File: p.txt\n a\n *** End Patch\n-b\n+B\n*** End Patch",
    )
    .await;
    answer.expect_ok();
    assert_eq!(get(tmp.path(), "p.txt"), "a\n*** End Patch\nB\n");
}

#[tokio::test]
async fn a_pure_addition_at_the_end_does_not_move_the_cursor() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "line1\nline2\nline3\n");
    let answer = patch(
        &ctx,
        "*** Begin Patch\n*** Update File: f.txt\n@@\n+after-context\n+second-line\n@@\n line1\n-line2\n-line3\n+line2-replacement\n*** End Patch",
    )
    .await;
    answer.expect_ok();
    assert_eq!(
        get(tmp.path(), "f.txt"),
        "line1\nline2-replacement\nafter-context\nsecond-line\n"
    );
}

#[tokio::test]
async fn a_patch_wrapped_in_a_here_document_is_unwrapped() {
    for open in ["<<'EOF'", "<<EOF", "<<\"EOF\""] {
        let (tmp, ctx) = ws();
        put(tmp.path(), "f.txt", "a\nb\n");
        let text = format!(
            "{open}\n*** Begin Patch\n*** Update File: f.txt\n a\n-b\n+B\n*** End Patch\nEOF\n"
        );
        let answer = patch(&ctx, &text).await;
        assert!(!answer.is_error, "{open}: {}", answer.text);
        assert_eq!(get(tmp.path(), "f.txt"), "a\nB\n", "{open}");
    }
}

#[tokio::test]
async fn an_empty_here_document_is_a_clear_error() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "f.txt", "a\n");
    let answer = patch(&ctx, "<<'EOF'\n\nEOF\n").await;
    let text = answer.err();
    assert!(text.contains("empty"), "{text}");
    assert_eq!(get(tmp.path(), "f.txt"), "a\n");
}

#[tokio::test]
async fn padded_boundaries_and_headers_still_work() {
    let (tmp, ctx) = ws();
    put(tmp.path(), "x", "a\nb\n");
    put(tmp.path(), "gone", "bye\n");
    // A padded first line, a padded header where a header is expected (after a delete, after an
    // add's `+` lines), and a padded last line right after a `+` line.
    let text = " *** Begin Patch\n  *** Delete File: gone\n  *** Add File: new.txt\n+hello\n  *** Update File: x\n a\n-b\n+B\n *** End Patch\n";
    let answer = patch(&ctx, text).await;
    assert!(answer.expect_ok().contains("M x"), "{}", answer.text);
    assert_eq!(get(tmp.path(), "x"), "a\nB\n");
    assert_eq!(get(tmp.path(), "new.txt"), "hello\n");
    assert!(!tmp.path().join("gone").exists());
}

/// Text that starts like one of the patch's own markers.
fn marker_like() -> impl Strategy<Value = String> {
    let heads = prop::sample::select(vec![
        "@@",
        "@@ ",
        "@@ -1 +1 @@",
        "*** Begin Patch",
        "*** End Patch",
        "*** End of File",
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
        "<<'EOF'",
        "EOF",
    ]);
    (0..3usize, heads, "[a-z .():]{0,8}")
        .prop_map(|(pad, head, tail)| format!("{}{head}{tail}", " ".repeat(pad)))
}

proptest! {
    /// A hunk anchored on a marker-like context line edits the line after that context line,
    /// never an earlier copy of the same line, whatever the marker text.
    #[test]
    fn marker_like_context_never_moves_the_edit(marker in marker_like(), trailing in any::<bool>()) {
        let file = format!("start\ntarget\nmiddle\n{marker}\ntarget\nend\n");
        let body = if trailing {
            // The marker-like line follows the change instead of preceding it.
            format!(" middle\n-{marker}\n+{marker}\n-target\n+changed\n end")
        } else {
            format!(" {marker}\n-target\n+changed\n end")
        };
        let text = format!("*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch\n");
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(parsed.hunks.len(), 1);
        let Hunk::Update { chunks, .. } = &parsed.hunks[0] else {
            return Err(TestCaseError::fail("expected an update"));
        };
        let result =
            apply_chunks(&file, "f", chunks).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(result, format!("start\ntarget\nmiddle\n{marker}\nchanged\nend\n"));
    }
}
