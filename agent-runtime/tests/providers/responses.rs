//! Runs over the OpenAI Responses API on loopback: typed runs in each output mode (what goes on
//! the wire, answers read back whole and streamed), and a run that pauses for approval and
//! continues from its serialized state with the answer's reasoning and call items intact.

use agent_core::{Permission, PermissionGate, Registry, SkillError};
use agent_llm::OpenAiResponsesProvider;
use agent_llm::ResponsesState;
use agent_runtime::{AgentRuntime, Decision, FinishReason, OutputMode, RunState};
use serde_json::{Value, json};

use crate::server::{Reply, Server};

use crate::ticket::{Ticket, answer as ticket_json, ticket};

fn provider(server: &Server) -> OpenAiResponsesProvider {
    OpenAiResponsesProvider::new("sk-test", "gpt-test").with_base_url(format!("{}/v1", server.url))
}

fn usage() -> Value {
    json!({"input_tokens": 20, "output_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
           "output_tokens_details": {"reasoning_tokens": 0}})
}

fn whole(id: &str, output: Value) -> Reply {
    Reply::json(
        200,
        &json!({"id": id, "object": "response", "model": "gpt-test", "status": "completed",
                "output": output, "usage": usage()}),
    )
}

fn says(text: &str) -> Value {
    json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn calls(call_id: &str, name: &str, arguments: Value) -> Value {
    json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
           "name": name, "arguments": arguments.to_string(), "status": "completed"})
}

