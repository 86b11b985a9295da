//! The sandbox attack suite: real symbolic links in temp dirs, every file skill, every way out.
//! Each refusal must be a `Safety` error naming the path, and afterwards neither the workspace nor
//! the directory beside it has changed in any way.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use agent_core::SkillContext;
use common::{Answer, call, call_many, get, put, snapshot};
use serde_json::{Value, json};

const SECRET: &str = "TOP-SECRET-TOKEN-42";

/// `tmp/outside` (a secret, a directory) beside `tmp/ws` (the workspace) full of links.
struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let outside = tmp.path().join("outside");
        put(&outside, "secret.txt", format!("{SECRET}\n"));
        put(&outside, "dir/inner.txt", format!("{SECRET} inner\n"));
        put(&ws, "real.txt", "real\n");
        put(&ws, "sub/file.txt", "in sub\n");
        let link = |target: &Path, name: &str| symlink(target, ws.join(name)).unwrap();
        link(&outside.join("secret.txt"), "link_out_abs");
        link(Path::new("../outside/secret.txt"), "link_out_rel");
        link(Path::new("../outside"), "dir_out");
        link(&outside, "dir_out_abs");
        link(Path::new("dir_out/secret.txt"), "chain");
        link(Path::new("../.."), "sub/up_out");
        link(Path::new(".."), "sub/up_in");
        link(&ws.join("real.txt"), "abs_inside");
        link(Path::new("missing.txt"), "dangling_in");
        link(Path::new("../outside/missing.txt"), "dangling_out");
        link(Path::new("loop_b"), "loop_a");
        link(Path::new("loop_a"), "loop_b");
        link(Path::new("real.txt"), "inside_link");
        link(Path::new("sub"), "inside_dir_link");
        Fixture {
            _tmp: tmp,
            ws,
            outside,
        }
    }

    fn ctx(&self) -> SkillContext {
        SkillContext::new(&self.ws)
    }

    fn out(&self, rel: &str) -> String {
        self.outside.join(rel).to_string_lossy().into_owned()
    }
}

fn patch(body: &str) -> Value {
    json!({ "patch": format!("*** Begin Patch\n{body}\n*** End Patch") })
}

