//! A remote tool that asks the client's model (`sampling/createMessage`): the application's hook
//! decides, only an allowed request reaches the model, and its tokens count in the run of the call
//! it came with.

use std::sync::{Arc, Mutex};

use agent_core::{Decision, ToolCall};
use agent_llm::{MockProvider, MockReply, Usage};
use agent_mcp::McpSkills;
use agent_mcp::client::{SAMPLING_CALL, sampling_source};
use agent_mcp::client::{Sampling, SamplingRequest, SamplingVerdict};
use agent_runtime::{AgentRuntime, RunOutcome};
use serde_json::json;

use super::{modern_server, only_result, pending, registry_of, runtime_calling, server};

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    }
}

/// A runtime whose own model calls `calls` (using 100 + 10 tokens), then answers (50 + 5).
fn counted_runtime(skills: &McpSkills, calls: Vec<ToolCall>) -> AgentRuntime {
    let model = MockProvider::new([
        MockReply::tool_calls(calls).with_usage(usage(100, 10)),
        MockReply::text("Done.").with_usage(usage(50, 5)),
    ]);
    AgentRuntime::new(model, registry_of(skills))
}

/// What a run kept of the server's sampling requests: its entry in `RunOutcome::agents`, under
/// `mcp sampling › LABEL` (the label names the server's script).
fn sampled(outcome: &RunOutcome) -> Option<Usage> {
    let prefix = sampling_source("");
    let mut kept = outcome
        .agents
        .iter()
        .filter(|(source, _)| source.starts_with(&prefix));
    let (source, usage) = kept.next()?;
    assert!(source.contains("consume_server.py"), "{source}");
    assert!(kept.next().is_none(), "{:?}", outcome.agents);
    Some(*usage)
}

fn summarize() -> Vec<ToolCall> {
    vec![ToolCall::new(
        "c1",
        "summarize",
        json!({"text": "The meeting moved to Thursday at noon."}),
    )]
}

#[tokio::test]
async fn a_request_the_hook_denies_never_reaches_the_model() {
    let model = Arc::new(MockProvider::new([MockReply::text("never said")]));
    let seen = Arc::new(Mutex::new(Vec::<(String, SamplingRequest)>::new()));
    let hook = {
        let seen = seen.clone();
        move |server: &str, request: &SamplingRequest| {
            seen.lock()
                .unwrap()
                .push((server.to_owned(), request.clone()));
            SamplingVerdict::Deny("this server may not use the model".into())
        }
    };
    let skills = server()
        .await
        .with_sampling(Sampling::new(model.clone(), hook));
    let runtime = runtime_calling(&skills, summarize());
    let done = runtime.run("Summarize the note.").await.unwrap();

    let (text, is_error) = only_result(&done);
    assert!(is_error, "{text}");
    assert!(
        text.contains(
            "sampling request refused: the client denied it: this server may not use the model"
        ),
        "{text}"
    );
    assert!(model.requests().is_empty(), "{:?}", model.requests());
    assert_eq!(model.remaining(), 1);
    assert_eq!(skills.sampling_usage(), (Usage::default(), 0));
    // The hook saw the server's request as the server wrote it.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let (server, request) = &seen[0];
    assert!(server.contains("consume_server.py"), "{server}");
    assert_eq!(
        request.system.as_deref(),
        Some("You summarize in five words.")
    );
    assert_eq!(request.max_tokens, 50);
    assert_eq!(request.messages.len(), 1);
    assert_eq!(
        request.messages[0].content,
        "Summarize: The meeting moved to Thursday at noon."
    );
}

#[tokio::test]
async fn without_a_model_every_request_is_refused_saying_so() {
    let skills = server().await;
    let runtime = runtime_calling(&skills, summarize());
    let done = runtime.run("Summarize the note.").await.unwrap();
    let (text, is_error) = only_result(&done);
    assert!(is_error, "{text}");
    assert!(text.contains("McpSkills::with_sampling"), "{text}");
}

