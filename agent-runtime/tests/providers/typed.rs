//! Typed runs over real HTTP on loopback, in both wire formats: what each output mode puts on the
//! wire (the final-answer tool, the response schema, the instructions), and answers read back
//! whole and streamed.

use agent_core::Registry;
use agent_llm::{AnthropicProvider, LlmProvider, OpenAiProvider};
use agent_runtime::{AgentRuntime, OutputMode};
use serde_json::{Value, json};

use crate::server::{Reply, Server};

use crate::ticket::{Ticket, answer, ticket};

fn anthropic(server: &Server) -> AnthropicProvider {
    AnthropicProvider::new("sk-test", "claude-test").with_base_url(&server.url)
}

fn openai(server: &Server) -> OpenAiProvider {
    OpenAiProvider::new("sk-test", "gpt-test").with_base_url(format!("{}/v1", server.url))
}

fn anthropic_text(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 20, "output_tokens": 10},
        }),
    )
}

fn anthropic_tool_use(id: &str, name: &str, input: Value) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 20, "output_tokens": 10},
        }),
    )
}

fn openai_text(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "c1", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
        }),
    )
}

fn openai_tool_call(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "c2", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
        }),
    )
}

/// An Anthropic stream that writes `text` in a few pieces.
fn anthropic_text_stream(text: &str) -> Reply {
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_3", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    for piece in pieces(text) {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
        ));
    }
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push(("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 10}})));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let body: String = events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect();
    Reply::sse(&body)
}

/// An OpenAI stream that writes `text` in a few pieces.
fn openai_text_stream(text: &str) -> Reply {
    let mut chunks: Vec<Value> = pieces(text)
        .into_iter()
        .map(|piece| json!({"id": "c3", "model": "gpt-test", "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]}))
        .collect();
    chunks.push(json!({"id": "c3", "model": "gpt-test", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    chunks.push(json!({"id": "c3", "model": "gpt-test", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}}));
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    Reply::sse(&body)
}

/// `text` cut in pieces of 7 characters: JSON split mid-token, as streams deliver it.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(7).map(|c| c.iter().collect()).collect()
}

/// A runtime with one tool (so Auto picks tool mode where tools are supported).
fn runtime(provider: impl LlmProvider + 'static, with_tool: bool) -> AgentRuntime {
    let mut registry = Registry::new();
    if with_tool {
        registry.add(LookupSkill);
    }
    AgentRuntime::new(provider, registry)
}

/// Look a ticket up by number.
///
/// # Arguments
/// * `number` - The ticket's number.
#[agent_core::skill(read_only, register = false)]
async fn lookup(number: u32) -> Result<String, agent_core::SkillError> {
    Ok(format!("ticket {number}: users cannot log in"))
}

#[tokio::test]
async fn anthropic_tool_mode_offers_final_answer_and_reads_its_input() {
    let server = Server::start([anthropic_tool_use("toolu_1", "final_answer", answer())]).await;
    let typed = runtime(anthropic(&server), true)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    let names: Vec<&str> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lookup", "final_answer"]);
    assert_eq!(
        sent["tools"][1]["input_schema"]["required"],
        json!(["title", "priority"])
    );
    assert!(sent.get("output_config").is_none(), "{sent}");
}

#[tokio::test]
async fn anthropic_native_mode_sends_output_config_format_and_reads_the_text() {
    let server = Server::start([anthropic_text(&answer().to_string())]).await;
    let typed = runtime(anthropic(&server), false)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    let format = &sent["output_config"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["schema"]["additionalProperties"], json!(false));
    // Strict form: every property required, the optional one nullable.
    assert_eq!(
        format["schema"]["required"],
        json!(["title", "priority", "labels"])
    );
    assert!(sent.get("tools").is_none(), "{sent}");
}

#[tokio::test]
async fn anthropic_native_mode_with_tools_sends_the_schema_only_with_tool_choice_none() {
    let server = Server::start([
        anthropic_tool_use("toolu_1", "lookup", json!({"number": 7})),
        anthropic_text("Ticket 7: users cannot log in."),
        anthropic_text(&answer().to_string()),
    ])
    .await;
    let typed = runtime(anthropic(&server), true)
        .output_mode(OutputMode::Native)
        .run("File a ticket for 7.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    assert!(sent[0].get("output_config").is_none());
    assert!(sent[1].get("output_config").is_none());
    assert_eq!(sent[2]["output_config"]["format"]["type"], "json_schema");
    assert_eq!(sent[2]["tool_choice"], json!({"type": "none"}));
}

#[tokio::test]
async fn anthropic_streamed_native_answer_is_parsed_once_complete() {
    let server = Server::start([anthropic_text_stream(&answer().to_string())]).await;
    let typed = runtime(anthropic(&server), false)
        .streaming(true)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    assert_eq!(server.received()[0].json()["stream"], json!(true));
}

#[tokio::test]
async fn anthropic_prompted_mode_puts_the_schema_in_the_system_prompt() {
    let server = Server::start([anthropic_text(&format!(
        "Sure:\n```json\n{}\n```",
        answer()
    ))])
    .await;
    let typed = runtime(anthropic(&server), false)
        .system("You file tickets.")
        .output_mode(OutputMode::Prompted)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    let system = sent["system"][0]["text"].as_str().unwrap();
    assert!(system.starts_with("You file tickets."), "{system}");
    assert!(system.contains("\"priority\""), "{system}");
    assert!(sent.get("output_config").is_none());
}

#[tokio::test]
async fn openai_tool_mode_offers_final_answer_and_retries_with_the_error() {
    let server = Server::start([
        openai_tool_call(
            "call_1",
            "final_answer",
            json!({"title": "Login fails", "priority": "high"}),
        ),
        openai_tool_call("call_2", "final_answer", answer()),
    ])
    .await;
    let typed = runtime(openai(&server), true)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    assert_eq!(sent[0]["tools"][1]["function"]["name"], "final_answer");
    assert!(sent[0].get("response_format").is_none());
    let retry = sent[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(retry["role"], "tool");
    assert_eq!(retry["tool_call_id"], "call_1");
    assert!(
        retry["content"].as_str().unwrap().contains("priority"),
        "{retry}"
    );
}

#[tokio::test]
async fn openai_native_mode_sends_a_strict_response_format() {
    let server = Server::start([openai_text(&answer().to_string())]).await;
    let typed = runtime(openai(&server), false)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    let format = &sent["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "final_answer");
    assert_eq!(format["json_schema"]["strict"], json!(true));
    assert_eq!(
        format["json_schema"]["schema"]["required"],
        json!(["title", "priority", "labels"])
    );
}

#[tokio::test]
async fn openai_streamed_native_answer_is_parsed_once_complete() {
    let server = Server::start([openai_text_stream(&answer().to_string())]).await;
    let typed = runtime(openai(&server), false)
        .streaming(true)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    assert!(server.received()[0].json()["response_format"].is_object());
}

#[tokio::test]
async fn openai_server_without_response_schema_gets_tool_or_prompted_mode_from_auto() {
    // Without tools and without `response_format`, Auto takes tool mode (the server can call
    // tools): the only tool on offer is `final_answer`.
    let server = Server::start([openai_tool_call("call_1", "final_answer", answer())]).await;
    let typed = runtime(openai(&server).with_response_schema(false), false)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    assert!(sent.get("response_format").is_none());
    assert_eq!(sent["tools"][0]["function"]["name"], "final_answer");
}

#[tokio::test]
async fn openai_prompted_mode_reads_json_from_prose_and_sends_no_format() {
    let server = Server::start([openai_text(&format!("Here: {} Done.", answer()))]).await;
    let typed = runtime(openai(&server), false)
        .output_mode(OutputMode::Prompted)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    assert!(sent.get("response_format").is_none());
    let system = &sent["messages"][0];
    assert_eq!(system["role"], "system");
    assert!(system["content"].as_str().unwrap().contains("JSON Schema"));
}
