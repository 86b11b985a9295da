//! Typed runs consumed as streams of partial answers, over real HTTP on loopback through each
//! wire format's codec: the final-answer tool's arguments as they stream (Anthropic, Chat
//! Completions, Responses; Gemini sends a call whole), native structured output and prompted
//! text read as they arrive, a whole answer as one partial; and every tool call's argument
//! pieces as events, on recorded traffic.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use agent_core::Registry;
use agent_llm::{
    AnthropicProvider, GeminiProvider, LlmProvider, OpenAiProvider, OpenAiResponsesProvider,
};
use agent_runtime::{AgentEvent, AgentRuntime, OutputMode, TypedEvent};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::server::{End, Reply, Server, fixture};
use crate::ticket::{Ticket, answer, ticket};

/// `text` cut in pieces of 5 characters: JSON split mid-token, as streams deliver it.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(5).map(|c| c.iter().collect()).collect()
}

fn sse(events: &[(&str, Value)]) -> Reply {
    let body: String = events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect();
    Reply::sse(&body)
}

/// Anthropic: a `tool_use` block whose input arrives as `input_json_delta` pieces, or a text
/// block written in pieces.
fn anthropic_stream(tool: Option<&str>, text: &str) -> Reply {
    let (block, delta): (Value, fn(&str) -> Value) = match tool {
        Some(name) => (
            json!({"type": "tool_use", "id": "toolu_s", "name": name, "input": {}}),
            |p| json!({"type": "input_json_delta", "partial_json": p}),
        ),
        None => (
            json!({"type": "text", "text": ""}),
            |p| json!({"type": "text_delta", "text": p}),
        ),
    };
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_s", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
    ];
    for piece in pieces(text) {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta(&piece)}),
        ));
    }
    let stop = if tool.is_some() {
        "tool_use"
    } else {
        "end_turn"
    };
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push(("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 10}})));
    events.push(("message_stop", json!({"type": "message_stop"})));
    sse(&events)
}

/// Chat Completions: one tool call whose arguments arrive in pieces.
fn openai_tool_stream(name: &str, text: &str) -> Reply {
    let mut chunks = vec![
        json!({"id": "c", "model": "gpt-test", "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_s", "type": "function", "function": {"name": name, "arguments": ""}}]}, "finish_reason": null}]}),
    ];
    for piece in pieces(text) {
        chunks.push(json!({"id": "c", "model": "gpt-test", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}, "finish_reason": null}]}));
    }
    chunks.push(json!({"id": "c", "model": "gpt-test", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
    chunks.push(json!({"id": "c", "model": "gpt-test", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}}));
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    Reply::sse(&body)
}

/// Responses: a `function_call` item whose arguments arrive as deltas.
fn responses_tool_stream(name: &str, text: &str) -> Reply {
    let usage = json!({"input_tokens": 20, "output_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}});
    let item = |arguments: &str, status: &str| json!({"type": "function_call", "id": "fc_s", "call_id": "call_s", "name": name, "arguments": arguments, "status": status});
    let mut events = vec![
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_s", "model": "gpt-test", "status": "in_progress", "output": []}}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item("", "in_progress")}),
        ),
    ];
    for piece in pieces(text) {
        events.push(("response.function_call_arguments.delta", json!({"type": "response.function_call_arguments.delta", "item_id": "fc_s", "output_index": 0, "delta": piece})));
    }
    events.push(("response.output_item.done", json!({"type": "response.output_item.done", "output_index": 0, "item": item(text, "completed")})));
    events.push(("response.completed", json!({"type": "response.completed", "response": {"id": "resp_s", "model": "gpt-test", "status": "completed", "output": [item(text, "completed")], "usage": usage}})));
    sse(&events)
}

/// Gemini: a function call arrives whole, in one chunk.
fn gemini_call_stream(name: &str, args: Value) -> Reply {
    let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]}, "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 5}, "responseId": "r_s"});
    Reply::sse_chunks(
        vec![format!("data: {chunk}\r\n\r\n").into_bytes()],
        End::Finish,
    )
}

fn anthropic(server: &Server) -> AnthropicProvider {
    AnthropicProvider::new("sk-test", "claude-test").with_base_url(&server.url)
}

fn openai(server: &Server) -> OpenAiProvider {
    OpenAiProvider::new("sk-test", "gpt-test").with_base_url(format!("{}/v1", server.url))
}

