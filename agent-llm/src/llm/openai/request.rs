//! Requests in the Chat Completions shape: the system prompt as the first message, one `tool`
//! message per result, `""` content next to tool calls, strict tools and reasoning effort.

use serde_json::{Map, Value, json};

use super::super::media::{base64_of, data_url, document_as_text, file_name};
use super::OpenAiWire;
use crate::message::{ChatRequest, Effort, Message, PartRef, Role, ThinkingConfig, ToolChoice};
use agent_core::content::{Media, MediaKind, Part};

/// The request body.
pub(super) fn encode_request(
    config: &OpenAiWire,
    model: &str,
    request: &ChatRequest<'_>,
    stream: bool,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    encode_messages(request.messages, &mut messages);
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut function = json!({"name": t.name, "description": t.description});
                if config.strict_tools {
                    function["parameters"] = t.openai_strict_schema();
                    function["strict"] = json!(true);
                } else {
                    function["parameters"] = t.input_schema.clone();
                }
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        };
        body.insert("tool_choice".into(), choice);
        body.insert(
            "parallel_tool_calls".into(),
            json!(request.parallel_tool_calls),
        );
    }
    let limit = if config.max_completion_tokens {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body.insert(limit.into(), json!(request.max_tokens));
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !request.stop_sequences.is_empty() {
        body.insert("stop".into(), json!(request.stop_sequences));
    }
    if let Some(thinking) = request.thinking {
        let effort = match thinking {
            ThinkingConfig::Adaptive(effort) => effort,
            ThinkingConfig::Budget(tokens) if tokens < 4096 => Effort::Low,
            ThinkingConfig::Budget(tokens) if tokens < 16384 => Effort::Medium,
            ThinkingConfig::Budget(_) => Effort::High,
        };
        body.insert("reasoning_effort".into(), json!(effort.as_str()));
    }
    if let Some(format) = request.response_schema {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": format.name, "schema": format.schema, "strict": true,
            }}),
        );
    }
    if let Some(key) = request.cache_key.filter(|_| !config.no_prompt_cache_key) {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    body.insert("stream".into(), json!(stream));
    if stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// The messages, with the media of tool results moved to a user message after them (a `tool`
/// message takes text only): each media part of a result is named in its text (`[image 1 of
/// call_7: chart.png, below]`) and sent, after the run of tool messages, in one user message that
/// introduces each part the same way.
fn encode_messages(transcript: &[Message], out: &mut Vec<Value>) {
    let mut held: Vec<Value> = Vec::new();
    for message in transcript {
        if message.role != Role::Tool && !held.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut held)}));
        }
        out.push(encode_message(message, &mut held));
    }
    if !held.is_empty() {
        out.push(json!({"role": "user", "content": held}));
    }
}

fn encode_message(message: &Message, held: &mut Vec<Value>) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User if message.parts.is_empty() => {
            json!({"role": "user", "content": message.content})
        }
        Role::User => {
            let parts: Vec<Value> = message
                .all_parts()
                .map(|part| match part {
                    PartRef::Text(text) => json!({"type": "text", "text": text}),
                    PartRef::Media(media) => media_part(media),
                })
                .collect();
            json!({"role": "user", "content": parts})
        }
        Role::Tool => {
            let call = message.tool_call_id.as_deref().unwrap_or_default();
            let mut text = message.content.clone();
            let mut count = 0;
            for part in &message.parts {
                match part {
                    Part::Text(more) => {
                        text.push('\n');
                        text.push_str(more);
                    }
                    Part::Media(media) => {
                        count += 1;
                        let label = format!(
                            "[{} {count} of {call}: {}, below]",
                            media.kind().as_str(),
                            file_name(media)
                        );
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(&label);
                        held.push(json!({"type": "text", "text": label}));
                        held.push(media_part(media));
                    }
                }
            }
            json!({"role": "tool", "tool_call_id": call, "content": text})
        }
        Role::Assistant => {
            // `content` stays a string, `""` next to tool calls: OpenAI, vLLM, Ollama and
            // llama.cpp's server accept `""` and `null` alike, llama-cpp-python only `""` (its
            // schema types the field as a string: `null` or a missing field is a 500).
            let mut out = json!({"role": "assistant", "content": message.content});
            if !message.tool_calls.is_empty() {
                let calls: Vec<Value> = message
                    .tool_calls
                    .iter()
                    .map(|call| {
                        let arguments = match &call.arguments {
                            // Arguments that were not valid JSON go back exactly as received.
                            Value::String(raw) => raw.clone(),
                            other => other.to_string(),
                        };
                        json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}})
                    })
                    .collect();
                out["tool_calls"] = Value::Array(calls);
            }
            out
        }
    }
}

/// One media part: `image_url` (a `data:` URL or the part's URL), `input_audio` (base64 with its
/// format, `wav` or `mp3`), `file` (a PDF as a `data:` URL with its file name); a `text/plain`
/// document is sent as a text part, its name first, since the format takes PDFs only as files.
fn media_part(media: &Media) -> Value {
    match media.kind() {
        MediaKind::Image => json!({"type": "image_url", "image_url": {"url": data_url(media)}}),
        MediaKind::Audio => {
            let format = if media.essence() == "audio/mpeg" {
                "mp3"
            } else {
                "wav"
            };
            json!({"type": "input_audio", "input_audio": {"data": base64_of(media), "format": format}})
        }
        MediaKind::Document if media.essence() == "text/plain" => {
            json!({"type": "text", "text": document_as_text(media)})
        }
        MediaKind::Document => json!({"type": "file", "file": {
            "filename": file_name(media),
            "file_data": data_url(media),
        }}),
    }
}
