//! Thinking turned on, against recorded Anthropic traffic (streamed and whole, replayed from
//! pydantic-ai's cassettes through `agent_llm::cassette`) and the OpenAI-compatible request
//! shape: the request carries the setting, thinking text arrives as its own events and never as
//! the answer, and the thinking block goes back with its signature.
//!
//! The cassettes are replayed with every recorded request compared whole to the one sent (only
//! the query is not: pydantic-ai's SDK adds `?beta=true`): eugene's requests, the follow-up
//! that sends the thinking block back included, are the ones the real API was sent.

use agent_core::ToolDefinition;
use agent_llm::cassette::{Cassette, Matcher, ReplayServer};
use agent_llm::{
    AnthropicProvider, CacheControl, ChatRequest, Effort, LlmProvider, Message, OpenAiProvider,
    StreamEvent, Thinking, ThinkingConfig, ToolChoice,
};
use serde_json::json;

use crate::{done, drain};

/// The recording `name` of `fixtures/recordings`, served with every request compared whole.
async fn replay(name: &str) -> ReplayServer {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/recordings")
        .join(name);
    Cassette::load(path)
        .unwrap()
        .serve(Matcher::new().ignore_query())
        .await
        .unwrap()
}

fn provider(server: &ReplayServer, model: &str) -> AnthropicProvider {
    AnthropicProvider::new("sk-test", model)
        .with_base_url(server.base_url())
        .with_cache_control(CacheControl::none())
}

const QUESTION: &str = "How do I cross the street?";

#[tokio::test]
async fn whole_answer_with_thinking_round_trips_as_recorded() {
    let server = replay("anthropic_vcr_thinking_nonstream_budget_1024_roundtrip.yaml").await;
    let provider = provider(&server, "claude-sonnet-4-5");
    let mut transcript = vec![Message::user(QUESTION)];
    let thinking = ThinkingConfig::Budget(1024);

    let first = provider
        .complete(&ChatRequest::new(&transcript).thinking(thinking))
        .await
        .unwrap();
    assert!(
        first
            .message
            .content
            .starts_with("Here's how to cross the street safely")
    );
    assert!(
        !first
            .message
            .content
            .contains("pedestrian safety. I should"),
        "thinking is not the answer"
    );
    let Some(Thinking::Thinking {
        thinking: text,
        signature,
    }) = first.message.thinking.first()
    else {
        panic!("no thinking block: {:?}", first.message.thinking)
    };
    assert!(text.starts_with("This is a straightforward question"));
    assert!(signature.starts_with("Eq8CCkYICxgCKkD"));

    // The follow-up echoes the thinking block, signature and all, as the recorded one did: the
    // replay answers it only if the whole request is the recorded one.
    transcript.push(first.message.clone());
    transcript.push(Message::user(
        "Considering the way to cross the street, analogously, how do I cross the river?",
    ));
    let second = provider
        .complete(&ChatRequest::new(&transcript).thinking(thinking))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!second.message.content.is_empty());
    server.assert_all_used();
}

#[tokio::test]
async fn streamed_thinking_arrives_as_thinking_deltas_not_text() {
    let server = replay("anthropic_vcr_thinking_stream_budget_1024_roundtrip.yaml").await;
    let transcript = [Message::user(QUESTION)];
    let (events, error) = drain(
        provider(&server, "claude-sonnet-4-0")
            .stream(&ChatRequest::new(&transcript).thinking(ThinkingConfig::Budget(1024))),
    )
    .await;
    assert!(error.is_none(), "{error:?}");
    let thinking: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert!(thinking.starts_with("This is a straightforward question about pedestrian safety"));
    assert!(!text.contains("straightforward question"), "{text}");
    let response = done(&events);
    assert_eq!(response.message.content, text);
    let Some(Thinking::Thinking {
        thinking: kept,
        signature,
    }) = response.message.thinking.first()
    else {
        panic!("no thinking block kept")
    };
    assert_eq!(*kept, thinking);
    assert!(signature.starts_with("EvMCCkYICxgCKkCHP2c"));
    // The request, `thinking` setting and all, was the recorded one.
    server.assert_all_used();
}

#[test]
fn thinking_settings_map_to_each_wire_format() {
    let transcript = [Message::user("hi")];
    let tools = [ToolDefinition {
        name: "t".into(),
        description: "d".into(),
        input_schema: json!({"type": "object"}),
        output_schema: None,
    }];
    let anthropic = AnthropicProvider::new("k", "m");
    let request = ChatRequest::new(&transcript)
        .tools(&tools)
        .tool_choice(ToolChoice::Required)
        .temperature(0.2)
        .max_tokens(2000)
        .thinking(ThinkingConfig::Budget(8000));
    let body = anthropic.request_body(&request, false);
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 8000})
    );
    assert_eq!(
        body["max_tokens"],
        json!(9024),
        "max_tokens stays above the budget"
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "auto"}),
        "thinking allows no forced tool"
    );
    assert!(
        body.get("temperature").is_none(),
        "thinking requires the default temperature"
    );
    let adaptive = anthropic.request_body(
        &ChatRequest::new(&transcript).thinking(ThinkingConfig::Adaptive(Effort::High)),
        false,
    );
    assert_eq!(adaptive["thinking"], json!({"type": "adaptive"}));
    assert_eq!(adaptive["output_config"], json!({"effort": "high"}));
    let small = anthropic.request_body(
        &ChatRequest::new(&transcript).thinking(ThinkingConfig::Budget(10)),
        false,
    );
    assert_eq!(
        small["thinking"]["budget_tokens"],
        json!(1024),
        "the API's minimum"
    );

    let openai = OpenAiProvider::new("k", "m");
    for (thinking, effort) in [
        (ThinkingConfig::Budget(1024), "low"),
        (ThinkingConfig::Budget(8000), "medium"),
        (ThinkingConfig::Budget(32000), "high"),
        (ThinkingConfig::Adaptive(Effort::Medium), "medium"),
    ] {
        let body = openai.request_body(&ChatRequest::new(&transcript).thinking(thinking), false);
        assert_eq!(body["reasoning_effort"], json!(effort), "{thinking:?}");
    }
    let off = openai.request_body(&ChatRequest::new(&transcript), false);
    assert!(off.get("reasoning_effort").is_none());
    assert!(
        anthropic
            .request_body(&ChatRequest::new(&transcript), false)
            .get("thinking")
            .is_none()
    );
}
