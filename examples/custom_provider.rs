//! A new model backend in one small impl: `LlmProvider::stream` turns a request into events; the
//! trait's `complete` collects them. Here the "backend" is a local rule-based responder, so the
//! example runs offline: it calls the `shout` skill once, then answers with the result.
//!
//! `cargo run --example custom_provider`

use eugene::{
    AgentRuntime, LlmProvider, Message, Registry, SkillError, ToolCall, Usage,
    llm::{ChatRequest, ChatResponse, EventStream, Role, StopReason, StreamEvent},
    skill,
    skills::async_trait,
};

/// A backend that asks for one tool call, then answers with its result.
struct RuleBased;

#[async_trait]
impl LlmProvider for RuleBased {
    fn name(&self) -> &str {
        "rule-based"
    }

    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        // Decide from the transcript: after a tool result, answer; otherwise call a tool.
        let last = request.messages.last();
        let message = match last {
            Some(m) if m.role == Role::Tool => {
                Message::assistant(format!("The tool said: {}", m.content))
            }
            _ => {
                let goal = last.map(|m| m.content.clone()).unwrap_or_default();
                let call = ToolCall::new("call_1", "shout", serde_json::json!({ "text": goal }));
                Message::assistant_with_tool_calls("", vec![call])
            }
        };
        let stop_reason = if message.tool_calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        };
        let mut events: Vec<StreamEvent> = Vec::new();
        if !message.content.is_empty() {
            events.push(StreamEvent::TextDelta(message.content.clone()));
        }
        events.extend(
            message
                .tool_calls
                .iter()
                .cloned()
                .map(StreamEvent::ToolCallFinished),
        );
        let usage = Usage {
            input_tokens: request.messages.len() as u64,
            output_tokens: 1,
            ..Usage::default()
        };
        let response = ChatResponse {
            message,
            stop_reason,
            provider_stop_reason: None,
            usage,
            truncated_tool_calls: Vec::new(),
            model: Some("rules-v1".into()),
            id: None,
            provider: None,
        };
        events.push(StreamEvent::Done(response));
        Box::pin(futures::stream::iter(events.into_iter().map(Ok)))
    }
}

/// Upper-case a text.
///
/// # Arguments
/// * `text` - The text.
#[skill(read_only)]
async fn shout(text: String) -> Result<String, SkillError> {
    Ok(text.to_uppercase())
}

#[tokio::main]
async fn main() {
    let mut registry = Registry::new();
    registry.add(ShoutSkill);
    let outcome = AgentRuntime::new(RuleBased, registry)
        .run("hello, custom backend")
        .await
        .unwrap();
    println!("{}", outcome.final_text.unwrap_or_default());
    println!(
        "finished: {:?} after {} steps",
        outcome.finish, outcome.steps
    );
}
