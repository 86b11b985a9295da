//! eugene as the client of a server written by others: `consume_server.py` (beside
//! `tests/programs/`), on the official Python MCP SDK (PyPI `mcp`), started by each test over
//! stdio (or over streamable HTTP) and used through `McpSkills` in agent runs whose model is
//! scripted. Its tools ask the user questions (elicitation), ask the client's model (sampling),
//! and it has resources, a resource template and prompts. `media_server.py` (same place) returns
//! images, audio and PDFs, for `media.rs`.
//!
//! The Python is the one `AGENT_MCP_PYTHON` names (one with `mcp` installed), else one the tests
//! install once under the test target's directory; a test that cannot get one fails, saying how
//! to install it.

mod elicitation;
mod lists;
mod live;
mod media;
mod outside;
mod sampling;

use std::path::PathBuf;
use std::sync::Arc;

use agent_core::{DestructiveCalls, PendingCall, Registry, ToolCall};
use agent_llm::{MockProvider, MockReply, Role};
use agent_mcp::McpSkills;
use agent_mcp::client::Handshake;
use agent_runtime::{AgentRuntime, FinishReason, RunOutcome};

const SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/programs/consume_server.py"
);

fn python() -> PathBuf {
    test_support::provision::python_with_mcp(env!("CARGO_TARGET_TMPDIR"))
}

/// `consume_server.py` as a child process, over stdio.
async fn server() -> McpSkills {
    McpSkills::connect_stdio(python(), [SERVER])
        .await
        .expect("consume_server.py starts and lists its tools")
}

/// `consume_server.py` as a child process, over stdio, in a session started with
/// `server/discover`: MCP 2026-07-28, where questions come as `input_required` results.
async fn modern_server() -> McpSkills {
    let mut command = std::process::Command::new(python());
    command.arg(SERVER);
    McpSkills::connect_command_with(command, Handshake::Discover)
        .await
        .expect("consume_server.py starts and lists its tools")
}

/// `consume_server.py` over streamable HTTP, with the child process serving it (killed on drop).
struct HttpServer {
    skills: McpSkills,
    _child: tokio::process::Child,
}

async fn http_server() -> HttpServer {
    let port = test_support::phoenix::free_port();
    let child = tokio::process::Command::new(python())
        .args([SERVER, "--http", &port.to_string()])
        .kill_on_drop(true)
        .spawn()
        .expect("python starts");
    let url = format!("http://127.0.0.1:{port}/mcp");
    // The server listens once Python has imported the SDK; until then connecting is refused.
    let mut last = None;
    for _ in 0..200 {
        match McpSkills::connect_http(&url).await {
            Ok(skills) => {
                return HttpServer {
                    skills,
                    _child: child,
                };
            }
            Err(error) => last = Some(error),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("consume_server.py did not serve HTTP at {url}: {last:?}");
}

/// A registry with the server's tools, whose destructive calls run (the server's tools have no
/// annotations, so they count as destructive; these tests are about the questions they ask).
fn registry_of(skills: &McpSkills) -> Registry {
    let mut registry = Registry::new();
    registry.destructive_calls(DestructiveCalls::Allow);
    skills.add_to(&mut registry).expect("the tools are added");
    registry
}

/// A runtime whose model calls `call` first, then answers "Done.".
fn runtime_calling(skills: &McpSkills, calls: Vec<ToolCall>) -> AgentRuntime {
    let model = MockProvider::new([MockReply::tool_calls(calls), MockReply::text("Done.")]);
    AgentRuntime::new(model, registry_of(skills))
}

/// The pending calls of a paused run; panics if it did not pause.
fn pending(outcome: &RunOutcome) -> &[PendingCall] {
    match &outcome.finish {
        FinishReason::AwaitingApproval { pending } => pending,
        other => panic!("the run did not pause: {other:?}"),
    }
}

/// The tool results of a run, by call id, with whether each is an error.
fn tool_results(outcome: &RunOutcome) -> Vec<(String, String, bool)> {
    outcome
        .transcript
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            (
                m.tool_call_id.as_deref().unwrap_or_default().to_owned(),
                m.content.clone(),
                m.is_error,
            )
        })
        .collect()
}

/// The one tool result of a run.
fn only_result(outcome: &RunOutcome) -> (String, bool) {
    let results = tool_results(outcome);
    assert_eq!(results.len(), 1, "{results:?}");
    let (_, text, is_error) = results.into_iter().next().unwrap();
    (text, is_error)
}

#[allow(dead_code)]
fn shared(model: MockProvider) -> Arc<MockProvider> {
    Arc::new(model)
}