fn responses(server: &Server) -> OpenAiResponsesProvider {
    OpenAiResponsesProvider::new("sk-test", "gpt-test").with_base_url(format!("{}/v1", server.url))
}

fn gemini(server: &Server) -> GeminiProvider {
    GeminiProvider::new("key-test", "gemini-test").with_base_url(&server.url)
}

/// The partials of a typed run on `provider`, and its result.
async fn partials(
    provider: impl LlmProvider + 'static,
    mode: OutputMode,
    streaming: bool,
) -> (Vec<Value>, Ticket) {
    let runtime = AgentRuntime::new(provider, Registry::new())
        .output_mode(mode)
        .streaming(streaming);
    let mut events = runtime.run("File a ticket.").typed::<Ticket>().stream();
    let (mut partials, mut done) = (Vec::new(), None);
    while let Some(event) = events.next().await {
        assert!(done.is_none(), "nothing follows Done");
        match event {
            TypedEvent::Partial(partial) => partials.push(partial.value().clone()),
            TypedEvent::Done(outcome) => done = Some(outcome.expect("the run ends").output),
        }
    }
    (
        partials,
        done.expect("the stream ends with Done").expect("a ticket"),
    )
}

/// Each partial holds only what the answer holds (complete values equal, arrays a prefix), and
/// each holds at least what the one before held.
fn assert_growing(partials: &[Value], whole: &Value) {
    fn within(part: &Value, whole: &Value) -> bool {
        match (part, whole) {
            (Value::Object(p), Value::Object(w)) => p
                .iter()
                .all(|(k, v)| w.get(k).is_some_and(|w| within(v, w))),
            (Value::Array(p), Value::Array(w)) => {
                p.len() <= w.len() && p.iter().zip(w).all(|(p, w)| within(p, w))
            }
            (p, w) => p == w,
        }
    }
    for pair in partials.windows(2) {
        assert!(within(&pair[0], &pair[1]), "{} then {}", pair[0], pair[1]);
        assert_ne!(
            pair[0], pair[1],
            "a partial is sent when something was added"
        );
    }
    for partial in partials {
        assert!(within(partial, whole), "{partial} is not part of {whole}");
    }
    assert_eq!(
        partials.last(),
        Some(whole),
        "the last partial is the whole answer"
    );
}

#[tokio::test]
async fn the_final_answer_tools_arguments_stream_as_partials_on_three_formats() {
    let text = answer().to_string();
    let servers = [
        Server::start([anthropic_stream(Some("final_answer"), &text)]).await,
        Server::start([openai_tool_stream("final_answer", &text)]).await,
        Server::start([responses_tool_stream("final_answer", &text)]).await,
    ];
    let runs = [
        partials(anthropic(&servers[0]), OutputMode::Tool, true).await,
        partials(openai(&servers[1]), OutputMode::Tool, true).await,
        partials(responses(&servers[2]), OutputMode::Tool, true).await,
    ];
    for (format, (partials, done)) in ["anthropic", "chat", "responses"].iter().zip(runs) {
        assert_eq!(done, ticket(), "{format}");
        assert_growing(&partials, &answer());
        // `{}`, the title, the priority, the labels opened, "auth", at least.
        assert!(partials.len() >= 5, "{format}: {partials:?}");
        assert_eq!(partials[0], json!({}), "{format}");
        assert_eq!(partials[1], json!({"title": "Login fails"}), "{format}");
    }
}

#[tokio::test]
async fn a_call_that_arrives_whole_is_one_partial_then_the_value() {
    let server = Server::start([gemini_call_stream("final_answer", answer())]).await;
    let (partials, done) = partials(gemini(&server), OutputMode::Tool, true).await;
    assert_eq!(partials, [answer()]);
    assert_eq!(done, ticket());
}

#[tokio::test]
async fn native_answers_stream_as_partials_as_their_text_arrives() {
    let text = answer().to_string();
    let gemini_server = Server::start([crate::gemini::text_stream(&text)]).await;
    let anthropic_server = Server::start([anthropic_stream(None, &text)]).await;
    for (partials, done) in [
        partials(gemini(&gemini_server), OutputMode::Native, true).await,
        partials(anthropic(&anthropic_server), OutputMode::Native, true).await,
    ] {
        assert_eq!(done, ticket());
        assert_growing(&partials, &answer());
        assert!(partials.len() >= 5, "{partials:?}");
    }
}

