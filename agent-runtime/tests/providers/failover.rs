//! A run over a `Failover` whose providers speak different wire formats, on real HTTP on
//! loopback: a tool call from the first, a 429 or 529 on the next turn, the answer from the
//! second — whose request carries the conversation without the first format's own items
//! (Gemini's thought signatures, Anthropic's signed thinking) — and the turn priced and
//! reported as the provider that answered.

use std::sync::{Arc, Mutex};

use agent_core::{Registry, SkillError};
use agent_llm::{
    AnthropicProvider, Failover, GeminiProvider, OpenAiResponsesProvider, PriceTable, Usage,
};
use agent_runtime::{AgentEvent, AgentRuntime, FinishReason};
use serde_json::{Value, json};

use crate::server::{Reply, Server};

/// Look a ticket up by number.
///
/// # Arguments
/// * `number` - The ticket's number.
#[agent_core::skill(read_only, register = false)]
async fn lookup(number: u32) -> Result<String, SkillError> {
    Ok(format!("ticket {number}: users cannot log in"))
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    registry
}

/// The run's `Usage` events: each step's tokens and cost.
fn usage_events(events: &[AgentEvent]) -> Vec<(usize, Usage, agent_llm::Cost)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage {
                step, usage, cost, ..
            } => Some((*step, *usage, *cost)),
            _ => None,
        })
        .collect()
}

fn collecting() -> (
    Arc<Mutex<Vec<AgentEvent>>>,
    impl Fn(&AgentEvent) + Send + Sync + 'static,
) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |event: &AgentEvent| events.lock().unwrap().push(event.clone())
    };
    (events, sink)
}

/// Gemini calls the tool, with a thought and the signatures Gemini 2.5 puts on them.
fn gemini_tool_call() -> Reply {
    Reply::json(
        200,
        &json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"text": "The user wants ticket 7.", "thought": true, "thoughtSignature": "R0VNSU5JX1RIT1VHSFQ="},
                {"functionCall": {"name": "lookup", "args": {"number": 7}}, "thoughtSignature": "R0VNSU5JX0NBTEw="},
            ]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 12, "totalTokenCount": 52},
            "modelVersion": "gemini-2.5-flash", "responseId": "r_call",
        }),
    )
}

/// Anthropic's whole answer, without the model's name (the failover names it).
fn anthropic_text(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 90, "output_tokens": 11},
        }),
    )
}

#[tokio::test]
async fn a_run_begun_on_gemini_goes_on_with_anthropic_after_a_429_without_gemini_signatures() {
    let gemini = Server::start([
        gemini_tool_call(),
        Reply::json(
            429,
            &json!({"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}),
        )
        .with_header("retry-after", "30"),
    ])
    .await;
    let anthropic = Server::start([anthropic_text("Ticket 7: users cannot log in.")]).await;
    let failover = Failover::new(
        GeminiProvider::new("gm-test", "gemini-2.5-flash").with_base_url(&gemini.url),
    )
    .then(AnthropicProvider::new("sk-ant-test", "claude-sonnet-4-5").with_base_url(&anthropic.url));
    let (events, sink) = collecting();
    let outcome = AgentRuntime::new(failover, registry())
        .event_sink(sink)
        .run("What does ticket 7 say?")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(
        outcome.final_text.as_deref(),
        Some("Ticket 7: users cannot log in.")
    );
    assert_eq!(gemini.received().len(), 2, "the 429 was not waited out");

    // The second format's request: the conversation, valid for it, and nothing of Gemini's.
    let sent = anthropic.received()[0].json();
    let text = sent.to_string();
    for foreign in ["thoughtSignature", "R0VNSU5J", "signature", "functionCall"] {
        assert!(!text.contains(foreign), "{foreign} in {text}");
    }
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    let call = &messages[1]["content"][0];
    assert_eq!(
        (&call["type"], &call["name"], &call["input"]),
        (&json!("tool_use"), &json!("lookup"), &json!({"number": 7}))
    );
    let result = &messages[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], call["id"]);
    assert!(
        result["content"]
            .to_string()
            .contains("users cannot log in")
    );

    // The move is a retry of the run; each turn is priced as the model that answered it.
    let events = events.lock().unwrap();
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::Retry { step: 2, error, .. }
            if error.contains("429") && error.contains("asking anthropic (claude-sonnet-4-5) instead"))),
        "{events:?}"
    );
    let usages = usage_events(&events);
    let prices = PriceTable::builtin();
    assert_eq!(usages.len(), 2);
    let answered_by: Vec<(String, Option<String>)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage {
                provider, model, ..
            } => Some((provider.clone(), model.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        answered_by,
        [
            ("gemini".to_owned(), Some("gemini-2.5-flash".to_owned())),
            ("anthropic".to_owned(), Some("claude-sonnet-4-5".to_owned())),
        ],
        "each turn's event names who answered it"
    );
    assert_eq!(
        usages[0].2,
        prices.cost("gemini", "gemini-2.5-flash", &usages[0].1)
    );
    let answered = prices.cost("anthropic", "claude-sonnet-4-5", &usages[1].1);
    assert!(answered.is_complete(), "the table prices it");
    assert_eq!(usages[1].2, answered);
    assert_ne!(
        usages[1].2,
        prices.cost("gemini", "gemini-2.5-flash", &usages[1].1),
        "not as the first provider's model"
    );
}

