//! Requests in the `generateContent` shape: `systemInstruction`, `contents` of `user` and
//! `model` turns (a turn's tool results together, in the order of its calls), function
//! declarations, `toolConfig` and `generationConfig` (limits, thinking, the answer's schema).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::schema::to_gemini;
use super::{GeminiWire, PROVIDER};
use crate::llm::media::{base64_of, file_name};
use crate::message::{ChatRequest, Message, PartRef, Role, ThinkingConfig, ToolChoice};
use agent_core::content::{Media, Part};

/// The request body.
pub(super) fn encode_request(wire: &GeminiWire, request: &ChatRequest<'_>) -> Value {
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents(request.messages)));
    let mut system: Vec<&str> = request.system.into_iter().collect();
    system.extend(
        request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str()),
    );
    if !system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system.join("\n\n")}]}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut declaration = json!({"name": tool.name, "description": tool.description});
                if wire.json_schema {
                    declaration["parametersJsonSchema"] = tool.input_schema.clone();
                } else {
                    declaration["parameters"] = to_gemini(&tool.input_schema);
                }
                declaration
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
        // Gemini has no switch for parallel calls: `parallel_tool_calls` is not sent.
        let config = match &request.tool_choice {
            ToolChoice::Auto => None,
            ToolChoice::Required => Some(json!({"mode": "ANY"})),
            ToolChoice::None => Some(json!({"mode": "NONE"})),
            ToolChoice::Tool(name) => Some(json!({"mode": "ANY", "allowedFunctionNames": [name]})),
        };
        if let Some(config) = config {
            body.insert(
                "toolConfig".into(),
                json!({"functionCallingConfig": config}),
            );
        }
    }
    body.insert(
        "generationConfig".into(),
        Value::Object(generation_config(wire, request)),
    );
    Value::Object(body)
}

/// Limits, sampling, thinking and the answer's schema.
fn generation_config(wire: &GeminiWire, request: &ChatRequest<'_>) -> Map<String, Value> {
    let mut config = Map::new();
    let mut max_tokens = request.max_tokens;
    match request.thinking {
        None => {}
        Some(ThinkingConfig::Budget(budget)) => {
            // The thinking tokens count toward `maxOutputTokens`: the answer keeps its own.
            max_tokens = max_tokens.saturating_add(budget);
            let mut thinking = json!({"thinkingBudget": budget});
            // A budget of 0 turns thinking off (where the model allows it): nothing to include.
            if budget > 0 {
                thinking["includeThoughts"] = json!(true);
            }
            config.insert("thinkingConfig".into(), thinking);
        }
        Some(ThinkingConfig::Adaptive(effort)) => {
            config.insert(
                "thinkingConfig".into(),
                json!({"thinkingLevel": effort.as_str(), "includeThoughts": true}),
            );
        }
    }
    config.insert("maxOutputTokens".into(), json!(max_tokens));
    if let Some(temperature) = request.temperature {
        config.insert("temperature".into(), json!(temperature));
    }
    if !request.stop_sequences.is_empty() {
        config.insert("stopSequences".into(), json!(request.stop_sequences));
    }
    if let Some(format) = request.response_schema {
        config.insert("responseMimeType".into(), json!("application/json"));
        if wire.json_schema {
            config.insert("responseJsonSchema".into(), format.schema.clone());
        } else {
            config.insert("responseSchema".into(), to_gemini(&format.schema));
        }
    }
    config
}

/// One turn being built: its role and its parts, each with its place (tool results are put in
/// the order of the calls they answer, before any text).
struct Turn {
    role: &'static str,
    parts: Vec<(usize, Value)>,
}

/// The transcript as `contents`: consecutive messages of one side are one turn (the results of
/// parallel calls must arrive together), and each result is named after its call.
fn contents(messages: &[Message]) -> Vec<Value> {
    let names: HashMap<&str, &str> = messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .map(|call| (&*call.id, call.name.as_str()))
        .collect();
    // The ids of the latest model turn's calls, in order: where each result goes.
    let mut order: Vec<&str> = Vec::new();
    let mut turns: Vec<Turn> = Vec::new();
    for message in messages {
        let (role, parts) = match message.role {
            Role::System => continue,
            Role::User if message.parts.is_empty() => {
                ("user", vec![(usize::MAX, json!({"text": message.content}))])
            }
            Role::User => (
                "user",
                content_parts(message.all_parts())
                    .into_iter()
                    .map(|part| (usize::MAX, part))
                    .collect(),
            ),
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                let place = order.iter().position(|o| *o == id).unwrap_or(order.len());
                let name = names.get(id).copied().unwrap_or_default();
                let mut parts = vec![(place, function_response(message, id, name))];
                parts.extend(result_media(message, id).map(|part| (usize::MAX, part)));
                ("user", parts)
            }
            Role::Assistant => {
                if turns.last().is_none_or(|t| t.role != "model") {
                    order.clear();
                }
                order.extend(message.tool_calls.iter().map(|c| &*c.id));
                let parts = model_parts(message).into_iter().map(|p| (0, p)).collect();
                ("model", parts)
            }
        };
        match turns.last_mut() {
            Some(turn) if turn.role == role => turn.parts.extend(parts),
            _ => turns.push(Turn { role, parts }),
        }
    }
    turns
        .into_iter()
        .map(|mut turn| {
            // Stable: results in the order of their calls, then text as it came.
            turn.parts.sort_by_key(|(place, _)| *place);
            let parts: Vec<Value> = turn.parts.into_iter().map(|(_, part)| part).collect();
            json!({"role": turn.role, "parts": parts})
        })
        .collect()
}

