//! Whole answers, and what streamed ones share with them: output items in the input form they
//! go back as, the answer's text, the stop reason, usage, and failures.

use serde_json::{Value, json};

use super::PROVIDER;
use crate::llm::ProviderError;
use crate::llm::wire::{self, parse_arguments, str_at};
use crate::message::{ChatResponse, Message, ProviderItem, StopReason, TruncatedToolCall, Usage};
use agent_core::call::ToolCall;

pub(super) fn decode_error(what: &str) -> ProviderError {
    wire::decode_error(PROVIDER, what)
}

/// The failure a `response.failed` (or an answer whose `status` is `failed`) reports.
pub(super) fn failure(response: &Value) -> ProviderError {
    let error = response.get("error").unwrap_or(&Value::Null);
    ProviderError::Stream {
        provider: PROVIDER.into(),
        error_type: str_at(error, "code")
            .or(str_at(error, "type"))
            .map(str::to_owned),
        message: str_at(error, "message")
            .unwrap_or("the response failed without a message")
            .to_owned(),
    }
}

/// An output item in the form it is sent back as input, or `None` for kinds that are not kept
/// (the built-in tools' calls). Fields the input does not take (`status` of reasoning, a text's
/// `logprobs`, empty reasoning `content`) are left out.
pub(super) fn input_form(item: &Value) -> Option<Value> {
    let copy = |out: &mut Value, key: &str| {
        if let Some(value) = item.get(key).filter(|v| !v.is_null()) {
            out[key] = value.clone();
        }
    };
    match str_at(item, "type")? {
        "reasoning" => {
            let mut out = json!({"type": "reasoning", "summary": item.get("summary").filter(|s| s.is_array()).cloned().unwrap_or_else(|| json!([]))});
            copy(&mut out, "id");
            copy(&mut out, "encrypted_content");
            if item
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty())
            {
                copy(&mut out, "content");
            }
            Some(out)
        }
        "message" => {
            let parts: Vec<Value> = item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|part| match str_at(part, "type")? {
                    "output_text" => Some(json!({
                        "type": "output_text",
                        "text": str_at(part, "text").unwrap_or_default(),
                        "annotations": part.get("annotations").filter(|a| a.is_array()).cloned().unwrap_or_else(|| json!([])),
                    })),
                    "refusal" => Some(json!({
                        "type": "refusal",
                        "refusal": str_at(part, "refusal").unwrap_or_default(),
                    })),
                    _ => None,
                })
                .collect();
            let mut out = json!({
                "type": "message", "role": "assistant", "status": "completed", "content": parts,
            });
            copy(&mut out, "id");
            copy(&mut out, "phase");
            Some(out)
        }
        "function_call" => {
            let mut out = json!({
                "type": "function_call",
                "call_id": str_at(item, "call_id").unwrap_or_default(),
                "name": str_at(item, "name").unwrap_or_default(),
                "arguments": arguments_text(item.get("arguments")),
            });
            copy(&mut out, "id");
            Some(out)
        }
        _ => None,
    }
}

/// Arguments as the JSON string the API sends (or, from a lenient server, an object).
pub(super) fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// A message item's text (its `output_text` and `refusal` parts, in order), and whether it
/// refused.
pub(super) fn message_text(item: &Value) -> (String, bool) {
    let mut text = String::new();
    let mut refused = false;
    for part in item
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match str_at(part, "type") {
            Some("output_text") => text.push_str(str_at(part, "text").unwrap_or_default()),
            Some("refusal") => {
                refused = true;
                text.push_str(str_at(part, "refusal").unwrap_or_default());
            }
            _ => {}
        }
    }
    (text, refused)
}

/// A message content part holding `text`: a refusal's, or output text.
pub(super) fn text_part(text: &str, refusal: bool) -> Value {
    if refusal {
        json!({"type": "refusal", "refusal": text})
    } else {
        json!({"type": "output_text", "text": text, "annotations": []})
    }
}

/// The answer's text from its message items' texts: each one after the first that has text
/// starts a new paragraph.
pub(super) fn joined_text(texts: &[String]) -> String {
    let texts: Vec<&str> = texts
        .iter()
        .map(String::as_str)
        .filter(|t| !t.is_empty())
        .collect();
    texts.join("\n\n")
}

/// Usage in neutral words: `input_tokens` counts cached (and cache-written) tokens too, so they
/// are taken out of the normal-rate count; reasoning tokens are a part of the output tokens.
pub(super) fn decode_usage(usage: &Value) -> Usage {
    let get = |v: Option<&Value>, key: &str| v.and_then(|v| v.get(key)).and_then(Value::as_u64);
    let input = usage.get("input_tokens_details");
    let cached = get(input, "cached_tokens").unwrap_or(0);
    let written = get(input, "cache_write_tokens").unwrap_or(0);
    Usage {
        input_tokens: get(Some(usage), "input_tokens")
            .unwrap_or(0)
            .saturating_sub(cached + written),
        output_tokens: get(Some(usage), "output_tokens").unwrap_or(0),
        cache_read_tokens: cached,
        cache_write_tokens: written,
        reasoning_tokens: get(usage.get("output_tokens_details"), "reasoning_tokens").unwrap_or(0),
        // The Responses API reports no tokens by modality.
        ..Usage::default()
    }
}

