//! Streamed answers: output items announced (`response.output_item.added`), written in deltas
//! (text, refusal, call arguments, reasoning summaries) and closed (`response.output_item.done`),
//! then `response.completed` or `response.incomplete` with the status and usage. Deltas name
//! their item by `output_index` (and `item_id`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::PROVIDER;
use super::response::{
    Answer, Call, arguments_text, decode_error, failure, input_form, message_text, text_part,
};
use crate::llm::wire::{parse_arguments, str_at, truncate};
use crate::llm::{ProviderError, SseDecoder, StreamEvent};
use crate::message::ChatResponse;
use agent_core::call::ToolCall;

/// One output item being streamed.
enum Item {
    Message {
        text: String,
        refused: bool,
        /// The item as `response.output_item.done` gave it, else as it was announced.
        item: Value,
    },
    Call {
        item_id: String,
        call_id: String,
        name: String,
        arguments: String,
        ordinal: usize,
        done: bool,
    },
    Reasoning {
        /// The summary part being written, to start a paragraph at the next.
        part: Option<u64>,
        done: Option<Value>,
    },
    /// A kind this decoder does not keep (a built-in tool's call).
    Other,
}

/// Decodes a Responses API stream. A pure state machine: no I/O.
#[derive(Default)]
pub struct StreamDecoder {
    started: bool,
    /// Items by `output_index`.
    items: BTreeMap<u64, Item>,
    /// Whether any answer text was streamed (a later message item starts a new paragraph).
    wrote_text: bool,
    /// Whether any thinking was streamed (a later summary part starts a new paragraph).
    wrote_thinking: bool,
    calls: usize,
    /// Where each item with an id was announced, for events that name no `output_index`.
    ids: Vec<(String, u64)>,
    /// The `response` of `response.completed` or `response.incomplete`.
    answer: Answer,
    done: bool,
}

impl StreamDecoder {
    /// The position of the item an event belongs to: its `output_index`, or where the item of its
    /// `item_id` (or its item's `id`) was announced.
    fn position(&self, value: &Value) -> Option<u64> {
        if let Some(index) = value.get("output_index").and_then(Value::as_u64) {
            return Some(index);
        }
        let id =
            str_at(value, "item_id").or_else(|| value.get("item").and_then(|i| str_at(i, "id")))?;
        self.ids
            .iter()
            .find(|(known, _)| known == id)
            .map(|(_, p)| *p)
    }

    fn text_delta(
        &mut self,
        position: u64,
        delta: &str,
        refusal: bool,
        out: &mut Vec<StreamEvent>,
    ) {
        if delta.is_empty() {
            return;
        }
        let item = self.items.entry(position).or_insert(Item::Message {
            text: String::new(),
            refused: false,
            item: Value::Null,
        });
        let Item::Message { text, refused, .. } = item else {
            return;
        };
        // A message item after one with text starts a new paragraph (not a part of its text).
        if text.is_empty() && self.wrote_text {
            out.push(StreamEvent::TextDelta("\n\n".into()));
        }
        *refused |= refusal;
        text.push_str(delta);
        self.wrote_text = true;
        out.push(StreamEvent::TextDelta(delta.to_owned()));
    }

    fn thinking_delta(&mut self, value: &Value, delta: &str, out: &mut Vec<StreamEvent>) {
        if delta.is_empty() {
            return;
        }
        let summary = value.get("summary_index").and_then(Value::as_u64);
        if let Some(Item::Reasoning { part, .. }) =
            self.position(value).and_then(|p| self.items.get_mut(&p))
            && *part != summary
        {
            if self.wrote_thinking {
                out.push(StreamEvent::ThinkingDelta("\n\n".into()));
            }
            *part = summary;
        }
        self.wrote_thinking = true;
        out.push(StreamEvent::ThinkingDelta(delta.to_owned()));
    }

    fn item_added(&mut self, position: u64, item: &Value, out: &mut Vec<StreamEvent>) {
        if let Some(id) = str_at(item, "id").filter(|id| !id.is_empty()) {
            self.ids.push((id.to_owned(), position));
        }
        // Announced twice, or after its first delta: what is known of it stays.
        if self.items.contains_key(&position) {
            return;
        }
        let text = |key: &str| str_at(item, key).unwrap_or_default().to_owned();
        let new = match str_at(item, "type") {
            Some("message") => Item::Message {
                text: String::new(),
                refused: false,
                item: item.clone(),
            },
            Some("function_call") => {
                let ordinal = self.calls;
                self.calls += 1;
                let call_id = Some(text("call_id"))
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{ordinal}"));
                out.push(StreamEvent::ToolCallStarted {
                    index: ordinal,
                    id: call_id.clone(),
                    name: text("name"),
                });
                let arguments = arguments_text(item.get("arguments"));
                if !arguments.is_empty() {
                    out.push(StreamEvent::ToolCallDelta {
                        index: ordinal,
                        arguments: arguments.clone(),
                    });
                }
                Item::Call {
                    item_id: text("id"),
                    call_id,
                    name: text("name"),
                    arguments,
                    ordinal,
                    done: false,
                }
            }
            Some("reasoning") => Item::Reasoning {
                part: None,
                done: None,
            },
            _ => Item::Other,
        };
        self.items.insert(position, new);
    }