/// (skill, arguments, the path the refusal must name)
fn attacks(f: &Fixture) -> Vec<(&'static str, Value, String)> {
    let long_path = "a/".repeat(2500);
    let long_name = "x".repeat(300);
    let mut cases = vec![
        // read_file: every way out
        (
            "read_file",
            json!({"path": "/etc/passwd"}),
            "/etc/passwd".into(),
        ),
        (
            "read_file",
            json!({"path": f.out("secret.txt")}),
            f.out("secret.txt"),
        ),
        (
            "read_file",
            json!({"path": "../outside/secret.txt"}),
            "../outside/secret.txt".into(),
        ),
        (
            "read_file",
            json!({"path": "sub/../../outside/secret.txt"}),
            "sub/../../outside/secret.txt".into(),
        ),
        (
            "read_file",
            json!({"path": "link_out_abs"}),
            "link_out_abs".into(),
        ),
        (
            "read_file",
            json!({"path": "link_out_rel"}),
            "link_out_rel".into(),
        ),
        (
            "read_file",
            json!({"path": "dir_out/secret.txt"}),
            "dir_out/secret.txt".into(),
        ),
        (
            "read_file",
            json!({"path": "dir_out_abs/secret.txt"}),
            "dir_out_abs/secret.txt".into(),
        ),
        (
            "read_file",
            json!({"path": "dir_out/dir/inner.txt"}),
            "dir_out/dir/inner.txt".into(),
        ),
        ("read_file", json!({"path": "chain"}), "chain".into()),
        (
            "read_file",
            json!({"path": "sub/up_out/outside/secret.txt"}),
            "sub/up_out/outside/secret.txt".into(),
        ),
        (
            "read_file",
            json!({"path": "abs_inside"}),
            "abs_inside".into(),
        ),
        (
            "read_file",
            json!({"path": "dangling_in"}),
            "dangling_in".into(),
        ),
        (
            "read_file",
            json!({"path": "dangling_out"}),
            "dangling_out".into(),
        ),
        ("read_file", json!({"path": "loop_a"}), "loop_a".into()),
        (
            "read_file",
            json!({"path": "real.txt\u{0}.png"}),
            "real.txt\\0.png".into(),
        ),
        ("read_file", json!({"path": long_path}), "a/a/a/a/a/".into()),
        (
            "read_file",
            json!({"path": format!("sub/{long_name}")}),
            "sub/xxxx".into(),
        ),
        // write_file: nothing may be created or changed outside
        (
            "write_file",
            json!({"path": "../outside/new.txt", "content": "x"}),
            "../outside/new.txt".into(),
        ),
        (
            "write_file",
            json!({"path": f.out("new.txt"), "content": "x"}),
            f.out("new.txt"),
        ),
        (
            "write_file",
            json!({"path": "dir_out/new.txt", "content": "x"}),
            "dir_out/new.txt".into(),
        ),
        (
            "write_file",
            json!({"path": "dir_out/newdir/new.txt", "content": "x"}),
            "dir_out/newdir/new.txt".into(),
        ),
        (
            "write_file",
            json!({"path": "dir_out_abs/new.txt", "content": "x"}),
            "dir_out_abs/new.txt".into(),
        ),
        (
            "write_file",
            json!({"path": "link_out_rel", "content": "pwned"}),
            "link_out_rel".into(),
        ),
        (
            "write_file",
            json!({"path": "link_out_abs", "content": "pwned"}),
            "link_out_abs".into(),
        ),
        (
            "write_file",
            json!({"path": "dangling_out", "content": "x"}),
            "dangling_out".into(),
        ),
        (
            "write_file",
            json!({"path": "dangling_in", "content": "x"}),
            "dangling_in".into(),
        ),
        (
            "write_file",
            json!({"path": "dangling_in/x.txt", "content": "x"}),
            "dangling_in/x.txt".into(),
        ),
        (
            "write_file",
            json!({"path": "sub/up_out/outside/new.txt", "content": "x"}),
            "sub/up_out/outside/new.txt".into(),
        ),
        // apply_patch
        (
            "apply_patch",
            patch("*** Add File: ../outside/p.txt\n+x"),
            "../outside/p.txt".into(),
        ),
        (
            "apply_patch",
            patch("*** Add File: dir_out/p.txt\n+x"),
            "dir_out/p.txt".into(),
        ),
        (
            "apply_patch",
            patch(&format!("*** Add File: {}\n+x", f.out("p.txt"))),
            f.out("p.txt"),
        ),
        (
            "apply_patch",
            patch(&format!("*** Update File: link_out_rel\n-{SECRET}\n+pwned")),
            "link_out_rel".into(),
        ),
        (
            "apply_patch",
            patch(&format!(
                "*** Update File: dir_out/secret.txt\n-{SECRET}\n+pwned"
            )),
            "dir_out/secret.txt".into(),
        ),
        (
            "apply_patch",
            patch("*** Delete File: dir_out/secret.txt"),
            "dir_out/secret.txt".into(),
        ),
        (
            "apply_patch",
            patch("*** Delete File: link_out_abs"),
            "link_out_abs".into(),
        ),
        (
            "apply_patch",
            patch("*** Update File: real.txt\n*** Move to: dir_out/moved.txt\n-real\n+moved"),
            "dir_out/moved.txt".into(),
        ),
        (
            "apply_patch",
            patch("*** Add File: ok.txt\n+fine\n*** Add File: ../outside/x.txt\n+x"),
            "../outside/x.txt".into(),
        ),
        // delete_file
        (
            "delete_file",
            json!({"path": "../outside/secret.txt"}),
            "../outside/secret.txt".into(),
        ),
        (
            "delete_file",
            json!({"path": f.out("secret.txt")}),
            f.out("secret.txt"),
        ),
        (
            "delete_file",
            json!({"path": "dir_out/secret.txt"}),
            "dir_out/secret.txt".into(),
        ),
        (
            "delete_file",
            json!({"path": "dir_out_abs/dir", "recursive": true}),
            "dir_out_abs/dir".into(),
        ),
        (
            "delete_file",
            json!({"path": "sub/up_out/outside", "recursive": true}),
            "sub/up_out/outside".into(),
        ),
        (
            "delete_file",
            json!({"path": ".", "recursive": true}),
            "`.`".into(),
        ),
        (
            "remove_file",
            json!({"path": "../outside/dir", "recursive": true}),
            "../outside/dir".into(),
        ),
        // list_dir and search_files
        (
            "list_dir",
            json!({"path": "../outside"}),
            "../outside".into(),
        ),
        ("list_dir", json!({"path": "dir_out"}), "dir_out".into()),
        (
            "list_dir",
            json!({"path": "dir_out_abs", "depth": 3}),
            "dir_out_abs".into(),
        ),
        ("list_dir", json!({"path": "/"}), "`/`".into()),
        (
            "list_dir",
            json!({"path": "sub/up_out"}),
            "sub/up_out".into(),
        ),
        (
            "search_files",
            json!({"pattern": SECRET, "path": "dir_out"}),
            "dir_out".into(),
        ),
        (
            "search_files",
            json!({"pattern": SECRET, "path": "../outside"}),
            "../outside".into(),
        ),
        (
            "search_files",
            json!({"pattern": SECRET, "path": "link_out_rel"}),
            "link_out_rel".into(),
        ),
        (
            "search_files",
            json!({"pattern": SECRET, "path": f.out("")}),
            f.out(""),
        ),
    ];
    cases.retain(|(_, _, name)| !name.is_empty());
    cases
}

