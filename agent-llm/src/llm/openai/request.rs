//! Requests in the Chat Completions shape: the system prompt as the first message, one `tool`
//! message per result, `""` content next to tool calls, strict tools and reasoning effort.

use serde_json::{Map, Value, json};

use super::OpenAiWire;
use crate::message::{ChatRequest, Effort, Message, Role, ThinkingConfig, ToolChoice};

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
    messages.extend(request.messages.iter().map(encode_message));
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
    body.insert("stream".into(), json!(stream));
    if stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

fn encode_message(message: &Message) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User => json!({"role": "user", "content": message.content}),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.as_deref().unwrap_or_default(),
            "content": message.content,
        }),
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