#[tokio::test]
async fn an_allowed_request_is_answered_by_the_model_and_counted() {
    let usage = usage(31, 7);
    let model = Arc::new(
        MockProvider::new([MockReply::text("Meeting moved to Thursday noon.").with_usage(usage)])
            .with_model("mock-summarizer"),
    );
    let skills = server().await.with_sampling(
        Sampling::new(model.clone(), |_: &str, _: &SamplingRequest| {
            SamplingVerdict::Allow
        })
        .max_tokens(20),
    );
    let runtime = counted_runtime(&skills, summarize());
    let done = runtime.run("Summarize the note.").await.unwrap();

    assert_eq!(
        only_result(&done),
        (
            json!({"result": "summary by mock-summarizer: Meeting moved to Thursday noon."})
                .to_string(),
            false
        )
    );
    let asked = model.requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].system.as_deref(),
        Some("You summarize in five words.")
    );
    // The server asked for 50 tokens; the application allows 20.
    assert_eq!(asked[0].max_tokens, 20);
    assert!(asked[0].tools.is_empty());
    assert_eq!(
        asked[0].messages[0].content,
        "Summarize: The meeting moved to Thursday at noon."
    );
    assert_eq!(skills.sampling_usage(), (usage, 1));
    // The run counts it: its own 150 + 15, and the server's request.
    assert_eq!(done.usage, self::usage(181, 22));
    assert_eq!(sampled(&done), Some(usage));
    assert_eq!(done.agent_steps, 1, "one model call answered the server");
    // Neither the run's mock nor `mock-summarizer` has a price: three unpriced calls, not $0.
    assert_eq!(done.cost.unpriced_calls, 3, "{:?}", done.cost);
}

#[tokio::test]
async fn a_hook_may_rewrite_the_request_before_the_model_sees_it() {
    let model = Arc::new(MockProvider::new([MockReply::text("Short.")]));
    let skills = server().await.with_sampling(Sampling::new(
        model.clone(),
        |_: &str, request: &SamplingRequest| {
            SamplingVerdict::Edit(SamplingRequest {
                system: Some("Answer in one word.".into()),
                max_tokens: 5_000, // over the limit: cut to the Sampling's 4,096
                ..request.clone()
            })
        },
    ));
    let runtime = runtime_calling(&skills, summarize());
    let done = runtime.run("Summarize the note.").await.unwrap();
    let (text, is_error) = only_result(&done);
    assert!(!is_error && text.contains("Short."), "{text}");
    let asked = model.requests();
    assert_eq!(asked[0].system.as_deref(), Some("Answer in one word."));
    assert_eq!(asked[0].max_tokens, 4096);
}

/// A run whose model calls `summarize`, on a server whose sampling requests a person approves,
/// paused on the first one: the runtime, the paused outcome, the server's model.
async fn paused_on_sampling() -> (
    agent_mcp::McpSkills,
    agent_runtime::AgentRuntime,
    agent_runtime::RunOutcome,
    Arc<MockProvider>,
) {
    let model = Arc::new(
        MockProvider::new([MockReply::text("Thursday at noon.").with_usage(usage(40, 6))])
            .with_model("mock-summarizer"),
    );
    let skills = server()
        .await
        .with_sampling(Sampling::asking(model.clone()));
    let runtime = counted_runtime(&skills, summarize());
    let paused = runtime.run("Summarize the note.").await.unwrap();
    (skills, runtime, paused, model)
}

