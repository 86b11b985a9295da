//! A run paused for approval in one process and continued in another: the `approval` example run
//! twice as a child process, with the state in a file between the two. Each decision's effect is
//! checked on disk (the skill counts its runs there) and in what the second process reports.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `approval` example, built by `cargo test` before the tests run.
fn example() -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    let path = deps
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join("approval");
    assert!(
        path.exists(),
        "{} is not built; run through `cargo test`",
        path.display()
    );
    path
}

fn approval(args: &[&str]) -> Output {
    let output = Command::new(example())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "approval {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs"))
        .unwrap_or_default()
        .len()
}

/// Pauses in one process; returns the state file and what the process printed.
fn pause(dir: &Path) -> (String, String) {
    let state = dir.join("state.json").to_string_lossy().into_owned();
    let work = dir.to_string_lossy().into_owned();
    let printed = stdout(&approval(&["pause", &state, &work]));
    (state, printed)
}

#[test]
fn an_approved_call_runs_once_in_the_process_that_resumes_and_budgets_continue() {
    let dir = tempfile::tempdir().unwrap();
    let (state, paused) = pause(dir.path());
    assert!(
        paused.contains(
            "pending write_1 append_line {\"line\":\"ship it\"}: `append_line` changes notes.txt"
        ),
        "{paused}"
    );
    assert!(paused.contains("steps 1 tokens 15"), "{paused}");
    // The read-only call of the same turn ran; the destructive one did not.
    assert_eq!(runs(dir.path()), 0);
    let work = dir.path().to_string_lossy().into_owned();
    let resumed = stdout(&approval(&["resume", &state, &work, "approve"]));
    assert_eq!(runs(dir.path()), 1, "{resumed}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "ship it\n"
    );
    // Results in call order, the one computed before the pause included.
    let results: Vec<&str> = resumed
        .lines()
        .filter(|l| l.starts_with("result "))
        .collect();
    assert_eq!(
        results,
        [
            "result read_1 0",
            "result write_1 appended \"ship it\"",
            "result read_2 1"
        ],
        "{resumed}"
    );
    assert!(resumed.contains("finish NoMoreToolCalls"), "{resumed}");
    // Steps and tokens went on from the paused run's: 1 before, 2 after.
    assert!(resumed.contains("steps 3 tokens 45"), "{resumed}");
}

#[test]
fn a_denied_call_never_runs_and_the_model_reads_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (state, _) = pause(dir.path());
    let work = dir.path().to_string_lossy().into_owned();
    let resumed = stdout(&approval(&["resume", &state, &work, "deny"]));
    assert_eq!(runs(dir.path()), 0);
    assert!(!dir.path().join("notes.txt").exists());
    assert!(
        resumed.contains("result write_1 denied: not today"),
        "{resumed}"
    );
}

#[test]
fn an_edited_call_runs_once_with_the_new_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let (state, _) = pause(dir.path());
    let work = dir.path().to_string_lossy().into_owned();
    approval(&["resume", &state, &work, "edit"]);
    assert_eq!(runs(dir.path()), 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "ship it on Monday\n"
    );
}

#[test]
fn a_state_of_another_version_is_refused_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (state, _) = pause(dir.path());
    let text = std::fs::read_to_string(&state).unwrap();
    let version = format!("\"version\": {}", eugene::run::RUN_STATE_VERSION);
    let other = format!("\"version\": {}", eugene::run::RUN_STATE_VERSION + 1);
    let forged = text.replacen(&version, &other, 1);
    assert_ne!(forged, text, "the state starts with its version");
    std::fs::write(&state, forged).unwrap();
    let work = dir.path().to_string_lossy().into_owned();
    let output = Command::new(example())
        .args(["resume", &state, &work, "approve"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "format version {}",
            eugene::run::RUN_STATE_VERSION + 1
        )) && stderr.contains(&format!(
            "reads versions 2 to {}",
            eugene::run::RUN_STATE_VERSION
        )),
        "{stderr}"
    );
    assert_eq!(runs(dir.path()), 0);
}

/// The example with `env` set, not asserting it succeeds.
fn approval_with(env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut command = Command::new(example());
    for (name, value) in env {
        command.env(name, value);
    }
    command.args(args).stdin(Stdio::null()).output().unwrap()
}