/// A tool's result: its text as `output`, or as `error` when the call failed. Text parts after
/// media are part of the text; the media follow the turn's results (see [`result_media`]).
fn function_response(message: &Message, id: &str, name: &str) -> Value {
    let key = if message.is_error { "error" } else { "output" };
    let mut text = message.content.clone();
    for part in &message.parts {
        if let Part::Text(more) = part {
            text.push('\n');
            text.push_str(more);
        }
    }
    json!({"functionResponse": {"id": id, "name": name, "response": {key: text}}})
}

/// A result's media, as parts of the same user turn after its `functionResponse`s: each
/// introduced by a text part naming it and its call (`image 1 of call_7: chart.png`).
fn result_media<'m>(message: &'m Message, id: &'m str) -> impl Iterator<Item = Value> + 'm {
    message.media().enumerate().flat_map(move |(i, media)| {
        let label = format!(
            "{} {} of {id}: {}",
            media.kind().as_str(),
            i + 1,
            file_name(media)
        );
        [json!({"text": label}), media_part(media)]
    })
}

/// Text and media as parts: `text`, `inlineData` (base64 bytes) or `fileData` (a URL).
fn content_parts<'m>(parts: impl Iterator<Item = PartRef<'m>>) -> Vec<Value> {
    parts
        .map(|part| match part {
            PartRef::Text(text) => json!({"text": text}),
            PartRef::Media(media) => media_part(media),
        })
        .collect()
}

fn media_part(media: &Media) -> Value {
    match media.url_str() {
        Some(url) => json!({"fileData": {"mimeType": media.essence(), "fileUri": url}}),
        None => json!({"inlineData": {"mimeType": media.essence(), "data": base64_of(media)}}),
    }
}

/// A model turn's parts: its thought summaries, its text and its calls, each with the
/// `thoughtSignature` it came with (see the module docs).
fn model_parts(message: &Message) -> Vec<Value> {
    let items: Vec<&Value> = message.provider_items_of(PROVIDER).collect();
    let signature = |part: &Value, of: &Value| {
        if let Some(signature) = of.get("thoughtSignature") {
            let mut part = part.clone();
            part["thoughtSignature"] = signature.clone();
            part
        } else {
            part.clone()
        }
    };
    let of_kind = |kind: &'static str| {
        items
            .iter()
            .copied()
            .filter(move |i| i.get("part").and_then(Value::as_str) == Some(kind))
    };
    let mut parts: Vec<Value> = of_kind("thought")
        .map(|thought| {
            let text = thought.get("text").cloned().unwrap_or(json!(""));
            signature(&json!({"text": text, "thought": true}), thought)
        })
        .collect();
    let text_signature = of_kind("text").next();
    if !message.content.is_empty() || text_signature.is_some() {
        let part = json!({"text": message.content});
        parts.push(match text_signature {
            Some(item) => signature(&part, item),
            None => part,
        });
    }
    // The model's own media (an image it drew), after its text, each with the signature it
    // came with.
    for (index, part) in message.parts.iter().enumerate() {
        let part = match part {
            Part::Text(text) => json!({"text": text}),
            Part::Media(media) => media_part(media),
        };
        let signed = of_kind("inlineData")
            .find(|i| i.get("index").and_then(Value::as_u64) == Some(index as u64));
        parts.push(match signed {
            Some(item) => signature(&part, item),
            None => part,
        });
    }
    for call in &message.tool_calls {
        let args = match &call.arguments {
            Value::Object(_) => call.arguments.clone(),
            // Arguments that were not a JSON object go as an empty one (the API demands one).
            _ => json!({}),
        };
        let part = json!({"functionCall": {"id": call.id, "name": call.name, "args": args}});
        let signed = of_kind("functionCall")
            .find(|i| i.get("id").and_then(Value::as_str) == Some(&*call.id));
        parts.push(match signed {
            Some(item) => signature(&part, item),
            None => part,
        });
    }
    if parts.is_empty() {
        // A turn needs a part; an empty answer is an empty text.
        parts.push(json!({"text": ""}));
    }
    parts
}
