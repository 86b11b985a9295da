//! Thinking turned on, against recorded Anthropic traffic (streamed and whole) and the
//! OpenAI-compatible request shape: the request carries the setting, thinking text arrives as its
//! own events and never as the answer, and the thinking block goes back with its signature.

use agent_core::ToolDefinition;
use agent_llm::{
    AnthropicProvider, CacheControl, ChatRequest, Effort, LlmProvider, Message, OpenAiProvider,
    StreamEvent, Thinking, ThinkingConfig, ToolChoice,
};
use serde_json::{Value, json};

use crate::server::{Reply, Server, fixture};
use crate::{done, drain};

fn cassette(name: &str) -> Value {
    serde_yaml_ng::from_str(&fixture(name)).unwrap()
}

fn provider(server: &Server) -> AnthropicProvider {
    AnthropicProvider::new("sk-test", "claude-sonnet-4-5")
        .with_base_url(&server.url)
        .with_cache_control(CacheControl::none())
}

const QUESTION: &str = "How do I cross the street?";

#[tokio::test]
async fn whole_answer_with_thinking_round_trips_as_recorded() {
    let cassette = cassette("anthropic_vcr_thinking_nonstream_budget_1024_roundtrip.yaml");
    let interaction =
        |i: usize, part: &str| cassette["interactions"][i][part]["parsed_body"].clone();
    let server = Server::start([
        Reply::json(200, &interaction(0, "response")),
        Reply::json(200, &interaction(1, "response")),
    ])
    .await;
    let provider = provider(&server);
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

    transcript.push(first.message.clone());
    transcript.push(Message::user(
        interaction(1, "request")["messages"][2]["content"][0]["text"]
            .as_str()
            .unwrap(),
    ));
    provider
        .complete(&ChatRequest::new(&transcript).thinking(thinking))
        .await
        .unwrap();

    let sent = server.received();
    let recorded = interaction(0, "request");
    assert_eq!(sent[0].json()["thinking"], recorded["thinking"]);
    assert_eq!(sent[0].json()["max_tokens"], recorded["max_tokens"]);
    assert_eq!(sent[0].json()["messages"], recorded["messages"]);
    // The follow-up echoes the thinking block, signature and all, as the recorded one did.
    assert_eq!(
        sent[1].json()["messages"],
        interaction(1, "request")["messages"]
    );
}

#[tokio::test]
async fn streamed_thinking_arrives_as_thinking_deltas_not_text() {
    let cassette = cassette("anthropic_vcr_thinking_stream_budget_1024_roundtrip.yaml");
    let body = cassette["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_owned();
    let server = Server::start([Reply::sse(&body)]).await;
    let transcript = [Message::user(QUESTION)];
    let (events, error) = drain(
        provider(&server)
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
    let sent = server.received();
    assert_eq!(
        sent[0].json()["thinking"],
        cassette["interactions"][0]["request"]["parsed_body"]["thinking"]
    );
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