#[tokio::test]
async fn every_attack_is_a_safety_error_naming_the_path_and_changes_nothing() {
    let f = Fixture::new();
    let (ws_before, out_before) = (snapshot(&f.ws), snapshot(&f.outside));
    let cases = attacks(&f);
    assert!(cases.len() >= 50, "the suite has {} cases", cases.len());
    for (skill, args, name) in &cases {
        let answer = call(&f.ctx(), skill, args.clone()).await;
        assert!(
            answer.is_error && answer.text.starts_with("refused for safety:"),
            "{skill} {args}: expected a safety refusal, got: {}",
            answer.text
        );
        assert!(
            answer.text.contains(name.as_str()),
            "{skill} {args}: the refusal should name `{name}`: {}",
            answer.text
        );
        assert!(
            !answer.text.contains(SECRET),
            "{skill} leaked the secret: {}",
            answer.text
        );
    }
    assert_eq!(
        snapshot(&f.outside),
        out_before,
        "outside the workspace changed"
    );
    assert_eq!(snapshot(&f.ws), ws_before, "the workspace changed");
}

#[tokio::test]
async fn attacks_in_one_batch_are_each_refused_in_call_order() {
    let f = Fixture::new();
    let out_before = snapshot(&f.outside);
    let cases = attacks(&f);
    let calls: Vec<(&str, Value)> = cases.iter().map(|(s, a, _)| (*s, a.clone())).collect();
    let answers = call_many(&f.ctx(), &calls).await;
    assert_eq!(answers.len(), cases.len());
    for (answer, (skill, _, name)) in answers.iter().zip(&cases) {
        assert!(
            answer.is_error && answer.text.contains(name.as_str()),
            "{skill}: {}",
            answer.text
        );
    }
    assert_eq!(snapshot(&f.outside), out_before);
}

#[tokio::test]
async fn symbolic_links_that_stay_inside_work() {
    let f = Fixture::new();
    let ctx = f.ctx();
    assert_eq!(
        call(&ctx, "read_file", json!({"path": "inside_link"}))
            .await
            .expect_ok(),
        "real"
    );
    assert_eq!(
        call(
            &ctx,
            "read_file",
            json!({"path": "inside_dir_link/file.txt"})
        )
        .await
        .expect_ok(),
        "in sub"
    );
    assert_eq!(
        call(&ctx, "read_file", json!({"path": "sub/up_in/real.txt"}))
            .await
            .expect_ok(),
        "real"
    );
    // Writing through a symlinked parent that stays inside lands in the real directory.
    call(
        &ctx,
        "write_file",
        json!({"path": "inside_dir_link/new.txt", "content": "via link\n"}),
    )
    .await
    .expect_ok();
    assert_eq!(get(&f.ws, "sub/new.txt"), "via link\n");
    let listing = call(&ctx, "list_dir", json!({"path": "inside_dir_link"})).await;
    assert!(listing.expect_ok().contains("file.txt"), "{}", listing.text);
    let found = call(
        &ctx,
        "search_files",
        json!({"pattern": "in sub", "path": "inside_dir_link"}),
    )
    .await;
    assert_eq!(found.expect_ok(), "sub/file.txt:1:in sub");
}

