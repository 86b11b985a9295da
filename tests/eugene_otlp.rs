//! `eugene --otlp`: the real example binary answers a question from a loopback server that
//! replays OpenAI-compatible answers, and exports the run's spans to a real Arize Phoenix
//! (`test_support::phoenix`), read back through its REST API; a collector that is gone costs one
//! warning and nothing else; a bad endpoint is a usage error.

mod support;

use serde_json::json;
use support::{Server, eugene, run, text_answer, tool_answer};

/// A workspace with a Cargo.toml in it.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nedition = \"2024\"\n",
    )
    .unwrap();
    dir
}

/// `eugene` asking a question whose model reads Cargo.toml, then answers, with `otlp` flags and
/// no `OTEL_*` variable of this process's.
fn question(
    server: &Server,
    workspace: &tempfile::TempDir,
    otlp: &[&str],
) -> std::process::Command {
    let mut cmd = eugene();
    for (name, _) in std::env::vars() {
        if name.starts_with("OTEL_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args(otlp)
        .arg("Which edition?");
    cmd
}

fn answers() -> Server {
    Server::start([
        tool_answer("r1", "read_file", json!({"path": "Cargo.toml"})),
        text_answer("Edition 2024."),
    ])
}

#[test]
fn otlp_exports_the_run_to_the_collector_from_the_environment() {
    let phoenix = test_support::phoenix::phoenix(env!("CARGO_TARGET_TMPDIR"));
    let workspace = project();
    let server = answers();
    let mut cmd = question(&server, &workspace, &["--otlp"]);
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.http_endpoint())
        .env(
            "OTEL_RESOURCE_ATTRIBUTES",
            "openinference.project.name=eugene-cli",
        );
    let done = run(&mut cmd);
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Edition 2024.\n");
    assert!(
        !done.stderr.contains("agent_otel"),
        "no warning: {}",
        done.stderr
    );
    // invoke_agent, two turns, two chats, one execute_tool: one trace, one root.
    let spans = phoenix.spans("eugene-cli", 6);
    assert_eq!(spans.len(), 6, "{spans:#?}");
    let trace = spans[0].trace_id();
    assert!(spans.iter().all(|s| s.trace_id() == trace));
    let root: Vec<_> = spans.iter().filter(|s| s.parent_id().is_none()).collect();
    assert_eq!(root.len(), 1);
    assert_eq!(root[0].name(), "invoke_agent");
    assert_eq!(root[0].text("gen_ai.provider.name"), Some("openai"));
    let read = spans
        .iter()
        .find(|s| s.name() == "execute_tool read_file")
        .expect("the tool call has its span");
    assert_eq!(read.text("gen_ai.tool.call.id"), Some("r1"));
    let chats = spans
        .iter()
        .filter(|s| s.text("gen_ai.operation.name") == Some("chat"));
    assert_eq!(chats.count(), 2);
    // Content is off without --otlp-content: the question is nowhere.
    assert!(
        spans
            .iter()
            .all(|s| !s.everything().contains("Which edition?"))
    );
}

#[test]
fn otlp_content_puts_the_question_on_the_spans() {
    let phoenix = test_support::phoenix::phoenix(env!("CARGO_TARGET_TMPDIR"));
    let workspace = project();
    let server = answers();
    let endpoint = format!("--otlp={}", phoenix.http_endpoint());
    let mut cmd = question(&server, &workspace, &[&endpoint, "--otlp-content"]);
    cmd.env(
        "OTEL_RESOURCE_ATTRIBUTES",
        "openinference.project.name=eugene-cli-content",
    );
    let done = run(&mut cmd);
    assert_eq!(done.code(), Some(0), "{done:?}");
    let spans = phoenix.spans("eugene-cli-content", 6);
    let first_chat = spans
        .iter()
        .find(|s| {
            s.text("gen_ai.response.id").is_some() && s.text("gen_ai.input.messages").is_some()
        })
        .expect("a chat span with its messages");
    assert!(
        first_chat
            .text("gen_ai.input.messages")
            .unwrap()
            .contains("Which edition?")
    );
}

#[test]
fn a_collector_that_is_gone_costs_one_warning_and_the_answer_is_the_same() {
    let workspace = project();
    let server = answers();
    let endpoint = format!(
        "--otlp=http://127.0.0.1:{}",
        test_support::phoenix::free_port()
    );
    let done = run(&mut question(&server, &workspace, &[&endpoint]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Edition 2024.\n");
    assert_eq!(
        done.stderr.matches("agent-otel warns once").count(),
        1,
        "{}",
        done.stderr
    );
}

#[test]
fn a_bad_otlp_endpoint_is_a_usage_error_naming_it() {
    let workspace = project();
    let server = answers();
    let done = run(&mut question(
        &server,
        &workspace,
        &["--otlp=ftp://collector:4318"],
    ));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(done.stderr.contains("--otlp"), "{}", done.stderr);
    assert!(
        done.stderr.contains("ftp://collector:4318"),
        "{}",
        done.stderr
    );
    assert!(server.received().is_empty(), "no question was asked");
    // The same from the environment, naming the variable.
    let mut cmd = question(&server, &workspace, &["--otlp"]);
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318");
    let done = run(&mut cmd);
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr.contains("OTEL_EXPORTER_OTLP_ENDPOINT"),
        "{}",
        done.stderr
    );
}
