//! Whole answers, and what streamed ones share with them: the stop reason, usage, made-up ids,
//! and the assistant message with the calls the token limit cut off set apart.

use serde_json::Value;

use super::PROVIDER;
use crate::llm::ProviderError;
use crate::llm::wire::{self, parse_arguments, str_at};
use crate::message::{ChatResponse, Message, StopReason, TruncatedToolCall, Usage};
use agent_core::call::ToolCall;

pub(super) fn decode_error(what: &str) -> ProviderError {
    wire::decode_error(PROVIDER, what)
}

pub(super) fn decode_usage(usage: &Value) -> Usage {
    let get = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0);
    let prompt = get(usage, "prompt_tokens");
    let cached = usage
        .get("prompt_tokens_details")
        .map_or(0, |d| get(d, "cached_tokens"));
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: get(usage, "completion_tokens"),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        reasoning_tokens: usage
            .get("completion_tokens_details")
            .map_or(0, |d| get(d, "reasoning_tokens")),
        audio_input_tokens: usage
            .get("prompt_tokens_details")
            .map_or(0, |d| get(d, "audio_tokens")),
        image_input_tokens: 0,
        audio_output_tokens: usage
            .get("completion_tokens_details")
            .map_or(0, |d| get(d, "audio_tokens")),
    }
}

/// `finish_reason` in neutral words. `stop` with tool calls present means tool use (some servers
/// never say `tool_calls`); an answer that sent `refusal` text and no calls is a refusal, whatever
/// its `finish_reason`.
pub(super) fn decode_finish(
    reason: Option<&str>,
    has_tool_calls: bool,
    refused: bool,
) -> StopReason {
    match reason {
        _ if refused && !has_tool_calls => StopReason::Refusal,
        Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
        Some("stop") | None if has_tool_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// Arguments as a JSON string (OpenAI) or as an object (some compatible servers).
pub(super) fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

pub(super) fn decode_response(value: &Value) -> Result<ChatResponse, ProviderError> {
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| decode_error("no `choices` in the answer"))?;
    let wire = choice
        .get("message")
        .ok_or_else(|| decode_error("no `message` in the first choice"))?;
    let mut calls = Vec::new();
    if let Some(list) = wire.get("tool_calls").and_then(Value::as_array) {
        for call in list {
            let function = call.get("function").unwrap_or(&Value::Null);
            calls.push((
                str_at(call, "id").unwrap_or_default().to_owned(),
                str_at(function, "name").unwrap_or_default().to_owned(),
                arguments_text(function.get("arguments")),
            ));
        }
    }
    if calls.is_empty()
        && let Some(function) = wire.get("function_call").filter(|f| f.is_object())
    {
        calls.push((
            String::new(),
            str_at(function, "name").unwrap_or_default().to_owned(),
            arguments_text(function.get("arguments")),
        ));
    }
    let finish = str_at(choice, "finish_reason");
    // A refusal comes as `refusal` text instead of `content`; it is the answer's text.
    let refusal = str_at(wire, "refusal").filter(|t| !t.is_empty());
    let stop_reason = decode_finish(finish, !calls.is_empty(), refusal.is_some());
    let mut ids = IdMaker::default();
    let calls = calls
        .into_iter()
        .map(|(id, name, arguments)| (ids.make(&id), name, arguments))
        .collect();
    let mut text = str_at(wire, "content").unwrap_or_default().to_owned();
    text.push_str(refusal.unwrap_or_default());
    let (message, truncated) = answer(text, calls, &stop_reason);
    Ok(ChatResponse {
        message,
        stop_reason,
        provider_stop_reason: finish.map(str::to_owned),
        usage: value.get("usage").map(decode_usage).unwrap_or_default(),
        truncated_tool_calls: truncated,
        model: str_at(value, "model").map(str::to_owned),
        id: str_at(value, "id").map(str::to_owned),
        provider: None,
    })
}

/// The assistant message of an answer, and the calls the token limit cut off. Calls come one after
/// another, so only the last one can have been cut: when the answer stopped at the limit, that one
/// is reported as truncated (never run) and the ones before it are whole.
pub(super) fn answer(
    text: String,
    mut calls: Vec<(String, String, String)>,
    stop_reason: &StopReason,
) -> (Message, Vec<TruncatedToolCall>) {
    let mut truncated = Vec::new();
    if *stop_reason == StopReason::MaxTokens
        && let Some((id, name, partial_arguments)) = calls.pop()
    {
        truncated.push(TruncatedToolCall {
            id,
            name,
            partial_arguments,
        });
    }
    let mut message = Message::assistant(text);
    message.tool_calls = calls
        .into_iter()
        .map(|(id, name, arguments)| ToolCall {
            id: id.into(),
            name,
            arguments: parse_arguments(&arguments),
        })
        .collect();
    (message, truncated)
}

/// Makes ids unique: an empty id, or one already used in this answer (some servers send `"0"` for
/// every call), is replaced by `call_<n>`.
#[derive(Default)]
pub(super) struct IdMaker {
    used: Vec<String>,
}

impl IdMaker {
    pub(super) fn make(&mut self, given: &str) -> String {
        let id = if given.is_empty() || self.used.iter().any(|u| u == given) {
            let mut n = self.used.len();
            loop {
                let candidate = format!("call_{n}");
                if !self.used.contains(&candidate) {
                    break candidate;
                }
                n += 1;
            }
        } else {
            given.to_owned()
        };
        self.used.push(id.clone());
        id
    }
}
