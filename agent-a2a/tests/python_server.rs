//! A server on the official Python SDK (`a2a-sdk` 1.3.0, `tests/programs/echo_agent.py`) used
//! through our client: the remote agent as a skill, in the agent loop and called alone, and its
//! failures (a failed task, a task waiting for input, a task that never ends) as error results.

mod common;

use std::time::Duration;

use agent_a2a::RemoteAgent;
use agent_core::{DynSkill, Registry, SkillContext, SkillError, ToolCall};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::{AgentRuntime, FinishReason};
use serde_json::json;

use common::python_echo_agent;

async fn call(skill: &agent_a2a::RemoteAgentSkill, message: &str) -> Result<String, SkillError> {
    let ctx = SkillContext::new(".");
    let future = skill.start(&json!({ "message": message }), &ctx)?;
    future.await.map(|out| out.to_text().into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_agent_is_a_skill_in_the_agent_loop() {
    let (_child, url) = python_echo_agent().await;
    let remote = RemoteAgent::connect(&url, None)
        .await
        .expect("reads the card");
    assert_eq!(remote.card().name, "Python Echo");
    let skill = remote.into_skill();
    assert_eq!(skill.name(), "python_echo");
    assert!(skill.description().contains("Repeats what it is told"));
    let mut registry = Registry::new();
    registry.add(skill);
    let provider = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("r1", "python_echo", json!({"message": "hi"}))]),
        MockReply::text("The remote agent said hi back."),
    ]);
    let runtime = AgentRuntime::new(provider.clone(), registry);
    let outcome = runtime.run("Ask the echo agent.").await.unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let second = &provider.requests()[1];
    let transcript = format!("{:?}", second.messages);
    assert!(transcript.contains("echo: hi"), "{transcript}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_agents_failures_are_error_results() {
    let (_child, url) = python_echo_agent().await;
    let remote = RemoteAgent::connect(&url, None).await.unwrap();
    let skill = remote.clone().into_skill();
    assert_eq!(call(&skill, "direct").await.unwrap(), "echo: direct");

    let failed = call(&skill, "fail").await.unwrap_err();
    assert!(matches!(failed, SkillError::Tool { .. }), "{failed:?}");
    assert!(
        failed.to_string().contains("as failed: it broke"),
        "{failed}"
    );

    // A question from an agent that is no eugene agent: one pending `input` call asking it.
    let asks = call(&skill, "ask").await.unwrap_err();
    let SkillError::Suspended(suspension) = &asks else {
        panic!("{asks:?}")
    };
    assert_eq!(suspension.pending.len(), 1);
    assert_eq!(suspension.pending[0].skill, "input");
    assert!(
        suspension.pending[0].reason.contains("which one?"),
        "{asks}"
    );

    let impatient = remote.timeout(Duration::from_secs(2)).into_skill();
    let started = std::time::Instant::now();
    let hung = call(&impatient, "hang").await.unwrap_err().to_string();
    assert!(hung.contains("did not answer"), "{hung}");
    eprintln!(
        "a hanging remote task ended the call after {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}
