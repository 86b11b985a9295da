//! Requests in the Messages API's shape: the system prompt as a top-level field, roles that
//! alternate, tool results as `tool_result` blocks in one user message, thinking settings.

use serde_json::{Map, Value, json};

use super::super::media::{base64_of, document_text};
use super::CacheControl;
use super::breakpoints::{MAX_BREAKPOINTS, mark_conversation};
use crate::message::{ChatRequest, Message, PartRef, Role, ThinkingConfig, ToolChoice};
use agent_core::content::{Media, MediaKind};

/// The request body. Public through
/// [`HttpProvider::request_body`](crate::llm::HttpProvider::request_body) for tests and debugging.
pub(super) fn encode_request(
    model: &str,
    cache: CacheControl,
    request: &ChatRequest<'_>,
    stream: bool,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let mut max_tokens = request.max_tokens;
    match request.thinking {
        None => {}
        Some(ThinkingConfig::Budget(budget)) => {
            // The API wants at least 1,024 thinking tokens and `max_tokens` above the budget.
            let budget = budget.max(1024);
            max_tokens = max_tokens.max(budget.saturating_add(1024));
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
        Some(ThinkingConfig::Adaptive(effort)) => {
            body.insert("thinking".into(), json!({"type": "adaptive"}));
            body.insert("output_config".into(), json!({"effort": effort.as_str()}));
        }
    }
    if let Some(format) = request.response_schema {
        let config = body.entry("output_config").or_insert_with(|| json!({}));
        config["format"] = json!({"type": "json_schema", "schema": format.schema});
    }
    body.insert("max_tokens".into(), json!(max_tokens));
    let thinking = request.thinking.is_some();
    let mut system: Vec<&str> = request.system.into_iter().collect();
    system.extend(
        request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str()),
    );
    // Breakpoints left for the conversation once the system prompt and tools have theirs.
    let mut free = MAX_BREAKPOINTS;
    if !system.is_empty() {
        let mut block = json!({"type": "text", "text": system.join("\n\n")});
        if cache.system {
            block["cache_control"] = json!({"type": "ephemeral"});
            free -= 1;
        }
        body.insert("system".into(), json!([block]));
    }
    if cache.tools && !request.tools.is_empty() {
        free -= 1;
    }
    let mut messages = encode_messages(request.messages);
    if cache.conversation {
        mark_conversation(&mut messages, free);
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        if cache.tools
            && let Some(last) = tools.last_mut()
        {
            last["cache_control"] = json!({"type": "ephemeral"});
        }
        body.insert("tools".into(), Value::Array(tools));
        let mut choice = match &request.tool_choice {
            // With thinking on, the API accepts only `auto` and `none`.
            ToolChoice::Required | ToolChoice::Tool(_) if thinking => json!({"type": "auto"}),
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        };
        if !request.parallel_tool_calls && request.tool_choice != ToolChoice::None {
            choice["disable_parallel_tool_use"] = json!(true);
        }
        body.insert("tool_choice".into(), choice);
    }
    // With thinking on, the API requires the default temperature.
    if let Some(temperature) = request.temperature.filter(|_| !thinking) {
        body.insert("temperature".into(), json!(temperature));
    }
    if !request.stop_sequences.is_empty() {
        body.insert("stop_sequences".into(), json!(request.stop_sequences));
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

/// Messages in Anthropic's shape: roles alternate, so consecutive user-side messages (tool results
/// and user text) merge into one user message, tool results first.
fn encode_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => continue,
            // The API refuses empty text blocks: a message of media alone is its media; an empty
            // user message left alone still gets its (refused) block below, so the mistake is
            // reported rather than hidden.
            Role::User => ("user", content_blocks(message)),
            Role::Tool => ("user", vec![tool_result_block(message)]),
            Role::Assistant => ("assistant", assistant_blocks(message)),
        };
        match out.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, mut blocks)| {
            if blocks.is_empty() {
                blocks.push(json!({"type": "text", "text": ""}));
            }
            if role == "user" {
                // Stable: tool results keep their order, and come before any text.
                blocks.sort_by_key(|b| b["type"] != "tool_result");
            }
            json!({"role": role, "content": blocks})
        })
        .collect()
}

/// A `tool_result` block. An empty result has no `content` (the API refuses `""` when
/// `is_error` is set, and an empty failure gets a few words instead).
fn tool_result_block(message: &Message) -> Value {
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
    });
    if !message.parts.is_empty() {
        block["content"] = Value::Array(content_blocks(message));
    } else if message.content.trim().is_empty() && message.is_error {
        block["content"] = json!("the tool failed without a message");
    } else if !message.content.is_empty() {
        block["content"] = json!(message.content);
    }
    block["is_error"] = json!(message.is_error);
    block
}

/// A message's text and parts as content blocks, in order: `text`, `image` and `document`
/// (base64 or URL sources; a `text/plain` document as a `text` source, its name as `title`).
fn content_blocks(message: &Message) -> Vec<Value> {
    message
        .all_parts()
        .filter(|part| !matches!(part, PartRef::Text("")))
        .map(|part| match part {
            PartRef::Text(text) => json!({"type": "text", "text": text}),
            PartRef::Media(media) => media_block(media),
        })
        .collect()
}

fn media_block(media: &Media) -> Value {
    let essence = media.essence();
    let source = match (media.url_str(), essence.as_str()) {
        (Some(url), _) => json!({"type": "url", "url": url}),
        (None, "text/plain") => json!({
            "type": "text",
            "media_type": "text/plain",
            "data": document_text(media),
        }),
        (None, media_type) => {
            json!({"type": "base64", "media_type": media_type, "data": base64_of(media)})
        }
    };
    let mut block = json!({"type": media.kind().as_str(), "source": source});
    if media.kind() == MediaKind::Document
        && let Some(name) = &media.name
    {
        block["title"] = json!(&**name);
    }
    block
}

fn assistant_blocks(message: &Message) -> Vec<Value> {
    let mut blocks: Vec<Value> = message
        .thinking
        .iter()
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .collect();
    if !message.content.is_empty() {
        blocks.push(json!({"type": "text", "text": message.content}));
    }
    for call in &message.tool_calls {
        let input = match &call.arguments {
            Value::Object(_) => call.arguments.clone(),
            // Arguments that were not a JSON object are sent as an empty object (the API demands one).
            _ => json!({}),
        };
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    if blocks.is_empty() {
        blocks.push(json!({"type": "text", "text": "(no content)"}));
    }
    blocks
}
