//! `delete_file` with `recursive: true` on trees deeper than the process may hold directories
//! open, through `Registry::run_many`, on real directories in temp dirs. The tests of this binary
//! lower its soft limit of open files to 1,024 (a common default) so a deletion that holds one
//! directory open per level fails here as it would on such a machine.

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;

use agent_core::SkillContext;
use agent_std_tools::sandbox::Workspace;
use cap_std::fs::Dir;
use common::{call, put, snapshot};
use serde_json::json;

const DEPTH: usize = 2_000;

/// At most 1,024 open files for this test process (never raises the limit).
fn limit_open_files() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to an rlimit.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        if limit.rlim_cur > 1024 {
            limit.rlim_cur = 1024;
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        }
    }
}

/// Builds `root/top/level-0001/level-0002/...` `depth` levels deep, one directory handle at a
/// time (the full path is far longer than `PATH_MAX`). Each level holds a file; every 100th level
/// also a side branch of three directories with a file. Halfway down and at the bottom it puts the
/// symbolic links `link-N`, one to each of `links`, and with `up_out` one more, `link-up`, that
/// climbs relatively to `outside` beside `root` (where such a link is short enough to make).
fn deep_tree(root: &Path, depth: usize, links: &[&Path], up_out: bool) {
    let base = Dir::open_ambient_dir(root, cap_std::ambient_authority()).unwrap();
    base.create_dir("top").unwrap();
    let mut dir = base.open_dir("top").unwrap();
    for level in 1..=depth {
        dir.write(format!("file-{level}.txt"), "data").unwrap();
        if level % 100 == 0 {
            dir.create_dir_all("side/a/b").unwrap();
            dir.write("side/a/b/leaf.txt", "leaf").unwrap();
        }
        if level == depth / 2 || level == depth {
            for (i, target) in links.iter().enumerate() {
                dir.symlink_contents(target, format!("link-{i}")).unwrap();
            }
            let up = format!("{}outside", "../".repeat(level + 1));
            if up_out && up.len() < 4000 {
                dir.symlink_contents(up, "link-up").unwrap();
            }
        }
        let name = format!("level-{level:04}");
        dir.create_dir(&name).unwrap();
        dir = dir.open_dir(&name).unwrap();
    }
}

#[tokio::test]
async fn recursive_delete_removes_a_2000_deep_tree() {
    limit_open_files();
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    put(&outside, "secret.txt", "secret\n");
    put(&outside, "dir/inner.txt", "inner\n");
    put(&ws, "keep/kept.txt", "kept\n");
    let out_before = snapshot(&outside);
    // Links out (absolute and relative) and to a directory inside, halfway down and at the bottom.
    deep_tree(
        &ws,
        DEPTH,
        &[&outside, &outside.join("secret.txt"), &ws.join("keep")],
        true,
    );
    let answer = call(
        &SkillContext::new(&ws),
        "delete_file",
        json!({"path": "top", "recursive": true}),
    )
    .await;
    assert_eq!(
        answer.expect_ok(),
        "Deleted the directory `top` and everything in it"
    );
    assert!(std::fs::symlink_metadata(ws.join("top")).is_err());
    assert_eq!(snapshot(&outside), out_before);
    assert_eq!(common::get(&ws, "keep/kept.txt"), "kept\n");
}

#[tokio::test]
async fn recursive_delete_of_a_deep_subdirectory_leaves_its_parent() {
    limit_open_files();
    let tmp = tempfile::tempdir().unwrap();
    deep_tree(tmp.path(), 1_500, &[], false);
    let answer = call(
        &SkillContext::new(tmp.path()),
        "delete_file",
        json!({"path": "top/level-0001/level-0002", "recursive": true}),
    )
    .await;
    answer.expect_ok();
    let left: Vec<String> = snapshot(&tmp.path().join("top"))
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(left, ["file-1.txt", "level-0001/", "level-0001/file-2.txt"]);
}

#[test]
fn a_recursive_delete_that_is_stopped_says_so_and_can_be_finished() {
    let tmp = tempfile::tempdir().unwrap();
    deep_tree(tmp.path(), 300, &[], false);
    let before = snapshot(tmp.path()).len();
    let ws = Workspace::open(tmp.path()).unwrap();
    let mut asked = 0;
    let err = ws
        .remove_dir_all_until("top", || {
            asked += 1;
            asked > 50
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("stopped while deleting `top`") && err.contains("the rest is still there"),
        "{err}"
    );
    // It stopped part-way: something is gone, the top is still there.
    let after = snapshot(tmp.path()).len();
    assert!(after < before, "nothing was deleted");
    assert!(tmp.path().join("top").is_dir());
    // Asked again without a stop, it finishes.
    ws.remove_dir_all_until("top", || false).unwrap();
    assert!(std::fs::symlink_metadata(tmp.path().join("top")).is_err());
}

#[tokio::test]
async fn a_deep_tree_reached_through_an_inside_link_is_deleted_where_it_is() {
    limit_open_files();
    let tmp = tempfile::tempdir().unwrap();
    deep_tree(tmp.path(), 1_200, &[], false);
    symlink("top", tmp.path().join("alias")).unwrap();
    // Deleting the link removes the link only, even with recursive.
    call(
        &SkillContext::new(tmp.path()),
        "delete_file",
        json!({"path": "alias", "recursive": true}),
    )
    .await
    .expect_ok();
    assert!(std::fs::symlink_metadata(tmp.path().join("alias")).is_err());
    assert!(tmp.path().join("top/level-0001/level-0002").is_dir());
    // A directory below a link that stays inside is deleted in the real tree.
    symlink("top", tmp.path().join("alias")).unwrap();
    call(
        &SkillContext::new(tmp.path()),
        "delete_file",
        json!({"path": "alias/level-0001", "recursive": true}),
    )
    .await
    .expect_ok();
    assert!(!tmp.path().join("top/level-0001").exists());
    assert!(tmp.path().join("top/file-1.txt").is_file());
}