#[tokio::test]
async fn prompted_answers_skip_the_prose_before_the_json() {
    let text = format!(
        "Here is the ticket:\n```json\n{}\n```\nAnything else?",
        answer()
    );
    let server = Server::start([anthropic_stream(None, &text)]).await;
    let (partials, done) = partials(anthropic(&server), OutputMode::Prompted, true).await;
    assert_eq!(done, ticket());
    assert_growing(&partials, &answer());
}

#[tokio::test]
async fn a_run_that_does_not_stream_gives_one_partial_then_the_value() {
    let whole = json!({
        "id": "msg_w", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "tool_use", "id": "toolu_w", "name": "final_answer", "input": answer()}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 20, "output_tokens": 10},
    });
    let server = Server::start([Reply::json(200, &whole)]).await;
    let (partials, done) = partials(anthropic(&server), OutputMode::Tool, false).await;
    assert_eq!(partials, [answer()]);
    assert_eq!(done, ticket());
}

#[tokio::test]
async fn a_value_asked_for_wrapped_streams_unwrapped() {
    let text = json!({"value": ["alpha", "beta", "gamma"]}).to_string();
    let server = Server::start([openai_tool_stream("final_answer", &text)]).await;
    let runtime = AgentRuntime::new(openai(&server), Registry::new())
        .output_mode(OutputMode::Tool)
        .streaming(true);
    let mut events = runtime.run("Three words.").typed::<Vec<String>>().stream();
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        match event {
            TypedEvent::Partial(partial) => seen.push(partial.to::<Vec<String>>().unwrap()),
            TypedEvent::Done(outcome) => {
                assert_eq!(outcome.unwrap().output.unwrap(), ["alpha", "beta", "gamma"]);
            }
        }
    }
    assert_eq!(seen.first(), Some(&vec![]), "the list opened: {seen:?}");
    assert_eq!(seen.last().unwrap(), &["alpha", "beta", "gamma"]);
    assert!(seen.windows(2).all(|w| w[0].len() < w[1].len()), "{seen:?}");
}

/// Every call's argument pieces, joined by call id, and the calls as the run made them.
type Seen = (BTreeMap<String, String>, Vec<(String, String)>);

async fn argument_pieces(provider: impl LlmProvider + 'static) -> Seen {
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let sink = seen.clone();
    let runtime = AgentRuntime::new(provider, Registry::new())
        .streaming(true)
        .event_sink(move |event: &AgentEvent| {
            let mut seen = sink.lock().unwrap();
            match event {
                AgentEvent::ToolCallDelta {
                    call_id, arguments, ..
                } => {
                    seen.0
                        .entry(call_id.clone())
                        .or_default()
                        .push_str(arguments);
                }
                AgentEvent::ToolCall { call, .. } => {
                    seen.1
                        .push((call.id.to_string(), call.arguments.to_string()));
                }
                _ => {}
            }
        });
    runtime.run("Go.").await.expect("the run ends");
    let seen = seen.lock().unwrap();
    seen.clone()
}

#[tokio::test]
async fn every_calls_argument_pieces_are_events_with_its_id_on_recorded_streams() {
    let done_anthropic = anthropic_stream(None, "Done.");
    let anthropic_server = Server::start([
        Reply::sse(&fixture(
            "anthropic_stream_text_then_single_tool_use_partial_json.sse",
        )),
        done_anthropic,
    ])
    .await;
    let openai_server = Server::start([
        Reply::sse(&fixture("openai_chat_stream_two_parallel_tool_calls_finish_and_usage.sse")),
        Reply::sse("data: {\"id\":\"c\",\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Done.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"),
    ])
    .await;
    for (format, (pieces, calls)) in [
        (
            "anthropic",
            argument_pieces(anthropic(&anthropic_server)).await,
        ),
        ("chat", argument_pieces(openai(&openai_server)).await),
    ] {
        assert!(!calls.is_empty(), "{format}: the recording makes calls");
        assert_eq!(pieces.len(), calls.len(), "{format}: {pieces:?}");
        for (id, arguments) in &calls {
            let joined = &pieces[id];
            let joined: Value = serde_json::from_str(joined).expect("the pieces join into JSON");
            let arguments: Value = serde_json::from_str(arguments).unwrap();
            assert_eq!(joined, arguments, "{format}: call {id}");
        }
    }
}
