//! Opt-in: the `eugene` example binary through a tool turn against a real OpenAI-compatible
//! server. Set `AGENT_E2E_OPENAI_URL` (e.g. `http://127.0.0.1:8080/v1`) and optionally
//! `AGENT_E2E_OPENAI_MODEL` and `OPENAI_API_KEY`; without the variable the test says so and
//! passes. The README shows how to run llama-cpp-python's server with a small model from PyPI.
//!
//! The first model call is forced to use `list_dir` (`--require-tool=list_dir`: llama-cpp-python's
//! `chatml-function-calling` fails on `"required"` and accepts only a named tool). What is checked
//! is the wire (tool definitions out, a tool call back, its result sent on, an answer after it),
//! not a small model's judgement, so any ending the model chooses after the tool turn passes; a
//! provider or configuration error does not.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{Running, eugene};

#[test]
fn eugene_makes_a_tool_turn_against_a_real_server() {
    let Ok(url) = std::env::var("AGENT_E2E_OPENAI_URL") else {
        eprintln!("AGENT_E2E_OPENAI_URL is not set: skipping the real-server test of eugene");
        return;
    };
    let model = std::env::var("AGENT_E2E_OPENAI_MODEL").unwrap_or_else(|_| "local".into());
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "none".into());
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nedition = \"2024\"\n",
    )
    .unwrap();
    std::fs::write(workspace.path().join("README.md"), "# demo\n").unwrap();

    let mut cmd = eugene();
    cmd.env("OPENAI_BASE_URL", &url)
        .env("OPENAI_API_KEY", key)
        .env("AGENT_MODEL", model)
        .arg("--workspace")
        .arg(workspace.path())
        .args([
            "--json",
            "--require-tool=list_dir",
            "--max-steps",
            "3",
            "--max-answer-tokens",
            "256",
            "--timeout",
            "300",
            "List the files in the project with list_dir, then name them.",
        ]);
    let done = Running::start(&mut cmd).finish_within(Duration::from_secs(1200));
    eprintln!("stdout:\n{}\nstderr:\n{}", done.stdout, done.stderr);
    let events = done.json_lines();
    let of = |kind: &str| -> Vec<&Value> { events.iter().filter(|e| e["event"] == kind).collect() };

    let summary = events.last().expect("a summary line");
    assert_eq!(summary["event"], "finished", "{summary}");
    assert!(
        !matches!(done.code(), Some(1 | 2 | 3 | 130) | None),
        "the wire failed: {summary}"
    );
    let calls = of("tool_call");
    assert!(!calls.is_empty(), "the forced first call made no tool call");
    let results = of("tool_result");
    assert_eq!(
        results[0]["id"], calls[0]["id"],
        "the call was answered: {results:?}"
    );
    // The result went back to the server and it answered again.
    assert!(
        summary["steps"].as_u64().unwrap() >= 2,
        "no model call after the tool result: {summary}"
    );
}