#[test]
fn a_sealed_state_edited_in_its_file_is_refused_by_the_process_that_resumes() {
    let dir = tempfile::tempdir().unwrap();
    // An environment variable's value, passed as the OS string a `Path` is.
    let key = Path::new("a secret of thirty-two bytes or more, from a vault");
    let (state, work) = (
        dir.path().join("state.json"),
        dir.path().to_string_lossy().into_owned(),
    );
    let state_arg = state.to_string_lossy().into_owned();
    let paused = approval_with(&[("APPROVAL_KEY", key)], &["pause", &state_arg, &work]);
    assert!(paused.status.success(), "{paused:?}");
    // The same length, another line: what the person saw is not what would run.
    let kept = std::fs::read_to_string(&state).unwrap();
    assert!(kept.contains("\"seal\""), "{kept}");
    std::fs::write(&state, kept.replace("ship it", "wipe it")).unwrap();
    let refused = approval_with(
        &[("APPROVAL_KEY", key)],
        &["resume", &state_arg, &work, "approve"],
    );
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("changed after it was sealed"), "{said}");
    assert_eq!(runs(dir.path()), 0, "nothing ran");
    // The state as it was sealed: it runs, once.
    std::fs::write(&state, kept).unwrap();
    let resumed = approval_with(
        &[("APPROVAL_KEY", key)],
        &["resume", &state_arg, &work, "approve"],
    );
    assert!(resumed.status.success(), "{resumed:?}");
    assert_eq!(runs(dir.path()), 1);
}

#[test]
fn the_same_state_continued_by_two_processes_at_once_runs_its_call_once_with_claims() {
    let dir = tempfile::tempdir().unwrap();
    let (state, work) = (
        dir.path().join("state.json").to_string_lossy().into_owned(),
        dir.path().to_string_lossy().into_owned(),
    );
    let claims = dir.path().join("claims.redb");
    approval(&["pause", &state, &work]);
    let kept = std::fs::read(&state).unwrap();
    let start = || {
        Command::new(example())
            .env("APPROVAL_CLAIMS", &claims)
            .args(["resume", &state, &work, "approve"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (one, two) = (start(), start());
    let (one, two) = (
        one.wait_with_output().unwrap(),
        two.wait_with_output().unwrap(),
    );
    assert_eq!(
        [one.status.success(), two.status.success()]
            .iter()
            .filter(|ok| **ok)
            .count(),
        1,
        "{one:?} {two:?}"
    );
    let refused = if one.status.success() { &two } else { &one };
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("continued already"),
        "{refused:?}"
    );
    assert_eq!(runs(dir.path()), 1);
    // A copy kept at the pause and continued later: refused as well.
    std::fs::write(&state, &kept).unwrap();
    let again = approval_with(
        &[("APPROVAL_CLAIMS", &claims)],
        &["resume", &state, &work, "approve"],
    );
    assert!(!again.status.success());
    assert_eq!(runs(dir.path()), 1);
    // Without claims, what the docs say holds: the copy runs its call again.
    let unclaimed = approval_with(&[], &["resume", &state, &work, "approve"]);
    assert!(unclaimed.status.success(), "{unclaimed:?}");
    assert_eq!(runs(dir.path()), 2, "no claims, no single use");
}

/// A run paused with an image attached to its goal continues in another process: the state file
/// carries the image (format version 5), the resumed run sends the model the very bytes that
/// were attached, and a sealed state whose image was swapped in the file is refused.
#[test]
fn a_paused_run_holding_an_image_continues_in_another_process_with_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let photo = dir.path().join("photo.png");
    std::fs::write(&photo, eugene::media::tiny_png()).unwrap();
    let sha = eugene::skills::digest::sha256_hex(&[&std::fs::read(&photo).unwrap()]);
    let key = Path::new("a secret of thirty-two bytes or more, from a vault");
    let (state, work) = (
        dir.path().join("state.json"),
        dir.path().to_string_lossy().into_owned(),
    );
    let state_arg = state.to_string_lossy().into_owned();
    let env = [("APPROVAL_ATTACH", photo.as_path()), ("APPROVAL_KEY", key)];
    let paused = approval_with(&env, &["pause", &state_arg, &work]);
    assert!(paused.status.success(), "{paused:?}");
    let kept = std::fs::read_to_string(&state).unwrap();
    let value: serde_json::Value = serde_json::from_str(&kept).unwrap();
    assert_eq!(value["version"], 5);
    let part = &value["transcript"][0]["parts"][0];
    assert_eq!(part["media_type"], "image/png");
    assert!(
        part["data"].as_str().unwrap().starts_with("iVBORw0KGgo"),
        "{part}"
    );

    // Another image in its place (the same length, other pixels): refused, nothing runs.
    let data = part["data"].as_str().unwrap();
    let swapped = format!("{}A{}", &data[..40], &data[41..]);
    std::fs::write(&state, kept.replace(data, &swapped)).unwrap();
    let refused = approval_with(&env, &["resume", &state_arg, &work, "approve"]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("changed after it was sealed"), "{said}");
    assert_eq!(runs(dir.path()), 0, "nothing ran");

    std::fs::write(&state, &kept).unwrap();
    let resumed = approval_with(&env, &["resume", &state_arg, &work, "approve"]);
    assert!(resumed.status.success(), "{resumed:?}");
    let printed = String::from_utf8_lossy(&resumed.stdout);
    // Both of the resumed run's model calls carried the goal's image, byte for byte.
    assert!(
        printed.contains(&format!("sent 0 image/png {sha}")),
        "{printed}"
    );
    assert!(
        printed.contains(&format!("sent 1 image/png {sha}")),
        "{printed}"
    );
    assert_eq!(runs(dir.path()), 1);
}