/// A stream that writes `text` in pieces of 7 characters: JSON cut mid-token.
fn text_stream(text: &str) -> Reply {
    let chars: Vec<char> = text.chars().collect();
    let mut events = vec![
        json!({"type": "response.created", "response": {"id": "resp_s", "model": "gpt-test", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_s", "role": "assistant", "status": "in_progress", "content": []}}),
    ];
    for piece in chars.chunks(7) {
        let piece: String = piece.iter().collect();
        events.push(json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": piece}));
    }
    events.push(json!({"type": "response.completed", "response": {"id": "resp_s", "model": "gpt-test", "status": "completed", "usage": usage()}}));
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Reply::sse(&body)
}

/// Look a ticket up by number.
///
/// # Arguments
/// * `number` - The ticket's number.
#[agent_core::skill(read_only, register = false)]
async fn lookup(number: u32) -> Result<String, SkillError> {
    Ok(format!("ticket {number}: users cannot log in"))
}

fn runtime(provider: OpenAiResponsesProvider, with_tool: bool) -> AgentRuntime {
    let mut registry = Registry::new();
    if with_tool {
        registry.add(LookupSkill);
    }
    AgentRuntime::new(provider, registry)
}

#[tokio::test]
async fn tool_mode_offers_final_answer_as_a_function_and_retries_with_the_error() {
    let server = Server::start([
        whole(
            "resp_1",
            json!([calls(
                "call_1",
                "final_answer",
                json!({"title": "Login fails", "priority": "high"})
            )]),
        ),
        whole(
            "resp_2",
            json!([calls("call_2", "final_answer", ticket_json())]),
        ),
    ])
    .await;
    let typed = runtime(provider(&server), true)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    let names: Vec<&str> = sent[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lookup", "final_answer"]);
    assert_eq!(sent[0]["tools"][1]["type"], "function");
    assert!(sent[0].get("text").is_none(), "{}", sent[0]);
    let retry = sent[1]["input"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(retry["type"], "function_call_output");
    assert_eq!(retry["call_id"], "call_1");
    assert!(
        retry["output"].as_str().unwrap().contains("priority"),
        "{retry}"
    );
    // The rejected call went back with its item id, before its output.
    assert_eq!(sent[1]["input"][1]["id"], "fc_call_1");
    // Both turns name the run's conversation alike for the prompt cache, by a digest.
    let key = sent[0]["prompt_cache_key"].as_str().unwrap();
    assert!(key.starts_with("eugene-") && key.len() == 39, "{key}");
    assert_eq!(sent[1]["prompt_cache_key"], key);
    let again = Server::start([whole("resp_3", json!([says(&ticket_json().to_string())]))]).await;
    let _ = runtime(provider(&again), false)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await;
    assert_ne!(
        again.received()[0].json()["prompt_cache_key"],
        key,
        "another run, another key"
    );
}

#[tokio::test]
async fn native_mode_asks_for_text_format_strict_and_reads_the_text() {
    let server = Server::start([whole("resp_1", json!([says(&ticket_json().to_string())]))]).await;
    let typed = runtime(provider(&server), false)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    let format = &sent["text"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["name"], "final_answer");
    assert_eq!(format["strict"], json!(true));
    assert_eq!(format["schema"]["additionalProperties"], json!(false));
    assert_eq!(
        format["schema"]["required"],
        json!(["title", "priority", "labels"])
    );
    assert!(sent.get("tools").is_none(), "{sent}");
}

#[tokio::test]
async fn native_mode_with_tools_asks_for_the_format_only_on_the_turn_without_them() {
    let server = Server::start([
        whole(
            "resp_1",
            json!([calls("call_1", "lookup", json!({"number": 7}))]),
        ),
        whole("resp_2", json!([says("Ticket 7: users cannot log in.")])),
        whole("resp_3", json!([says(&ticket_json().to_string())])),
    ])
    .await;
    let typed = runtime(provider(&server), true)
        .output_mode(OutputMode::Native)
        .run("File a ticket for 7.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    assert!(sent[0].get("text").is_none() && sent[1].get("text").is_none());
    assert_eq!(sent[2]["text"]["format"]["type"], "json_schema");
    assert_eq!(sent[2]["tool_choice"], "none");
}

#[tokio::test]
async fn a_streamed_native_answer_is_parsed_once_complete() {
    let server = Server::start([text_stream(&ticket_json().to_string())]).await;
    let typed = runtime(provider(&server), false)
        .streaming(true)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    assert_eq!(sent["stream"], json!(true));
    assert!(sent["text"]["format"].is_object());
}

#[tokio::test]
async fn prompted_mode_puts_the_schema_in_the_instructions_and_sends_no_format() {
    let server = Server::start([whole(
        "resp_1",
        json!([says(&format!("Here: {} Done.", ticket_json()))]),
    )])
    .await;
    let typed = runtime(provider(&server), false)
        .system("You file tickets.")
        .output_mode(OutputMode::Prompted)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    assert!(sent.get("text").is_none());
    let instructions = sent["instructions"].as_str().unwrap();
    assert!(
        instructions.starts_with("You file tickets."),
        "{instructions}"
    );
    assert!(instructions.contains("JSON Schema"), "{instructions}");
}

/// Wipe a directory.
///
/// # Arguments
/// * `dir` - The directory to wipe.
#[agent_core::skill(destructive, register = false)]
async fn wipe(dir: String) -> Result<String, SkillError> {
    Ok(format!("wiped {dir}"))
}

fn gated() -> Registry {
    let mut registry = Registry::new();
    registry.add(WipeSkill);
    registry.with_hook(PermissionGate::with(|name, metadata| {
        if metadata.is_destructive {
            Permission::Ask(format!("`{name}` deletes files"))
        } else {
            Permission::Allow
        }
    }));
    registry
}

/// The answer that pauses: encrypted reasoning, then a call that needs approval.
fn reasoning_then_wipe() -> Reply {
    whole(
        "resp_pause",
        json!([
            {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-secret", "summary": [{"type": "summary_text", "text": "Wipe it."}]},
            calls("call_w", "wipe", json!({"dir": "/tmp/x"})),
        ]),
    )
}

/// Runs until the pause and round-trips the state through JSON, as a caller that keeps it would.
async fn paused(runtime: &AgentRuntime) -> RunState {
    let outcome = runtime.run("Clean up /tmp/x.").await.unwrap();
    assert!(
        matches!(outcome.finish, FinishReason::AwaitingApproval { .. }),
        "{:?}",
        outcome.finish
    );
    let json = serde_json::to_string(&outcome.state.expect("a paused run has a state")).unwrap();
    serde_json::from_str(&json).unwrap()
}

#[tokio::test]
async fn a_paused_run_continues_with_the_answers_reasoning_and_call_items() {
    let server = Server::start([
        reasoning_then_wipe(),
        whole("resp_2", json!([says("Done.")])),
    ])
    .await;
    let provider = provider(&server).with_state(ResponsesState::Stateless);
    let runtime = AgentRuntime::new(provider, gated());
    let state = paused(&runtime).await;
    let done = runtime
        .continue_paused(state, [("call_w", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    let sent = server.received()[1].json();
    assert_eq!(
        sent["input"],
        json!([
            {"role": "user", "content": "Clean up /tmp/x."},
            {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-secret", "summary": [{"type": "summary_text", "text": "Wipe it."}]},
            {"type": "function_call", "id": "fc_call_w", "call_id": "call_w", "name": "wipe", "arguments": "{\"dir\":\"/tmp/x\"}"},
            {"type": "function_call_output", "call_id": "call_w", "output": "wiped /tmp/x"},
        ])
    );
    assert_eq!(sent["store"], json!(false));
}

#[tokio::test]
async fn a_chained_run_continues_after_a_pause_from_the_answer_it_paused_on() {
    let server = Server::start([
        reasoning_then_wipe(),
        whole("resp_2", json!([says("Left it.")])),
    ])
    .await;
    let provider = provider(&server).with_state(ResponsesState::Chained);
    let runtime = AgentRuntime::new(provider, gated());
    let state = paused(&runtime).await;
    let done = runtime
        .continue_paused(state, [("call_w", Decision::Deny("not today".into()))])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    let sent = server.received()[1].json();
    assert_eq!(sent["previous_response_id"], "resp_pause");
    let input = sent["input"].as_array().unwrap();
    assert_eq!(input.len(), 1, "only what follows the answer: {input:?}");
    assert_eq!(input[0]["call_id"], "call_w");
    assert!(
        input[0]["output"].as_str().unwrap().contains("not today"),
        "{input:?}"
    );
}
