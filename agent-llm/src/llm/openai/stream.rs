//! Streamed answers: deltas keyed by index (or by id, where servers send none), usage in a final
//! chunk, `data: [DONE]` or not.

use serde_json::Value;

use super::PROVIDER;
use super::response::{IdMaker, answer, arguments_text, decode_error, decode_finish, decode_usage};
use crate::llm::wire::str_at;
use crate::llm::{ProviderError, SseDecoder, StreamEvent};
use crate::message::{ChatResponse, Usage};

/// One tool call being streamed, keyed by the index the server gave it (`None`: it gave none).
struct PartialCall {
    key: Option<u64>,
    id: String,
    name: String,
    arguments: String,
    /// The id announced in `ToolCallStarted`, which the answer uses too: the server's, or one
    /// made up when the server's is empty or taken (`None`: not announced yet, no name so far).
    announced_id: Option<String>,
}

/// Decodes a Chat Completions stream. A pure state machine: no I/O.
#[derive(Default)]
pub struct StreamDecoder {
    id: Option<String>,
    model: Option<String>,
    text: String,
    calls: Vec<PartialCall>,
    ids: IdMaker,
    /// Whether the model refused (its `refusal` text is the answer's text).
    refused: bool,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
    saw_chunk: bool,
}

/// The key of the legacy `function_call` field, which has no index.
const LEGACY_KEY: u64 = u64::MAX;

impl StreamDecoder {
    /// The position of the call a delta belongs to, started if the delta begins a new one. With an
    /// index, the latest call of that index, unless the delta names a different id (servers that
    /// give every call index 0). Without one (Gemini sends each call whole, with no index), the
    /// call of the same id, else the latest call, unless the delta starts another: a new id, or a
    /// name when the latest call already has one.
    fn call_position(&mut self, key: Option<u64>, id: &str, name: &str) -> usize {
        let current = match key {
            Some(_) => self.calls.iter().rposition(|c| c.key == key),
            None if !id.is_empty() => self
                .calls
                .iter()
                .rposition(|c| c.key.is_none() && c.id == id)
                .or_else(|| {
                    self.calls
                        .iter()
                        .rposition(|c| c.key.is_none())
                        .filter(|&p| self.calls[p].id.is_empty() && self.calls[p].name.is_empty())
                }),
            None => self
                .calls
                .iter()
                .rposition(|c| c.key.is_none())
                .filter(|&p| name.is_empty() || self.calls[p].name.is_empty()),
        };
        match current {
            Some(p) if id.is_empty() || self.calls[p].id.is_empty() || self.calls[p].id == id => p,
            _ => {
                self.calls.push(PartialCall {
                    key,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                    announced_id: None,
                });
                self.calls.len() - 1
            }
        }
    }

    fn tool_delta(
        &mut self,
        key: Option<u64>,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&Value>,
        out: &mut Vec<StreamEvent>,
    ) {
        let position = self.call_position(key, id.unwrap_or_default(), name.unwrap_or_default());
        let call = &mut self.calls[position];
        if let Some(id) = id.filter(|id| !id.is_empty())
            && call.id.is_empty()
        {
            call.id = id.to_owned();
        }
        if let Some(name) = name.filter(|n| !n.is_empty())
            && call.name.is_empty()
        {
            call.name = name.to_owned();
        }
        if call.announced_id.is_none() && !call.name.is_empty() {
            let id = self.ids.make(&call.id);
            call.announced_id = Some(id.clone());
            out.push(StreamEvent::ToolCallStarted {
                index: position,
                id,
                name: call.name.clone(),
            });
        }
        let piece = arguments_text(arguments);
        if !piece.is_empty() {
            call.arguments.push_str(&piece);
            out.push(StreamEvent::ToolCallDelta {
                index: position,
                arguments: piece,
            });
        }
    }
}

impl SseDecoder for StreamDecoder {
    fn feed(&mut self, _event: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            decode_error(&format!(
                "a chunk is not JSON ({e}): {}",
                data.chars().take(200).collect::<String>()
            ))
        })?;
        if let Some(error) = value.get("error") {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: error
                    .get("code")
                    .or(error.get("type"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                message: str_at(error, "message")
                    .unwrap_or("unknown error")
                    .to_owned(),
            });
        }
        self.saw_chunk = true;
        // Azure's first chunk (prompt filter results) has `"id": ""` and `"model": ""`.
        let text = |key: &str| {
            str_at(&value, key)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        if self.id.is_none() {
            self.id = text("id");
        }
        if self.model.is_none() {
            self.model = text("model");
        }
        let mut out = Vec::new();
        if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
            self.usage = decode_usage(usage);
            out.push(StreamEvent::Usage(self.usage));
        }
        let Some(choice) = value
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(out);
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        for key in ["content", "refusal"] {
            if let Some(text) = str_at(delta, key).filter(|t| !t.is_empty()) {
                self.refused |= key == "refusal";
                self.text.push_str(text);
                out.push(StreamEvent::TextDelta(text.to_owned()));
            }
        }
        // vLLM sends the same text under both names; the first one present is the reasoning.
        if let Some(text) = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|key| str_at(delta, key).filter(|t| !t.is_empty()))
        {
            out.push(StreamEvent::ThinkingDelta(text.to_owned()));
        }
        let tool_calls = delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty());
        if let Some(calls) = tool_calls {
            for call in calls {
                let key = call.get("index").and_then(Value::as_u64);
                let function = call.get("function").unwrap_or(&Value::Null);
                self.tool_delta(
                    key,
                    str_at(call, "id"),
                    str_at(function, "name"),
                    function.get("arguments"),
                    &mut out,
                );
            }
        } else if let Some(function) = delta.get("function_call").filter(|f| f.is_object()) {
            self.tool_delta(
                Some(LEGACY_KEY),
                None,
                str_at(function, "name"),
                function.get("arguments"),
                &mut out,
            );
        }
        if let Some(reason) = str_at(choice, "finish_reason") {
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(out)
    }

    fn is_complete(&self) -> bool {
        self.done
    }

    fn finish(self) -> Result<ChatResponse, ProviderError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: None,
                message: if self.saw_chunk {
                    "the stream ended before a finish reason or `[DONE]`".into()
                } else {
                    "the stream ended before any data".into()
                },
            });
        }
        // Every call with a name was announced, with the id it keeps.
        let calls: Vec<(String, String, String)> = self
            .calls
            .into_iter()
            .filter_map(|c| Some((c.announced_id?, c.name, c.arguments)))
            .collect();
        let stop_reason = decode_finish(
            self.finish_reason.as_deref(),
            !calls.is_empty(),
            self.refused,
        );
        let (message, truncated) = answer(self.text, calls, &stop_reason);
        Ok(ChatResponse {
            message,
            stop_reason,
            provider_stop_reason: self.finish_reason,
            usage: self.usage,
            truncated_tool_calls: truncated,
            model: self.model,
            id: self.id,
            provider: None,
        })
    }
}
