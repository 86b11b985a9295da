//! Streamed answers: `message_start`, `content_block_start/delta/stop`, `message_delta` with
//! cumulative usage, `message_stop`, `ping` anywhere and `error` even after HTTP 200.

use std::collections::BTreeMap;

use serde_json::Value;

use super::PROVIDER;
use super::response::{Paragraphs, decode_error, decode_stop_reason, decode_usage};
use crate::llm::wire::{parse_arguments, str_at, truncate};
use crate::llm::{ProviderError, SseDecoder, StreamEvent};
use crate::message::{ChatResponse, Message, Thinking, TruncatedToolCall, Usage};
use agent_core::call::ToolCall;

/// One content block being streamed.
enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
        ordinal: usize,
        done: bool,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    Other,
}

/// Turns the SSE events of one streamed answer into [`StreamEvent`]s and, at the end, the whole
/// [`ChatResponse`]. A pure state machine: no I/O.
#[derive(Default)]
pub struct StreamDecoder {
    started: bool,
    id: Option<String>,
    model: Option<String>,
    blocks: BTreeMap<u64, Block>,
    /// How text blocks are joined.
    paragraphs: Paragraphs,
    tools_seen: usize,
    stop_reason: Option<String>,
    stop_sequence: Option<String>,
    usage: Usage,
    stopped: bool,
}

impl SseDecoder for StreamDecoder {
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        if event == "ping" || data.trim().is_empty() {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            decode_error(&format!(
                "event `{event}` is not JSON ({e}): {}",
                truncate(data)
            ))
        })?;
        let kind = str_at(&value, "type").unwrap_or(event);
        let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                self.started = true;
                let message = value.get("message").unwrap_or(&Value::Null);
                self.id = str_at(message, "id").map(str::to_owned);
                self.model = str_at(message, "model").map(str::to_owned);
                if let Some(usage) = message.get("usage") {
                    decode_usage(usage, &mut self.usage);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            "content_block_start" => {
                let block = value.get("content_block").unwrap_or(&Value::Null);
                let text = |key: &str| str_at(block, key).unwrap_or_default().to_owned();
                let kind = str_at(block, "type");
                if kind != Some("text") {
                    self.paragraphs.other_block();
                }
                let new = match kind {
                    Some("text") => {
                        // The paragraph break, if any, is part of the block and of its deltas,
                        // so the deltas add up to the answer's text.
                        let initial = text("text");
                        if !initial.is_empty() {
                            self.paragraphs.saw_text();
                        }
                        Block::Text(format!("{}{initial}", self.paragraphs.text_block()))
                    }
                    Some("tool_use") => {
                        let ordinal = self.tools_seen;
                        self.tools_seen += 1;
                        out.push(StreamEvent::ToolCallStarted {
                            index: ordinal,
                            id: text("id"),
                            name: text("name"),
                        });
                        Block::Tool {
                            id: text("id"),
                            name: text("name"),
                            json: String::new(),
                            ordinal,
                            done: false,
                        }
                    }
                    Some("thinking") => Block::Thinking {
                        thinking: text("thinking"),
                        signature: text("signature"),
                    },
                    Some("redacted_thinking") => Block::Redacted(text("data")),
                    _ => Block::Other,
                };
                if let Block::Text(t) = &new
                    && !t.is_empty()
                {
                    out.push(StreamEvent::TextDelta(t.clone()));
                }
                self.blocks.insert(index, new);
            }
            "content_block_delta" => {
                let delta = value.get("delta").unwrap_or(&Value::Null);
                let text = |key: &str| str_at(delta, key).unwrap_or_default();
                match (self.blocks.get_mut(&index), str_at(delta, "type")) {
                    (Some(Block::Text(buffer)), Some("text_delta")) => {
                        buffer.push_str(text("text"));
                        if !text("text").is_empty() {
                            self.paragraphs.saw_text();
                        }
                        out.push(StreamEvent::TextDelta(text("text").to_owned()));
                    }
                    (Some(Block::Tool { json, ordinal, .. }), Some("input_json_delta")) => {
                        let piece = text("partial_json");
                        if !piece.is_empty() {
                            json.push_str(piece);
                            out.push(StreamEvent::ToolCallDelta {
                                index: *ordinal,
                                arguments: piece.to_owned(),
                            });
                        }
                    }
                    (Some(Block::Thinking { thinking, .. }), Some("thinking_delta")) => {
                        thinking.push_str(text("thinking"));
                        out.push(StreamEvent::ThinkingDelta(text("thinking").to_owned()));
                    }
                    (Some(Block::Thinking { signature, .. }), Some("signature_delta")) => {
                        signature.push_str(text("signature"));
                    }
                    (None, _) => {
                        return Err(decode_error(&format!(
                            "a delta for block {index}, which never started"
                        )));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(Block::Tool {
                    id,
                    name,
                    json,
                    done,
                    ..
                }) = self.blocks.get_mut(&index)
                {
                    *done = true;
                    out.push(StreamEvent::ToolCallFinished(ToolCall {
                        id: id.as_str().into(),
                        name: name.clone(),
                        arguments: parse_arguments(json),
                    }));
                }
            }
            "message_delta" => {
                let delta = value.get("delta").unwrap_or(&Value::Null);
                if let Some(reason) = str_at(delta, "stop_reason") {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(sequence) = str_at(delta, "stop_sequence") {
                    self.stop_sequence = Some(sequence.to_owned());
                }
                if let Some(usage) = value.get("usage") {
                    decode_usage(usage, &mut self.usage);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let error = value.get("error").unwrap_or(&Value::Null);
                return Err(ProviderError::Stream {
                    provider: PROVIDER.into(),
                    error_type: str_at(error, "type").map(str::to_owned),
                    message: str_at(error, "message")
                        .unwrap_or("unknown error")
                        .to_owned(),
                });
            }
            _ => {}
        }
        Ok(out)
    }

    fn is_complete(&self) -> bool {
        self.stopped
    }

    /// A stream that ended before `message_delta` said why the model stopped is incomplete and an
    /// error; tool calls whose block never stopped are reported as truncated.
    fn finish(self) -> Result<ChatResponse, ProviderError> {
        if !self.started {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: None,
                message: "the stream ended before the message started".into(),
            });
        }
        if !self.stopped && self.stop_reason.is_none() {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: None,
                message: "the stream ended before the message was complete (no `message_delta` or `message_stop`)".into(),
            });
        }
        let mut message = Message::assistant("");
        let mut truncated = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                Block::Text(text) => message.content.push_str(&text),
                Block::Tool {
                    id,
                    name,
                    json,
                    done: true,
                    ..
                } => {
                    message.tool_calls.push(ToolCall {
                        id: id.into(),
                        name,
                        arguments: parse_arguments(&json),
                    });
                }
                Block::Tool {
                    id,
                    name,
                    json,
                    done: false,
                    ..
                } => {
                    truncated.push(TruncatedToolCall {
                        id,
                        name,
                        partial_arguments: json,
                    });
                }
                Block::Thinking {
                    thinking,
                    signature,
                } => message.thinking.push(Thinking::Thinking {
                    thinking,
                    signature,
                }),
                Block::Redacted(data) => message.thinking.push(Thinking::RedactedThinking { data }),
                Block::Other => {}
            }
        }
        Ok(ChatResponse {
            message,
            stop_reason: decode_stop_reason(
                self.stop_reason.as_deref(),
                self.stop_sequence.as_deref(),
            ),
            provider_stop_reason: self.stop_reason,
            usage: self.usage,
            truncated_tool_calls: truncated,
            model: self.model,
            id: self.id,
            provider: None,
        })
    }
}
