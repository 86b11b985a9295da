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
