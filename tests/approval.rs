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
    let version = format!("\"version\": {}", eugene::RUN_STATE_VERSION);
    let other = format!("\"version\": {}", eugene::RUN_STATE_VERSION + 1);
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
        stderr.contains(&format!("format version {}", eugene::RUN_STATE_VERSION + 1))
            && stderr.contains(&format!(
                "reads versions 2 to {}",
                eugene::RUN_STATE_VERSION
            )),
        "{stderr}"
    );
    assert_eq!(runs(dir.path()), 0);
}
