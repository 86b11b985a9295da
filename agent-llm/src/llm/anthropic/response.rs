//! Whole answers: content blocks (text, tool use, thinking) into one assistant message, the stop
//! reason and usage in neutral words.

use serde_json::{Value, json};

use super::PROVIDER;
use crate::llm::ProviderError;
use crate::llm::wire::{self, str_at};
use crate::message::{ChatResponse, Message, StopReason, Thinking, TruncatedToolCall, Usage};
use agent_core::call::ToolCall;

pub(super) fn decode_stop_reason(reason: Option<&str>, stop_sequence: Option<&str>) -> StopReason {
    match reason {
        Some("end_turn") | None => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") | Some("model_context_window_exceeded") => StopReason::MaxTokens,
        Some("stop_sequence") => StopReason::StopSequence(stop_sequence.map(str::to_owned)),
        Some("refusal") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

pub(super) fn decode_usage(usage: &Value, into: &mut Usage) {
    let get = |key: &str| usage.get(key).and_then(Value::as_u64);
    if let Some(n) = get("input_tokens") {
        into.input_tokens = n;
    }
    if let Some(n) = get("output_tokens") {
        into.output_tokens = n;
    }
    if let Some(n) = get("cache_read_input_tokens") {
        into.cache_read_tokens = n;
    }
    if let Some(n) = get("cache_creation_input_tokens") {
        into.cache_write_tokens = n;
    }
}

pub(super) fn decode_error(what: &str) -> ProviderError {
    wire::decode_error(PROVIDER, what)
}

/// A whole (non-streamed) answer.
pub(super) fn decode_response(value: &Value) -> Result<ChatResponse, ProviderError> {
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| decode_error("no `content` array"))?;
    let stop_reason =
        decode_stop_reason(str_at(value, "stop_reason"), str_at(value, "stop_sequence"));
    let mut message = Message::assistant("");
    let mut paragraphs = Paragraphs::default();
    let mut truncated = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        match str_at(block, "type") {
            Some("text") => {
                let text = str_at(block, "text").unwrap_or_default();
                message.content.push_str(paragraphs.text_block());
                message.content.push_str(text);
                if !text.is_empty() {
                    paragraphs.saw_text();
                }
                continue;
            }
            Some("tool_use") => {
                let id = str_at(block, "id").unwrap_or_default().to_owned();
                let name = str_at(block, "name").unwrap_or_default().to_owned();
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                // A tool call last in an answer cut off by the token limit may be incomplete.
                if stop_reason == StopReason::MaxTokens && i == blocks.len() - 1 {
                    truncated.push(TruncatedToolCall {
                        id,
                        name,
                        partial_arguments: input.to_string(),
                    });
                } else {
                    message.tool_calls.push(ToolCall {
                        id: id.into(),
                        name,
                        arguments: input,
                    });
                }
            }
            Some("thinking") | Some("redacted_thinking") => {
                if let Ok(thinking) = serde_json::from_value::<Thinking>(block.clone()) {
                    message.thinking.push(thinking);
                }
            }
            _ => {}
        }
        paragraphs.other_block();
    }
    let mut usage = Usage::default();
    if let Some(u) = value.get("usage") {
        decode_usage(u, &mut usage);
    }
    Ok(ChatResponse {
        message,
        stop_reason,
        provider_stop_reason: str_at(value, "stop_reason").map(str::to_owned),
        usage,
        truncated_tool_calls: truncated,
        model: str_at(value, "model").map(str::to_owned),
        id: str_at(value, "id").map(str::to_owned),
        provider: None,
    })
}

/// How an answer's text blocks are joined. Text blocks that follow one another are one text (the
/// API splits text where a citation starts or ends, mid-sentence); a block of another kind between
/// two of them (a tool call, a search result) starts a new paragraph.
#[derive(Default)]
pub(super) struct Paragraphs {
    /// Some text came so far.
    text: bool,
    /// A block of another kind came after it.
    gap: bool,
}

impl Paragraphs {
    /// A block of another kind starts.
    pub(super) fn other_block(&mut self) {
        self.gap = self.text;
    }

    /// A text block starts: what goes before it (a paragraph break, or nothing).
    pub(super) fn text_block(&mut self) -> &'static str {
        if std::mem::take(&mut self.gap) {
            "\n\n"
        } else {
            ""
        }
    }

    /// Text came (not empty).
    pub(super) fn saw_text(&mut self) {
        self.text = true;
    }
}