/// One function call of an answer.
pub(super) struct Call {
    pub(super) call_id: String,
    pub(super) name: String,
    pub(super) arguments: String,
    /// Whether the server finished writing it.
    pub(super) complete: bool,
}

/// What an answer was made of, whole or streamed.
#[derive(Default)]
pub(super) struct Answer {
    pub(super) id: Option<String>,
    pub(super) model: Option<String>,
    /// `completed`, `incomplete`, …
    pub(super) status: Option<String>,
    /// `incomplete_details.reason`: `max_output_tokens`, `content_filter`.
    pub(super) incomplete_reason: Option<String>,
    /// Each message item's text, in order.
    pub(super) texts: Vec<String>,
    pub(super) refused: bool,
    pub(super) calls: Vec<Call>,
    /// The output items in their input form, in order.
    pub(super) items: Vec<Value>,
    pub(super) usage: Usage,
}

impl Answer {
    /// The `status` and `incomplete_details` of a response object.
    pub(super) fn read_status(&mut self, response: &Value) {
        if let Some(status) = str_at(response, "status") {
            self.status = Some(status.to_owned());
        }
        if let Some(reason) = response
            .get("incomplete_details")
            .and_then(|d| str_at(d, "reason"))
        {
            self.incomplete_reason = Some(reason.to_owned());
        }
        let text = |key: &str| str_at(response, key).filter(|t| !t.is_empty());
        if self.id.is_none() {
            self.id = text("id").map(str::to_owned);
        }
        if self.model.is_none() {
            self.model = text("model").map(str::to_owned);
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            self.usage = decode_usage(usage);
        }
    }

    fn stop_reason(&self) -> StopReason {
        let has_calls = self.calls.iter().any(|c| c.complete);
        match (self.status.as_deref(), self.incomplete_reason.as_deref()) {
            (Some("incomplete"), Some("max_output_tokens")) => StopReason::MaxTokens,
            (Some("incomplete"), Some("content_filter")) => StopReason::Refusal,
            (Some("incomplete"), reason) => {
                StopReason::Other(reason.unwrap_or("incomplete").into())
            }
            _ if self.refused && !has_calls => StopReason::Refusal,
            _ if has_calls => StopReason::ToolUse,
            _ => StopReason::EndTurn,
        }
    }

    /// The answer: its text, the calls the server finished (the others, cut off, set apart),
    /// and its output items with its id kept on the message for the next turns.
    pub(super) fn into_response(self) -> ChatResponse {
        let stop_reason = self.stop_reason();
        let mut message = Message::assistant(joined_text(&self.texts));
        let mut truncated = Vec::new();
        for (n, call) in self.calls.into_iter().enumerate() {
            let id = if call.call_id.is_empty() {
                format!("call_{n}")
            } else {
                call.call_id
            };
            if call.complete {
                message.tool_calls.push(ToolCall {
                    id: id.into(),
                    name: call.name,
                    arguments: parse_arguments(&call.arguments),
                });
            } else {
                truncated.push(TruncatedToolCall {
                    id,
                    name: call.name,
                    partial_arguments: call.arguments,
                });
            }
        }
        message.provider_items = self
            .items
            .into_iter()
            .chain(
                self.id
                    .iter()
                    .map(|id| json!({"type": "response", "id": id})),
            )
            .map(|item| ProviderItem::new(PROVIDER, item))
            .collect();
        ChatResponse {
            message,
            stop_reason,
            provider_stop_reason: self.incomplete_reason.or(self.status),
            usage: self.usage,
            truncated_tool_calls: truncated,
            model: self.model,
            id: self.id,
            provider: None,
        }
    }
}

/// A whole (non-streamed) answer. One that failed (`status: failed`) is its error.
pub(super) fn decode_response(value: &Value) -> Result<ChatResponse, ProviderError> {
    if str_at(value, "status") == Some("failed") {
        return Err(failure(value));
    }
    let output = value
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| decode_error("no `output` array in the answer"))?;
    let mut answer = Answer::default();
    answer.read_status(value);
    let incomplete = answer.status.as_deref() == Some("incomplete");
    let last_call = output
        .iter()
        .rposition(|i| str_at(i, "type") == Some("function_call"));
    for (position, item) in output.iter().enumerate() {
        match str_at(item, "type") {
            Some("message") => {
                let (text, refused) = message_text(item);
                answer.texts.push(text);
                answer.refused |= refused;
            }
            Some("function_call") => answer.calls.push(Call {
                call_id: str_at(item, "call_id").unwrap_or_default().to_owned(),
                name: str_at(item, "name").unwrap_or_default().to_owned(),
                arguments: arguments_text(item.get("arguments")),
                // Without a status, only the last call of an answer cut short can be unfinished.
                complete: match str_at(item, "status") {
                    Some(status) => status == "completed",
                    None => !(incomplete && Some(position) == last_call),
                },
            }),
            _ => {}
        }
        answer.items.extend(input_form(item));
    }
    Ok(answer.into_response())
}