/// Anthropic calls the tool after thinking, with the signature Anthropic checks when the
/// thinking comes back.
fn anthropic_thinking_tool_call() -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "msg_think", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "Ticket 7 needs a lookup.", "signature": "QU5USFJPUElDX1NJRw=="},
                {"type": "redacted_thinking", "data": "QU5USFJPUElDX1JFREFDVEVE"},
                {"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": {"number": 7}},
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 60, "output_tokens": 30},
        }),
    )
}

/// A whole Responses API answer.
fn responses_text(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5",
            "output": [{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "usage": {"input_tokens": 80, "output_tokens": 9, "total_tokens": 89},
        }),
    )
}

#[tokio::test]
async fn a_run_begun_on_anthropic_goes_on_with_responses_after_a_529_without_anthropic_thinking() {
    let anthropic = Server::start([
        anthropic_thinking_tool_call(),
        Reply::json(
            529,
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ])
    .await;
    let responses = Server::start([responses_text("Ticket 7: users cannot log in.")]).await;
    let failover = Failover::new(
        AnthropicProvider::new("sk-ant-test", "claude-sonnet-4-5").with_base_url(&anthropic.url),
    )
    .then(
        OpenAiResponsesProvider::new("sk-test", "gpt-5")
            .with_base_url(format!("{}/v1", responses.url)),
    );
    let outcome = AgentRuntime::new(failover, registry())
        .run("What does ticket 7 say?")
        .await
        .unwrap();
    assert_eq!(
        outcome.final_text.as_deref(),
        Some("Ticket 7: users cannot log in.")
    );
    assert_eq!(anthropic.received().len(), 2);
    let sent = responses.received()[0].json();
    let text = sent.to_string();
    for foreign in ["thinking", "signature", "QU5USFJPUElD", "redacted"] {
        assert!(!text.contains(foreign), "{foreign} in {text}");
    }
    let input = sent["input"].as_array().unwrap();
    let types: Vec<&Value> = input.iter().map(|i| &i["type"]).collect();
    assert_eq!(
        types,
        [
            &Value::Null,
            &json!("function_call"),
            &json!("function_call_output")
        ],
        "{input:?}"
    );
    assert_eq!(input[1]["call_id"], "toolu_01");
    assert_eq!(input[2]["call_id"], "toolu_01");
    // The transcript keeps Anthropic's thinking for Anthropic, should it answer again.
    assert_eq!(outcome.transcript[1].thinking.len(), 2);
}

/// A journal in memory, as a durable host keeps one: each step's value recorded in order, and a
/// run over the same entries replayed from them without asking anyone again.
#[derive(Default)]
struct Recorded {
    entries: Mutex<Vec<Value>>,
    next: std::sync::atomic::AtomicUsize,
}

impl Recorded {
    fn rewind(&self) {
        self.next.store(0, std::sync::atomic::Ordering::SeqCst);
    }
}

impl agent_runtime::Journal for Recorded {
    fn step<'a>(
        &'a self,
        _step: agent_runtime::JournalStep,
        run: agent_runtime::StepFuture<'a, agent_runtime::StepResult>,
    ) -> agent_runtime::StepFuture<'a, Result<Value, agent_runtime::JournalError>> {
        Box::pin(async move {
            let index = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if let Some(value) = self.entries.lock().unwrap().get(index).cloned() {
                return Ok(value);
            }
            match run.await {
                agent_runtime::StepResult::Done(value) => {
                    self.entries.lock().unwrap().push(value.clone());
                    Ok(value)
                }
                agent_runtime::StepResult::Retry(why) => Err(agent_runtime::JournalError(why)),
            }
        })
    }
}

