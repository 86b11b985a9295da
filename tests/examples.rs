//! The examples as a user runs them: `tour` offline, and the `eugene` command (package
//! `eugene-cli`) as a child process against a loopback server that speaks the OpenAI wire format
//! and scripts the model's choices.

mod support;

use test_support::server;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use server::{Reply, Server};

/// An example built by `cargo test` (examples are built before tests run).
fn example(name: &str) -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let path = deps.parent().unwrap().join("examples").join(name);
    assert!(
        path.exists(),
        "{} is not built; run through `cargo test`",
        path.display()
    );
    path
}

/// A command with no provider configuration from the machine it runs on.
fn clean(cmd: &mut Command) -> &mut Command {
    for key in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_BASE_URL",
        "AGENT_MODEL",
    ] {
        cmd.env_remove(key);
    }
    // Nothing listens on port 9 of loopback: no Ollama is found by accident.
    cmd.env("OLLAMA_HOST", "127.0.0.1:9").stdin(Stdio::null())
}

#[test]
fn the_tour_runs_offline_and_shows_definitions_and_results() {
    let output = clean(&mut Command::new(example("tour"))).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in [
        "== What the model is shown",
        "word_count: Count the words in a text.",
        "call_1 word_count [ok] 4",
        "call_3 word_cont [error] unknown skill `word_cont`; did you mean `word_count`?",
        "call_5 delete_file [error] denied: permission to run `delete_file` was not granted",
        "== The agent loop, with a scripted model",
        "[1] result t2 [ok] 2",
        "[1] result t3 [error] denied: permission to run `delete_file` was not granted",
        "[2] result t4 [error] invalid arguments: `txt`: unknown field; expected `text`",
        "[3] result t5 [ok] 2",
        "[4] finished: NoMoreToolCalls",
        // The Agent Skill compiled in from examples/skills/, a level at a time.
        "- word-budget: Check whether texts fit their word budget",
        "[1] result s1 [ok] Skill `word-budget` (compiled into this program",
        "1. Find the budget for the kind of text in `references/budgets.md`.",
        "[2] result s2 [ok] | kind of text | words at most |",
        "| headline | 8 |",
        "[3] result s3 [ok] 9",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
}

#[test]
fn the_team_pauses_two_agents_down_continues_once_and_hands_off() {
    let output = clean(&mut Command::new(example("team"))).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in [
        "paused: writer › publish (p2/w1)",
        "publish ran 0 times",
        "approved; publish ran 1 time",
        "answer: Read the notes and announced the release.",
        "tokens, all agents: 550",
        "  reader: 117",
        "  writer: 143",
        "handed to support: Support here:",
    ] {
        assert!(stdout.contains(line), "{line:?} missing from:\n{stdout}");
    }
}

#[test]
fn a_custom_provider_drives_the_real_loop() {
    let output = clean(&mut Command::new(example("custom_provider")))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("The tool said: HELLO, CUSTOM BACKEND"),
        "{stdout}"
    );
    assert!(
        stdout.contains("finished: NoMoreToolCalls after 2 steps"),
        "{stdout}"
    );
}

#[test]
fn eugene_without_a_provider_exits_2_and_lists_the_ways_to_get_one() {
    let output = clean(&mut Command::new(support::eugene_binary()))
        .arg("hello?")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for way in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "Ollama",
    ] {
        assert!(stderr.contains(way), "{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn sse(chunks: &[Value]) -> Reply {
    let mut text: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    Reply::sse(&text)
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "c", "model": "scripted", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eugene_answers_and_a_write_is_refused_without_yes() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nedition = \"2024\"\n",
    )
    .unwrap();
    let server = Server::start([
        sse(&[
            chunk(json!({"tool_calls": [{"index": 0, "id": "call_r", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"Cargo.toml\"}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
        ]),
        sse(&[
            chunk(json!({"tool_calls": [{"index": 0, "id": "call_w", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"notes.txt\", \"content\": \"edition 2024\"}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
        ]),
        sse(&[chunk(json!({"content": "The project uses Rust edition "}), None), chunk(json!({"content": "2024."}), Some("stop"))]),
    ])
    .await;
    let url = format!("{}/v1", server.url);
    let ws = workspace.path().to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        clean(&mut Command::new(support::eugene_binary()))
            .env("OPENAI_BASE_URL", url)
            .arg("--workspace")
            .arg(&ws)
            .arg("Which Rust edition does Cargo.toml use?")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stdout.contains("The project uses Rust edition 2024."),
        "{stdout}"
    );
    assert!(stderr.contains("read_file(path=Cargo.toml)"), "{stderr}");
    assert!(
        !workspace.path().join("notes.txt").exists(),
        "the write was refused"
    );
    let received = server.received();
    assert_eq!(received.len(), 3);
    let second: Value = received[1].json();
    assert!(
        second["messages"]
            .to_string()
            .contains("edition = \\\"2024\\\""),
        "the file was read: {second}"
    );
    let third: Value = received[2].json();
    let refusal = third["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(refusal["role"], "tool");
    assert!(
        refusal["content"]
            .as_str()
            .unwrap()
            .contains("needs the user's permission"),
        "{refusal}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eugene_json_mode_prints_events_as_json_lines() {
    let server = Server::start([sse(&[chunk(json!({"content": "Hello."}), Some("stop"))])]).await;
    let url = format!("{}/v1", server.url);
    let output = tokio::task::spawn_blocking(move || {
        clean(&mut Command::new(support::eugene_binary()))
            .env("OPENAI_BASE_URL", url)
            .args(["--json", "hi"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "text_delta",
            "usage",
            "assistant_text",
            "turn_finished",
            "finished"
        ]
    );
    assert_eq!(events[3]["finish"], "no_more_tool_calls");
    assert_eq!(events[4]["finish"], "done");
    assert_eq!(events[4]["exit_status"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eugene_interactive_mode_keeps_the_conversation_across_questions() {
    let server = Server::start([
        sse(&[chunk(json!({"content": "Hi Ann."}), Some("stop"))]),
        sse(&[chunk(json!({"content": "You are Ann."}), Some("stop"))]),
    ])
    .await;
    let url = format!("{}/v1", server.url);
    let output = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = clean(&mut Command::new(support::eugene_binary()))
            .env("OPENAI_BASE_URL", url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"I am Ann.\nWho am I?\n")
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("Hi Ann.") && stdout.contains("You are Ann."),
        "{stdout}"
    );
    let second = server.received()[1].json();
    let contents: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(contents[1..], ["I am Ann.", "Hi Ann.", "Who am I?"]);
}