#[tokio::test]
async fn by_default_a_person_is_asked_and_an_approval_lets_the_model_answer() {
    let (skills, runtime, paused, model) = paused_on_sampling().await;
    let waiting = pending(&paused).to_vec();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    let call = &waiting[0];
    assert_eq!(call.id(), "c1/sampling");
    assert_eq!(call.call.name, SAMPLING_CALL);
    assert_eq!(
        call.call.arguments["system"],
        "You summarize in five words."
    );
    assert_eq!(
        call.call.arguments["messages"],
        json!([{"role": "user", "content": "Summarize: The meeting moved to Thursday at noon."}])
    );
    assert_eq!(call.call.arguments["max_tokens"], 50);
    assert!(
        call.reason.contains("asks to use your model"),
        "{}",
        call.reason
    );
    // Nothing reached the model while the person decides.
    assert!(model.requests().is_empty());
    assert_eq!(skills.open_elicitations(), 1);
    assert_eq!(paused.usage, usage(100, 10));
    assert_eq!(sampled(&paused), None);

    let done = runtime
        .continue_paused(*paused.state.unwrap(), [(call.id(), Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        only_result(&done),
        (
            json!({"result": "summary by mock-summarizer: Thursday at noon."}).to_string(),
            false
        )
    );
    assert_eq!(model.requests().len(), 1);
    assert_eq!(skills.sampling_usage().1, 1);
    // The continued run counts the answer: the runtime's two calls and the sampling's 40 + 6.
    assert_eq!(done.usage, usage(190, 21));
    assert_eq!(sampled(&done), Some(usage(40, 6)));
    assert_eq!(done.agent_steps, 1);
}

#[tokio::test]
async fn a_sampling_request_a_person_denies_never_reaches_the_model() {
    let (skills, runtime, paused, model) = paused_on_sampling().await;
    let id = pending(&paused)[0].id();
    // An edit is no answer to a sampling request: asked again, nothing sent.
    let again = runtime
        .continue_paused(
            *paused.state.unwrap(),
            [(id.clone(), Decision::Edit(json!({"max_tokens": 5})))],
        )
        .await
        .unwrap();
    let reason = &pending(&again)[0].reason;
    assert!(
        reason.starts_with("your answer was not sent (a sampling request is answered with Approve"),
        "{reason}"
    );
    let done = runtime
        .continue_paused(
            *again.state.unwrap(),
            [(id, Decision::Deny("not on this account".into()))],
        )
        .await
        .unwrap();
    let (text, is_error) = only_result(&done);
    assert!(is_error, "{text}");
    assert!(
        text.contains("the person denied it: not on this account"),
        "{text}"
    );
    assert!(model.requests().is_empty());
    assert_eq!(skills.sampling_usage(), (Usage::default(), 0));
    assert_eq!(sampled(&done), None);
    assert_eq!(done.usage, usage(150, 15));
}

#[tokio::test]
async fn a_request_over_the_message_limit_is_refused_before_the_hook_and_the_model() {
    let model = Arc::new(MockProvider::new([MockReply::text("never said")]));
    let hooked = Arc::new(Mutex::new(0));
    let hook = {
        let hooked = hooked.clone();
        move |_: &str, _: &SamplingRequest| {
            *hooked.lock().unwrap() += 1;
            SamplingVerdict::Allow
        }
    };
    let skills = server()
        .await
        .with_sampling(Sampling::new(model.clone(), hook));
    let over = agent_mcp::client::MAX_SAMPLING_MESSAGES + 1;
    let runtime = runtime_calling(
        &skills,
        vec![ToolCall::new("f1", "flood", json!({ "count": over }))],
    );
    let done = runtime.run("Flood the model.").await.unwrap();
    let (text, is_error) = only_result(&done);
    assert!(is_error, "{text}");
    assert!(
        text.contains(&format!(
            "it has {over} messages, over the limit of {}",
            agent_mcp::client::MAX_SAMPLING_MESSAGES
        )),
        "{text}"
    );
    assert_eq!(*hooked.lock().unwrap(), 0);
    assert!(model.requests().is_empty());

    // At the limit, it is answered.
    let runtime = runtime_calling(
        &skills,
        vec![ToolCall::new(
            "f2",
            "flood",
            json!({ "count": agent_mcp::client::MAX_SAMPLING_MESSAGES }),
        )],
    );
    let done = runtime.run("Flood the model a little less.").await.unwrap();
    let (text, is_error) = only_result(&done);
    assert!(!is_error, "{text}");
    assert_eq!(
        model.requests()[0].messages.len(),
        agent_mcp::client::MAX_SAMPLING_MESSAGES
    );
}

/// `brief` on a server spoken to in MCP 2026-07-28, whose sampling request comes in an
/// `input_required` result.
async fn brief_over_input_required(sampling: Sampling) -> RunOutcome {
    let skills = modern_server().await.with_sampling(sampling);
    let runtime = counted_runtime(
        &skills,
        vec![ToolCall::new("b1", "brief", json!({"text": "the plan"}))],
    );
    runtime.run("Write a brief.").await.unwrap()
}

#[tokio::test]
async fn a_sampling_request_in_an_input_required_result_is_answered_when_allowed() {
    let model = Arc::new(
        MockProvider::new([MockReply::text("A plan.").with_usage(usage(20, 3))]).with_model("mock"),
    );
    let allow = |_: &str, _: &SamplingRequest| SamplingVerdict::Allow;
    let done = brief_over_input_required(Sampling::new(model.clone(), allow)).await;
    assert_eq!(sampled(&done), Some(usage(20, 3)));
    assert_eq!(done.usage, usage(170, 18));
    assert_eq!(
        only_result(&done),
        (
            json!({"result": "brief by mock: A plan."}).to_string(),
            false
        )
    );
    assert_eq!(
        model.requests()[0].system.as_deref(),
        Some("You write briefs.")
    );
}

#[tokio::test]
async fn a_sampling_request_in_an_input_required_result_a_person_would_approve_is_refused() {
    let model = Arc::new(MockProvider::new([MockReply::text("never said")]));
    let done = brief_over_input_required(Sampling::asking(model.clone())).await;
    let (text, is_error) = only_result(&done);
    assert!(is_error, "{text}");
    assert!(
        text.contains("none could be asked about this one"),
        "{text}"
    );
    assert!(model.requests().is_empty());
}