/// Deletes a ticket (asks a person first).
///
/// # Arguments
/// * `number` - The ticket's number.
#[agent_core::skill(destructive, register = false)]
async fn close_ticket(number: u32) -> Result<String, SkillError> {
    CLOSED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok(format!("ticket {number} closed"))
}

static CLOSED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// What the typed run must end with.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct Closed {
    number: u32,
    closed: bool,
}

fn anthropic_calls(id: &str, name: &str, input: Value) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 90, "output_tokens": 11},
        }),
    )
}

#[tokio::test]
async fn a_typed_run_paused_after_a_switch_replays_from_its_journal_and_continues_on_the_answering_provider()
 {
    let overloaded = || {
        Reply::json(
            529,
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        )
    };
    // The first provider is overloaded throughout; the second answers: a call that asks a
    // person, then (after the decision) the typed answer.
    let first = Server::start([overloaded(), overloaded(), overloaded()]).await;
    let second = Server::start([
        anthropic_calls("toolu_1", "close_ticket", json!({"number": 7})),
        anthropic_calls(
            "toolu_2",
            "final_answer",
            json!({"number": 7, "closed": true}),
        ),
    ])
    .await;
    let failover = || {
        Failover::new(AnthropicProvider::new("sk-1", "claude-haiku-4-5").with_base_url(&first.url))
            .then(AnthropicProvider::new("sk-2", "claude-sonnet-4-5").with_base_url(&second.url))
    };
    let registry = || {
        let mut registry = Registry::new();
        registry
            .add(CloseTicketSkill)
            .with_hook(agent_core::PermissionGate::with(|_, m| {
                if m.is_destructive {
                    agent_core::Permission::Ask("closes a ticket".into())
                } else {
                    agent_core::Permission::Allow
                }
            }));
        registry
    };
    let journal = Arc::new(Recorded::default());
    let runtime = |journal: Arc<Recorded>| {
        AgentRuntime::new(failover(), registry())
            .output_mode(agent_runtime::OutputMode::Tool)
            .journal(journal)
    };
    let paused = runtime(journal.clone())
        .run("Close ticket 7.")
        .typed::<Closed>()
        .await
        .unwrap();
    assert!(
        matches!(paused.outcome.finish, FinishReason::AwaitingApproval { .. }),
        "{:?}",
        paused.outcome.finish
    );
    assert_eq!(second.received().len(), 1);
    assert_eq!(CLOSED.load(std::sync::atomic::Ordering::SeqCst), 0);
    // The journal recorded who answered.
    let recorded = journal.entries.lock().unwrap().clone();
    assert!(
        recorded.iter().any(
            |entry| entry.to_string().contains(r#""provider":"anthropic""#)
                && entry.to_string().contains("claude-sonnet-4-5")
        ),
        "{recorded:?}"
    );

    // A crash and a replay: the same run over the journal asks nobody and pauses the same way.
    journal.rewind();
    let (before_first, before_second) = (first.received().len(), second.received().len());
    let replayed = runtime(journal.clone())
        .run("Close ticket 7.")
        .typed::<Closed>()
        .await
        .unwrap();
    assert!(matches!(
        replayed.outcome.finish,
        FinishReason::AwaitingApproval { .. }
    ));
    assert_eq!(
        (first.received().len(), second.received().len()),
        (before_first, before_second),
        "a replay asks no provider"
    );
    let state = *replayed.outcome.state.unwrap();
    let pending = state.pending().to_vec();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].path(), "close_ticket");

    // The decision: the call runs once, the typed answer comes from the provider that answers.
    let done = AgentRuntime::new(failover(), registry())
        .output_mode(agent_runtime::OutputMode::Tool)
        .continue_paused(
            state,
            [(
                agent_runtime::CallRef::from(&pending[0]),
                agent_runtime::Decision::Approve,
            )],
        )
        .typed::<Closed>()
        .await
        .unwrap();
    assert_eq!(
        done.output,
        Some(Closed {
            number: 7,
            closed: true
        })
    );
    assert_eq!(CLOSED.load(std::sync::atomic::Ordering::SeqCst), 1);
    let sent = second.received().last().unwrap().json().to_string();
    assert!(sent.contains("ticket 7 closed"), "{sent}");
}
