//! Hostile inputs from the network and from skills: huge deltas, invalid UTF-8, a socket closed
//! after the headers, a skill returning 50 MB, a panicking skill, and a model calling 500 tools in
//! one turn. Nothing may crash, hang or lose a call.

use test_support::server;

use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{Registry, RetryPolicy, SkillError, ToolCall, skill};
use agent_llm::{
    AnthropicProvider, ChatRequest, LlmProvider, Message, MockProvider, MockReply, ProviderError,
    StreamEvent,
};
use agent_runtime::{AgentRuntime, FinishReason};
use futures::StreamExt;
use serde_json::json;
use server::{End, Reply, Server};

fn provider(server: &Server) -> AnthropicProvider {
    AnthropicProvider::new("k", "m")
        .with_base_url(&server.url)
        .with_retry(RetryPolicy::none())
}

fn event(name: &str, data: serde_json::Value) -> Vec<u8> {
    format!("event: {name}\ndata: {data}\n\n").into_bytes()
}

async fn finish(provider: &AnthropicProvider) -> Result<agent_llm::ChatResponse, ProviderError> {
    let transcript = [Message::user("hi")];
    let mut stream = provider.stream(&ChatRequest::new(&transcript));
    while let Some(item) = stream.next().await {
        if let StreamEvent::Done(response) = item? {
            return Ok(response);
        }
    }
    panic!("the stream ended without Done or an error");
}

#[tokio::test]
async fn ten_megabytes_in_one_text_delta_arrive_whole() {
    let big = "x".repeat(10 * 1024 * 1024);
    let chunks = vec![
        event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}}),
        ),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": big}}),
        ),
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ];
    let server = Server::start([Reply::sse_chunks(chunks, End::Finish)]).await;
    let response = finish(&provider(&server)).await.unwrap();
    assert_eq!(response.message.content.len(), 10 * 1024 * 1024);
}

#[tokio::test]
async fn invalid_utf8_in_a_stream_is_an_error_not_a_panic() {
    let mut bad = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "m"}}),
    );
    bad.extend_from_slice(b"event: content_block_delta\ndata: {\"type\": \"\xff\xfe\"}\n\n");
    let server = Server::start([Reply::sse_chunks(vec![bad], End::Finish)]).await;
    let error = finish(&provider(&server)).await.unwrap_err();
    assert!(matches!(error, ProviderError::Stream { .. }), "{error:?}");
}

#[tokio::test]
async fn a_socket_closed_right_after_the_headers_is_an_error_not_a_hang() {
    let server = Server::start([Reply::sse_chunks(vec![], End::Drop)]).await;
    let error = finish(&provider(&server)).await.unwrap_err();
    assert!(matches!(error, ProviderError::Stream { .. }), "{error:?}");
}

#[tokio::test]
async fn garbage_instead_of_events_is_a_decode_error() {
    let server = Server::start([Reply::sse_chunks(
        vec![b"data: {not json\n\n".to_vec()],
        End::Finish,
    )])
    .await;
    let error = finish(&provider(&server)).await.unwrap_err();
    assert!(matches!(error, ProviderError::Decode { .. }), "{error:?}");
}

/// Returns fifty megabytes.
#[skill(read_only, register = false)]
async fn flood() -> Result<String, SkillError> {
    Ok("y".repeat(50 * 1024 * 1024))
}

/// Panics.
#[skill(register = false)]
async fn explode() -> Result<String, SkillError> {
    panic!("boom")
}

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Counts how many copies run at once.
///
/// # Arguments
/// * `n` - Which call.
#[skill(read_only, register = false)]
async fn tick(n: u32) -> Result<String, SkillError> {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    PEAK.fetch_max(now, Ordering::SeqCst);
    tokio::task::yield_now().await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    Ok(n.to_string())
}

#[tokio::test]
async fn a_fifty_megabyte_result_is_cut_to_the_budget_and_a_panic_is_an_error_result() {
    let mut registry = Registry::new();
    registry.add(FloodSkill).add(ExplodeSkill);
    let mock = MockProvider::new([
        MockReply::tool_calls([
            ToolCall::new("1", "flood", json!({})),
            ToolCall::new("2", "explode", json!({})),
        ]),
        MockReply::text("survived"),
    ]);
    let outcome = AgentRuntime::new(mock, registry).run("go").await.unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let flood = &outcome.transcript[2];
    assert!(
        flood.content.len() < 17_000,
        "kept {} bytes",
        flood.content.len()
    );
    assert!(
        flood
            .content
            .ends_with(&format!("; {} cut]", 50 * 1024 * 1024 - 16_000))
    );
    let explode = &outcome.transcript[3];
    assert!(
        explode.is_error && explode.content == "the skill panicked: boom",
        "{}",
        explode.content
    );
}

#[tokio::test]
async fn five_hundred_tool_calls_in_one_turn_are_all_answered_in_order_with_bounded_concurrency() {
    let mut registry = Registry::new();
    registry.add(TickSkill);
    let calls: Vec<ToolCall> = (0..500)
        .map(|i| ToolCall::new(format!("c{i}"), "tick", json!({"n": i})))
        .collect();
    let mock = MockProvider::new([MockReply::tool_calls(calls), MockReply::text("done")]);
    let outcome = AgentRuntime::new(mock, registry)
        .run("tick a lot")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let results: Vec<(&str, &str)> = outcome.transcript[2..502]
        .iter()
        .map(|m| (m.tool_call_id.as_deref().unwrap(), m.content.as_str()))
        .collect();
    for (i, (id, content)) in results.iter().enumerate() {
        assert_eq!(
            (*id, *content),
            (format!("c{i}").as_str(), i.to_string().as_str())
        );
    }
    let peak = PEAK.load(Ordering::SeqCst);
    assert!((2..=10).contains(&peak), "peak concurrency {peak}");
}
