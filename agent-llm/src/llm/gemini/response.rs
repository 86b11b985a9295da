//! Answers, whole or streamed: [`Answer`] puts one together from `GenerateContentResponse`
//! objects (a whole answer is one, a stream many), with the events a stream gives for each
//! part, and maps finish reasons and usage to neutral words.

use agent_core::content::{Media, Part};
use serde_json::{Value, json};

use super::PROVIDER;
use crate::llm::wire::{self, str_at, truncate};
use crate::llm::{ProviderError, StreamEvent};
use crate::message::{ChatResponse, Message, ProviderItem, StopReason, Usage};
use agent_core::call::ToolCall;

pub(super) fn decode_error(what: &str) -> ProviderError {
    wire::decode_error(PROVIDER, what)
}

/// A whole (non-streamed) answer.
pub(super) fn decode_response(value: &Value) -> Result<ChatResponse, ProviderError> {
    let mut answer = Answer::default();
    answer.add(value, &mut Vec::new())?;
    if !answer.has_candidate && answer.block_reason.is_none() {
        return Err(decode_error(&format!(
            "no `candidates` in the answer: {}",
            truncate(&value.to_string())
        )));
    }
    Ok(answer.finish())
}

/// `finishReason` (or the prompt's `blockReason`) in neutral words. Gemini says `STOP` after
/// function calls too; every content filter is a refusal; the rest (`MALFORMED_FUNCTION_CALL`,
/// `UNEXPECTED_TOOL_CALL`, `LANGUAGE`, `OTHER`, …) is kept in Gemini's words.
fn stop_reason(finish: Option<&str>, blocked: bool, has_calls: bool) -> StopReason {
    match finish {
        _ if blocked => StopReason::Refusal,
        Some("STOP") | None if has_calls => StopReason::ToolUse,
        Some("STOP") | None => StopReason::EndTurn,
        Some("MAX_TOKENS") => StopReason::MaxTokens,
        Some(
            "SAFETY"
            | "RECITATION"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT"
            | "IMAGE_RECITATION"
            | "MODEL_ARMOR",
        ) => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// `usageMetadata` in neutral words: cached prompt tokens apart from the others (Gemini counts
/// them in `promptTokenCount`), the prompt of built-in tools as input, thinking as output.
fn decode_usage(usage: &Value) -> Usage {
    let get = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let prompt = get("promptTokenCount") + get("toolUsePromptTokenCount");
    let cached = get("cachedContentTokenCount");
    let thoughts = get("thoughtsTokenCount");
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: get("candidatesTokenCount") + thoughts,
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        reasoning_tokens: thoughts,
        audio_input_tokens: by_modality(usage, "promptTokensDetails", &["AUDIO"]),
        image_input_tokens: by_modality(usage, "promptTokensDetails", &["IMAGE", "DOCUMENT"]),
        audio_output_tokens: by_modality(usage, "candidatesTokensDetails", &["AUDIO"]),
    }
}

/// The tokens of `modalities` in a list of `{modality, tokenCount}`.
fn by_modality(usage: &Value, list: &str, modalities: &[&str]) -> u64 {
    usage
        .get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|d| {
            d.get("modality")
                .and_then(Value::as_str)
                .is_some_and(|m| modalities.contains(&m))
        })
        .filter_map(|d| d.get("tokenCount").and_then(Value::as_u64))
        .sum()
}

/// An answer being put together from its parts.
#[derive(Default)]
pub(super) struct Answer {
    text: String,
    calls: Vec<ToolCall>,
    /// Media the model made (`inlineData` parts: a drawn image), in order.
    parts: Vec<Part>,
    /// Thought summaries and signatures, in the order they came (see the module docs).
    items: Vec<Value>,
    /// The last item is a thought that the next thought part continues.
    thought_open: bool,
    finish_reason: Option<String>,
    /// Why the prompt was blocked, when it was (then there are no candidates).
    block_reason: Option<String>,
    has_candidate: bool,
    usage: Usage,
    model: Option<String>,
    id: Option<String>,
}

