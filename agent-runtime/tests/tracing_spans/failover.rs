//! The `chat` span of a turn a `Failover` answered names the provider and model that answered
//! (on real HTTP on loopback: Anthropic overloaded, OpenAI answering), not the failover.

use agent_core::Registry;
use agent_llm::{AnthropicProvider, Failover, OpenAiProvider};
use agent_runtime::AgentRuntime;
use serde_json::json;
use test_support::server::{Reply, Server};

use super::Spans;

#[tokio::test]
async fn the_chat_span_names_the_provider_that_answered() {
    let (spans, _guard) = Spans::install();
    let anthropic = Server::start([Reply::json(
        529,
        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    )])
    .await;
    let openai = Server::start([Reply::json(
        200,
        &json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "A small bird."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        }),
    )])
    .await;
    let failover = Failover::new(
        AnthropicProvider::new("sk-ant-test", "claude-sonnet-4-5").with_base_url(&anthropic.url),
    )
    .then(OpenAiProvider::new("sk-test", "gpt-4.1").with_base_url(format!("{}/v1", openai.url)));
    AgentRuntime::new(failover, Registry::new())
        .run("What is a wren?")
        .await
        .unwrap();
    let chats = spans.named("chat");
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].field("gen_ai.provider.name"), Some("openai"));
    assert_eq!(chats[0].field("gen_ai.response.model"), Some("gpt-4.1"));
    assert_eq!(
        chats[0].field("gen_ai.request.model"),
        Some("claude-sonnet-4-5"),
        "what was asked first"
    );
    let agent = &spans.named("invoke_agent")[0];
    assert_eq!(agent.field("gen_ai.provider.name"), Some("failover"));
}