    fn item_done(&mut self, position: u64, item: &Value, out: &mut Vec<StreamEvent>) {
        if !self.items.contains_key(&position) {
            self.item_added(position, item, out);
        }
        // A message whose text came whole, without deltas, is streamed now.
        if let Some(Item::Message { text, .. }) = self.items.get(&position)
            && text.is_empty()
        {
            let (whole, refusal) = message_text(item);
            self.text_delta(position, &whole, refusal, out);
        }
        match self.items.get_mut(&position) {
            Some(Item::Message { item: kept, .. }) => *kept = item.clone(),
            Some(Item::Reasoning { done, .. }) => *done = Some(item.clone()),
            Some(Item::Call {
                call_id,
                name,
                arguments,
                ordinal,
                done,
                ..
            }) => {
                let whole = arguments_text(item.get("arguments"));
                if arguments.is_empty() && !whole.is_empty() {
                    arguments.push_str(&whole);
                    out.push(StreamEvent::ToolCallDelta {
                        index: *ordinal,
                        arguments: whole,
                    });
                }
                *done = str_at(item, "status").is_none_or(|s| s == "completed");
                if *done {
                    out.push(StreamEvent::ToolCallFinished(ToolCall {
                        id: call_id.as_str().into(),
                        name: name.clone(),
                        arguments: parse_arguments(arguments),
                    }));
                }
            }
            Some(Item::Other) | None => {}
        }
    }
}

impl SseDecoder for StreamDecoder {
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            decode_error(&format!(
                "event `{event}` is not JSON ({e}): {}",
                truncate(data)
            ))
        })?;
        let kind = str_at(&value, "type").unwrap_or(event).to_owned();
        let mut out = Vec::new();
        let response = value.get("response").unwrap_or(&Value::Null);
        let delta = str_at(&value, "delta").unwrap_or_default();
        match kind.as_str() {
            "response.created" | "response.in_progress" | "response.queued" => {
                self.started = true;
                self.answer.read_status(response);
            }
            "response.output_item.added" | "response.output_item.done" => {
                self.started = true;
                let next = self.items.keys().next_back().map_or(0, |last| last + 1);
                let position = self.position(&value).unwrap_or(next);
                let item = value.get("item").unwrap_or(&Value::Null);
                if kind.ends_with("added") {
                    self.item_added(position, item, &mut out);
                } else {
                    self.item_done(position, item, &mut out);
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let position = self.position(&value).unwrap_or(u64::MAX);
                self.text_delta(position, delta, kind == "response.refusal.delta", &mut out);
            }
            "response.function_call_arguments.delta" => {
                let Some(Item::Call {
                    arguments, ordinal, ..
                }) = self.position(&value).and_then(|p| self.items.get_mut(&p))
                else {
                    return Err(decode_error(
                        "call arguments for an item that never started",
                    ));
                };
                if !delta.is_empty() {
                    arguments.push_str(delta);
                    out.push(StreamEvent::ToolCallDelta {
                        index: *ordinal,
                        arguments: delta.to_owned(),
                    });
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.thinking_delta(&value, delta, &mut out);
            }
            "response.completed" | "response.incomplete" => {
                self.answer.read_status(response);
                if self.answer.status.is_none() {
                    self.answer.status = Some(kind["response.".len()..].to_owned());
                }
                out.push(StreamEvent::Usage(self.answer.usage));
                self.done = true;
            }
            "response.failed" => return Err(failure(response)),
            "error" => {
                let error = value.get("error").unwrap_or(&value);
                return Err(ProviderError::Stream {
                    provider: PROVIDER.into(),
                    error_type: str_at(error, "code")
                        .or(str_at(error, "type").filter(|t| *t != "error"))
                        .map(str::to_owned),
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
        self.done
    }

    /// A stream that ended before `response.completed` (or `response.incomplete`) is an error.
    /// Calls whose item never closed are reported as cut off.
    fn finish(self) -> Result<ChatResponse, ProviderError> {
        if !self.done {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: None,
                message: if self.started {
                    "the stream ended before `response.completed`".into()
                } else {
                    "the stream ended before any data".into()
                },
            });
        }
        let mut answer = self.answer;
        // In an answer the server completed, every call is whole.
        let completed = answer.status.as_deref() == Some("completed");
        for item in self.items.into_values() {
            match item {
                Item::Message {
                    text,
                    refused,
                    item,
                } => {
                    // The text as streamed is the item's text when it goes back.
                    let mut item = if item.is_object() { item } else { json!({}) };
                    item["type"] = json!("message");
                    let mut kept = input_form(&item).unwrap_or(item);
                    if message_text(&kept).0 != text {
                        kept["content"] = json!([text_part(&text, refused)]);
                    }
                    answer.items.push(kept);
                    answer.texts.push(text);
                    answer.refused |= refused;
                }
                Item::Call {
                    item_id,
                    call_id,
                    name,
                    arguments,
                    done,
                    ..
                } => {
                    let mut kept = json!({
                        "type": "function_call", "call_id": call_id, "name": name,
                        "arguments": arguments,
                    });
                    if !item_id.is_empty() {
                        kept["id"] = json!(item_id);
                    }
                    answer.items.push(kept);
                    answer.calls.push(Call {
                        call_id,
                        name,
                        arguments,
                        complete: done || completed,
                    });
                }
                Item::Reasoning { done, .. } => {
                    answer.items.extend(done.as_ref().and_then(input_form))
                }
                Item::Other => {}
            }
        }
        Ok(answer.into_response())
    }
}