impl Answer {
    /// Takes in one `GenerateContentResponse` (a whole answer, or a chunk of a stream), adding
    /// the events a stream gives for it to `out`. An `error` object is an error.
    pub(super) fn add(
        &mut self,
        value: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if let Some(error) = value.get("error") {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: str_at(error, "status").map(str::to_owned),
                message: str_at(error, "message")
                    .unwrap_or("unknown error")
                    .to_owned(),
            });
        }
        if !value.is_object() {
            return Err(decode_error(&format!(
                "an answer is not a JSON object: {}",
                truncate(&value.to_string())
            )));
        }
        let text = |key: &str| {
            str_at(value, key)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        if self.id.is_none() {
            self.id = text("responseId");
        }
        if self.model.is_none() {
            self.model = text("modelVersion");
        }
        if let Some(reason) = value
            .get("promptFeedback")
            .and_then(|f| str_at(f, "blockReason"))
        {
            self.block_reason = Some(reason.to_owned());
        }
        if let Some(candidate) = value
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        {
            self.has_candidate = true;
            let parts = candidate
                .get("content")
                .and_then(|c| c.get("parts"))
                .and_then(Value::as_array);
            for part in parts.into_iter().flatten() {
                if let Some(data) = part.get("inlineData").filter(|d| d.is_object()) {
                    // Its signature goes back with it (Gemini 3's image models want it).
                    if let Some(signature) = part.get("thoughtSignature").filter(|s| s.is_string())
                    {
                        self.items.push(json!({
                            "part": "inlineData",
                            "index": self.parts.len(),
                            "thoughtSignature": signature,
                        }));
                    }
                    self.parts.push(Part::Media(inline_media(data)?));
                    continue;
                }
                self.part(part, out);
            }
            if let Some(reason) = str_at(candidate, "finishReason") {
                self.finish_reason = Some(reason.to_owned());
            }
        }
        // After the parts: a stream's last usage arrives with its last text.
        if let Some(usage) = value.get("usageMetadata").filter(|u| u.is_object()) {
            self.usage = decode_usage(usage);
            out.push(StreamEvent::Usage(self.usage));
        }
        Ok(())
    }

    /// One part: text, a thought, or a function call, with its signature.
    fn part(&mut self, part: &Value, out: &mut Vec<StreamEvent>) {
        let signature = part.get("thoughtSignature").filter(|s| s.is_string());
        let signed = |mut item: Value| {
            if let Some(signature) = signature {
                item["thoughtSignature"] = signature.clone();
            }
            item
        };
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        if let Some(text) = str_at(part, "text") {
            if thought {
                if !text.is_empty() {
                    out.push(StreamEvent::ThinkingDelta(text.to_owned()));
                }
                match self.items.last_mut().filter(|_| self.thought_open) {
                    Some(open) => {
                        let so_far = str_at(open, "text").unwrap_or_default();
                        open["text"] = json!(format!("{so_far}{text}"));
                        if let Some(signature) = signature {
                            open["thoughtSignature"] = signature.clone();
                        }
                    }
                    None => self
                        .items
                        .push(signed(json!({"part": "thought", "text": text}))),
                }
                self.thought_open = signature.is_none();
                return;
            }
            if !text.is_empty() {
                self.text.push_str(text);
                out.push(StreamEvent::TextDelta(text.to_owned()));
            }
            if signature.is_some() {
                self.items.push(signed(json!({"part": "text"})));
            }
        } else if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
            let index = self.calls.len();
            let id = match str_at(call, "id").filter(|id| !id.is_empty()) {
                Some(id) => id.to_owned(),
                None => match &self.id {
                    Some(response) => format!("call_{response}_{index}"),
                    None => format!("call_{index}"),
                },
            };
            let name = str_at(call, "name").unwrap_or_default().to_owned();
            let arguments = match call.get("args") {
                None | Some(Value::Null) => json!({}),
                Some(args) => args.clone(),
            };
            out.push(StreamEvent::ToolCallStarted {
                index,
                id: id.clone(),
                name: name.clone(),
            });
            out.push(StreamEvent::ToolCallDelta {
                index,
                arguments: arguments.to_string(),
            });
            let call = ToolCall {
                id: id.as_str().into(),
                name,
                arguments,
            };
            out.push(StreamEvent::ToolCallFinished(call.clone()));
            self.calls.push(call);
            if signature.is_some() {
                self.items
                    .push(signed(json!({"part": "functionCall", "id": id})));
            }
        }
        // Other parts (code execution) have no neutral form and are left out.
        self.thought_open = false;
    }

    /// Whether the answer said why it ended (a finish reason, or a blocked prompt).
    pub(super) fn has_ending(&self) -> bool {
        self.finish_reason.is_some() || self.block_reason.is_some()
    }

    /// Whether any answer came at all.
    pub(super) fn has_content(&self) -> bool {
        self.has_candidate || self.id.is_some() || self.block_reason.is_some()
    }

    /// The whole answer.
    pub(super) fn finish(self) -> ChatResponse {
        let stop_reason = stop_reason(
            self.finish_reason.as_deref(),
            self.block_reason.is_some(),
            !self.calls.is_empty(),
        );
        let mut message = Message::assistant(self.text);
        message.tool_calls = self.calls;
        message.parts = self.parts;
        message.provider_items = self
            .items
            .into_iter()
            .map(|item| ProviderItem::new(PROVIDER, item))
            .collect();
        ChatResponse {
            message,
            stop_reason,
            provider_stop_reason: self.block_reason.or(self.finish_reason),
            usage: self.usage,
            truncated_tool_calls: Vec::new(),
            model: self.model,
            id: self.id,
            provider: None,
        }
    }
}

/// An `inlineData` part of an answer as media: its bytes decoded (standard base64, or the URL-safe
/// alphabet Google's SDKs also write).
fn inline_media(data: &Value) -> Result<Media, ProviderError> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    let media_type = str_at(data, "mimeType").unwrap_or("application/octet-stream");
    let encoded = str_at(data, "data").unwrap_or_default();
    let bytes = STANDARD
        .decode(encoded)
        .or_else(|_| URL_SAFE.decode(encoded))
        .map_err(|e| decode_error(&format!("an inlineData part is not base64: {e}")))?;
    Ok(Media::new(media_type.to_owned(), bytes))
}
