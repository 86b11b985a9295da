//! Requests in the Responses API's shape: `instructions`, input items (an assistant turn as the
//! output items it came as, where they still match it), flat function tools, `text.format`,
//! `reasoning.effort`, and what [`ResponsesState`] asks of the server.

use serde_json::{Map, Value, json};

use super::response::{joined_text, message_text};
use super::{OpenAiResponsesWire, PROVIDER, ResponsesState};
use crate::llm::media::{data_url, document_as_text, file_name};
use crate::llm::wire::{parse_arguments, str_at};
use crate::message::{ChatRequest, Effort, Message, PartRef, Role, ThinkingConfig, ToolChoice};
use agent_core::call::ToolCall;
use agent_core::content::MediaKind;

/// The request body. Stop sequences are not sent: the API has none.
pub(super) fn encode_request(
    wire: &OpenAiResponsesWire,
    model: &str,
    request: &ChatRequest<'_>,
    stream: bool,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    if let Some(system) = request.system {
        body.insert("instructions".into(), json!(system));
    }
    let mut messages = request.messages;
    if wire.state == ResponsesState::Chained
        && let Some((id, after)) = last_answer(messages)
    {
        body.insert("previous_response_id".into(), json!(id));
        messages = &messages[after..];
    }
    body.insert(
        "input".into(),
        Value::Array(encode_input(messages, wire.state)),
    );
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let parameters = if wire.strict_tools {
                    t.openai_strict_schema()
                } else {
                    t.input_schema.clone()
                };
                json!({
                    "type": "function", "name": t.name, "description": t.description,
                    "parameters": parameters, "strict": wire.strict_tools,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
        body.insert(
            "parallel_tool_calls".into(),
            json!(request.parallel_tool_calls),
        );
    }
    body.insert("max_output_tokens".into(), json!(request.max_tokens));
    // Reasoning models refuse a temperature; a request that thinks sends none.
    if let Some(temperature) = request.temperature.filter(|_| request.thinking.is_none()) {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(thinking) = request.thinking {
        let effort = match thinking {
            ThinkingConfig::Adaptive(effort) => effort,
            ThinkingConfig::Budget(tokens) if tokens < 4096 => Effort::Low,
            ThinkingConfig::Budget(tokens) if tokens < 16384 => Effort::Medium,
            ThinkingConfig::Budget(_) => Effort::High,
        };
        let mut reasoning = json!({"effort": effort.as_str()});
        if wire.reasoning_summary {
            reasoning["summary"] = json!("auto");
        }
        body.insert("reasoning".into(), reasoning);
    }
    if let Some(format) = request.response_schema {
        body.insert(
            "text".into(),
            json!({"format": {
                "type": "json_schema", "name": format.name, "schema": format.schema, "strict": true,
            }}),
        );
    }
    match wire.state {
        ResponsesState::Stored => {}
        ResponsesState::Stateless => {
            body.insert("store".into(), json!(false));
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
        ResponsesState::Chained => {
            body.insert("store".into(), json!(true));
        }
    }
    if let Some(key) = request.cache_key {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

/// The id of the last answer of this API in `messages`, and where the messages after it start.
fn last_answer(messages: &[Message]) -> Option<(&str, usize)> {
    messages.iter().enumerate().rev().find_map(|(i, m)| {
        let id = m
            .provider_items_of(PROVIDER)
            .find(|item| str_at(item, "type") == Some("response"))
            .and_then(|item| str_at(item, "id"))?;
        (m.role == Role::Assistant).then_some((id, i + 1))
    })
}

/// The input items for `messages`.
fn encode_input(messages: &[Message], state: ResponsesState) -> Vec<Value> {
    let mut input = Vec::with_capacity(messages.len());
    for message in messages {
        match message.role {
            Role::System => input.push(json!({"role": "system", "content": message.content})),
            Role::User if message.parts.is_empty() => {
                input.push(json!({"role": "user", "content": message.content}))
            }
            Role::User => input.push(json!({"role": "user", "content": content_items(message)})),
            Role::Tool => {
                let output = if !message.parts.is_empty() {
                    Value::Array(content_items(message))
                } else if message.is_error && message.content.trim().is_empty() {
                    json!("the tool failed without a message")
                } else {
                    json!(message.content)
                };
                input.push(json!({
                    "type": "function_call_output",
                    "call_id": message.tool_call_id.as_deref().unwrap_or_default(),
                    "output": output,
                }));
            }
            Role::Assistant => assistant_items(message, state, &mut input),
        }
    }
    input
}

/// A message's text and parts as input content, in order: `input_text`, `input_image` (a
/// `data:` URL or the part's URL), `input_file` (a PDF as a `data:` URL with its file name, or a
/// `file_url`); a `text/plain` document is an `input_text` with its name first. A tool result
/// with media sends the same list as its `output`.
fn content_items(message: &Message) -> Vec<Value> {
    message
        .all_parts()
        .map(|part| match part {
            PartRef::Text(text) => json!({"type": "input_text", "text": text}),
            PartRef::Media(media) => match media.kind() {
                MediaKind::Image => {
                    json!({"type": "input_image", "image_url": data_url(media), "detail": "auto"})
                }
                MediaKind::Document if media.essence() == "text/plain" => {
                    json!({"type": "input_text", "text": document_as_text(media)})
                }
                // Audio never gets here: the format takes none (checked before encoding).
                MediaKind::Document | MediaKind::Audio => match media.url_str() {
                    Some(url) => json!({"type": "input_file", "file_url": url}),
                    None => json!({
                        "type": "input_file",
                        "filename": file_name(media),
                        "file_data": data_url(media),
                    }),
                },
            },
        })
        .collect()
}

/// An assistant turn as input items. Its output items go back in their order where they still
/// say what the message says: the message items when their text is the message's text, each
/// `function_call` item whose call the message still makes. Otherwise the text goes as an
/// assistant message (before the calls) and the calls as `function_call`s without item ids.
/// Reasoning items go back unless the server could not find them (stateless, not encrypted), and
/// never last: a reasoning item needs the item that followed it.
fn assistant_items(message: &Message, state: ResponsesState, input: &mut Vec<Value>) {
    let items: Vec<&Value> = message.provider_items_of(PROVIDER).collect();
    let texts: Vec<String> = items
        .iter()
        .filter(|item| str_at(item, "type") == Some("message"))
        .map(|item| message_text(item).0)
        .collect();
    let items_hold_text = !texts.is_empty() && joined_text(&texts) == message.content;
    let mut text_pending = !items_hold_text && !message.content.is_empty();
    let text = json!({"role": "assistant", "content": message.content});
    let mut sent = vec![false; message.tool_calls.len()];
    let start = input.len();
    for item in items {
        match str_at(item, "type") {
            Some("reasoning") => {
                let encrypted = item.get("encrypted_content").is_some_and(Value::is_string);
                if state != ResponsesState::Stateless || encrypted {
                    input.push(item.clone());
                }
            }
            // Without an id (a server that gave none), only the text can go back.
            Some("message") if items_hold_text && item.get("id").is_some() => {
                input.push(item.clone())
            }
            Some("message") if items_hold_text => {
                input.push(json!({"role": "assistant", "content": message_text(item).0}));
            }
            Some("message") if text_pending => {
                input.push(text.clone());
                text_pending = false;
            }
            Some("function_call") => {
                let call_id = str_at(item, "call_id").unwrap_or_default();
                let Some(i) =
                    (0..sent.len()).find(|&i| !sent[i] && &*message.tool_calls[i].id == call_id)
                else {
                    continue;
                };
                if std::mem::take(&mut text_pending) {
                    input.push(text.clone());
                }
                sent[i] = true;
                input.push(function_call(&message.tool_calls[i], Some(item)));
            }
            _ => {}
        }
    }
    if text_pending {
        input.push(text);
    }
    for (call, _) in message.tool_calls.iter().zip(sent).filter(|(_, s)| !s) {
        input.push(function_call(call, None));
    }
    while input.len() > start
        && input
            .last()
            .is_some_and(|i| str_at(i, "type") == Some("reasoning"))
    {
        input.pop();
    }
}

/// A `function_call` input item for `call`, with the item id and the exact arguments text of
/// the output item it came as, when there was one and its arguments are still the call's.
fn function_call(call: &ToolCall, item: Option<&Value>) -> Value {
    let recorded = item
        .and_then(|i| str_at(i, "arguments"))
        .filter(|text| parse_arguments(text) == call.arguments);
    let arguments = match (recorded, &call.arguments) {
        (Some(text), _) => text.to_owned(),
        // Arguments that were not valid JSON go back exactly as received.
        (None, Value::String(raw)) => raw.clone(),
        (None, other) => other.to_string(),
    };
    let mut out = json!({
        "type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments,
    });
    if let Some(id) = item.and_then(|i| str_at(i, "id")) {
        out["id"] = json!(id);
    }
    out
}
