//! A root command's capabilities: only two are left, and what needs the others fails; what a
//! coding agent's commands need still works.

use agent_core::SkillContext;
use serde_json::json;

use super::common::call;
use super::require_root;

/// The capability sets of the command's own process, from `/proc/self/status`.
fn capability_sets(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|line| {
            let (name, hex) = line.split_once(":\t")?;
            name.starts_with("Cap").then(|| {
                (
                    name.to_owned(),
                    u64::from_str_radix(hex.trim(), 16).unwrap(),
                )
            })
        })
        .collect()
}

#[tokio::test]
async fn a_root_command_keeps_only_dac_override_and_fowner() {
    require_root();
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    let answer = call(
        &ctx,
        "run_shell",
        json!({ "command": "grep ^Cap /proc/self/status" }),
    )
    .await;
    let sets = capability_sets(answer.expect_ok());
    assert_eq!(sets.len(), 5, "{}", answer.text);
    for (name, value) in sets {
        // CAP_DAC_OVERRIDE (1) and CAP_FOWNER (3).
        assert_eq!(
            value & !0b1010,
            0,
            "{name} holds {value:#x}: {}",
            answer.text
        );
    }
}

#[tokio::test]
async fn what_needs_another_capability_fails_and_changes_nothing() {
    require_root();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "v1").unwrap();
    let ctx = SkillContext::new(tmp.path());
    let before = std::time::SystemTime::now();
    let command = "\
        date -s \"$(date)\" >/dev/null; echo clock=$?; \
        chattr +i notes.txt; echo immutable=$?; \
        mknod disk b 8 0; echo mknod=$?; \
        chown 1234 notes.txt; echo chown=$?; \
        setpriv --reuid=1234 true; echo setuid=$?; \
        nice -n -5 true; echo nice=$?; \
        hostname eugene-attack; echo hostname=$?";
    let answer = call(&ctx, "run_shell", json!({ "command": command })).await;
    let text = answer.expect_ok();
    for what in ["clock", "immutable", "mknod", "chown", "setuid", "hostname"] {
        assert!(
            !text.contains(&format!("{what}=0")),
            "{what} succeeded: {text}"
        );
    }
    // `nice` runs the program anyway, only without the higher priority.
    assert!(
        text.contains("cannot set niceness: Permission denied"),
        "{text}"
    );
    assert!(std::time::SystemTime::now() >= before);
    // The agent can still write the file the command tried to make immutable.
    let written = call(
        &ctx,
        "write_file",
        json!({ "path": "notes.txt", "content": "v2" }),
    )
    .await;
    written.expect_ok();
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("notes.txt")).unwrap(),
        "v2"
    );
    assert!(!tmp.path().join("disk").exists());
}

#[tokio::test]
async fn git_npm_and_python_venvs_work_inside_the_sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    let command = "\
        set -e; \
        git init -q repo && cd repo && echo hi > a.txt && git add a.txt && \
        git -c user.name=a -c user.email=a@example.invalid commit -q -m first && \
        git log --oneline | wc -l | sed 's/^/commits=/'; cd ..; \
        mkdir app dep && (cd dep && npm init -y >/dev/null) && cd app && npm init -y >/dev/null && \
        npm install --offline --no-audit --no-fund ../dep >/dev/null 2>&1 && \
        test -e node_modules/dep/package.json && echo npm=ok; cd ..; \
        python3 -m venv venv && ./venv/bin/python -c 'import sys; print(\"venv=\" + str(sys.prefix != sys.base_prefix))'";
    let answer = call(
        &ctx,
        "run_shell",
        json!({ "command": command, "timeout_ms": 300_000 }),
    )
    .await;
    let text = answer.expect_ok();
    assert!(text.starts_with("exit code: 0"), "{text}");
    assert!(text.contains("commits=1"), "{text}");
    assert!(text.contains("npm=ok"), "{text}");
    assert!(text.contains("venv=True"), "{text}");
}