#[tokio::test]
async fn writing_to_a_symlink_inside_is_refused_and_names_its_target() {
    let f = Fixture::new();
    let answer = call(
        &f.ctx(),
        "write_file",
        json!({"path": "inside_link", "content": "x"}),
    )
    .await;
    answer.assert_safety("inside_link");
    assert!(answer.text.contains("real.txt"), "{}", answer.text);
    assert_eq!(get(&f.ws, "real.txt"), "real\n");
    assert!(
        std::fs::symlink_metadata(f.ws.join("inside_link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn deleting_a_link_that_points_out_removes_the_link_only() {
    let f = Fixture::new();
    let out_before = snapshot(&f.outside);
    let ctx = f.ctx();
    let answer = call(&ctx, "delete_file", json!({"path": "link_out_rel"})).await;
    assert!(
        answer.expect_ok().contains("symbolic link"),
        "{}",
        answer.text
    );
    assert!(!f.ws.join("link_out_rel").exists());
    assert!(std::fs::symlink_metadata(f.ws.join("link_out_rel")).is_err());
    // A directory link, even with recursive: the link goes, the directory stays.
    call(
        &ctx,
        "delete_file",
        json!({"path": "dir_out", "recursive": true}),
    )
    .await
    .expect_ok();
    assert!(std::fs::symlink_metadata(f.ws.join("dir_out")).is_err());
    assert_eq!(snapshot(&f.outside), out_before);
}

#[tokio::test]
async fn recursive_delete_does_not_follow_links_inside_the_tree() {
    let f = Fixture::new();
    let out_before = snapshot(&f.outside);
    put(&f.ws, "tree/a.txt", "a");
    put(&f.ws, "tree/deeper/b.txt", "b");
    symlink(&f.outside, f.ws.join("tree/deeper/out")).unwrap();
    symlink(f.outside.join("secret.txt"), f.ws.join("tree/secret_link")).unwrap();
    call(
        &f.ctx(),
        "delete_file",
        json!({"path": "tree", "recursive": true}),
    )
    .await
    .expect_ok();
    assert!(!f.ws.join("tree").exists());
    assert_eq!(snapshot(&f.outside), out_before);
}

#[tokio::test]
async fn walks_from_the_root_never_follow_links_out() {
    let f = Fixture::new();
    let ctx = f.ctx();
    let found = call(&ctx, "search_files", json!({"pattern": SECRET})).await;
    assert!(
        found.expect_ok().starts_with("No matches"),
        "{}",
        found.text
    );
    let listing = call(&ctx, "list_dir", json!({"depth": 4})).await;
    let listing = listing.expect_ok();
    assert!(listing.contains("dir_out@"), "{listing}");
    assert!(!listing.contains("inner.txt"), "{listing}");
    assert!(!listing.contains("secret.txt"), "{listing}");
}

#[tokio::test]
async fn memory_refuses_a_dot_agent_directory_linked_out() {
    let f = Fixture::new();
    let out_before = snapshot(&f.outside);
    symlink(&f.outside, f.ws.join(".agent")).unwrap();
    let answer = call(&f.ctx(), "remember", json!({"key": "k", "value": "v"})).await;
    answer.assert_safety(".agent");
    assert_eq!(snapshot(&f.outside), out_before);
}

#[tokio::test]
async fn memory_refuses_a_database_file_linked_out() {
    let f = Fixture::new();
    let out_before = snapshot(&f.outside);
    std::fs::create_dir(f.ws.join(".agent")).unwrap();
    symlink(
        f.outside.join("secret.txt"),
        f.ws.join(".agent/memory.redb"),
    )
    .unwrap();
    let answer: Answer = call(&f.ctx(), "recall", json!({})).await;
    answer.assert_safety(".agent/memory.redb");
    assert_eq!(snapshot(&f.outside), out_before);
}

#[tokio::test]
async fn walks_read_no_ignore_file_through_a_link_out() {
    let f = Fixture::new();
    // Rules outside the workspace that would hide `file.txt` and `kept.txt`, reached through a
    // `.gitignore` link and a `.git` link (its `info/exclude`).
    put(&f.outside, "rules", "file.txt\n");
    put(&f.outside, "gitdir/info/exclude", "kept.txt\n");
    symlink("../../outside/rules", f.ws.join("sub/.gitignore")).unwrap();
    put(&f.ws, "wt/kept.txt", "kept\n");
    symlink("../../outside/gitdir", f.ws.join("wt/.git")).unwrap();
    let ctx = f.ctx();
    let listing = call(&ctx, "list_dir", json!({"path": "sub"})).await;
    assert!(listing.expect_ok().contains("file.txt"), "{}", listing.text);
    let found = call(&ctx, "search_files", json!({"pattern": "in sub"})).await;
    assert_eq!(found.expect_ok(), "sub/file.txt:1:in sub");
    let listing = call(&ctx, "list_dir", json!({"path": "wt"})).await;
    assert_eq!(listing.expect_ok(), "kept.txt");
    let found = call(&ctx, "search_files", json!({"pattern": "kept"})).await;
    assert_eq!(found.expect_ok(), "wt/kept.txt:1:kept");
}
