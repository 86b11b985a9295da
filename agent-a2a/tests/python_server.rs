//! A server on the official Python SDK (`a2a-sdk` 1.3.0, `tests/programs/echo_agent.py`) used
//! through our client: the remote agent as a skill, in the agent loop and called alone, and its
//! failures (a failed task, a task that never ends) as error results, and its question (a task
//! waiting for input) as a pause that the answer continues.

mod common;

use std::time::Duration;

use agent_a2a::RemoteAgent;
use agent_core::{DynSkill, Registry, SkillContext, SkillError, ToolCall};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::{AgentRuntime, Decision, FinishReason};
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_agents_question_pauses_the_run_and_the_answer_continues_its_task() {
    let (_child, url) = python_echo_agent().await;
    let remote = RemoteAgent::connect(&url, None).await.unwrap();
    let runtime = |replies: Vec<MockReply>| {
        let mut registry = Registry::new();
        registry.add(remote.clone().into_skill());
        let provider = MockProvider::new(replies);
        (AgentRuntime::new(provider.clone(), registry), provider)
    };
    let (first, _) = runtime(vec![MockReply::tool_calls([ToolCall::new(
        "r1",
        "python_echo",
        json!({"message": "ask"}),
    )])]);
    let paused = first.run("Ask the echo agent.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("{:?}", paused.finish)
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id(), "r1/input");
    assert_eq!(pending[0].path(), "python_echo › input");
    assert!(pending[0].reason.contains("which one?"), "{pending:?}");
    // Kept as JSON, continued by another runtime, as another process would.
    let json = serde_json::to_string(&paused.state.unwrap()).unwrap();

    // A wrong id is refused and sends nothing: the remote task still waits.
    let (second, _) = runtime(vec![MockReply::text("unused")]);
    let state: agent_runtime::RunState = serde_json::from_str(&json).unwrap();
    let wrong = second
        .continue_paused(state, [("r1/nope", Decision::Approve)])
        .await
        .unwrap_err();
    assert!(wrong.to_string().contains("`r1/nope`"), "{wrong}");

    let (second, provider) = runtime(vec![MockReply::text("It chose.")]);
    let state: agent_runtime::RunState = serde_json::from_str(&json).unwrap();
    let answer = Decision::Edit(json!({"answer": "the blue one"}));
    let done = second
        .continue_paused(state, [("r1/input", answer)])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    let transcript = format!("{:?}", provider.requests()[0].messages);
    assert!(
        transcript.contains("you chose: the blue one"),
        "the Python agent's task went on with the answer: {transcript}"
    );

    // The stream of that continued task started with a change; with an answer that starts
    // `again`, it starts with the task as it was, still waiting (the SDK's usual executor
    // sends that), and the client waits for the rest too.
    let (first, _) = runtime(vec![MockReply::tool_calls([ToolCall::new(
        "r1",
        "python_echo",
        json!({"message": "ask"}),
    )])]);
    let state = *first.run("Ask again.").await.unwrap().state.unwrap();
    let (second, provider) = runtime(vec![MockReply::text("It chose.")]);
    let answer = Decision::Edit(json!("again, the red one"));
    let done = second
        .continue_paused(state, [("r1/input", answer)])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    let transcript = format!("{:?}", provider.requests()[0].messages);
    assert!(
        transcript.contains("you chose: again, the red one"),
        "{transcript}"
    );
}
