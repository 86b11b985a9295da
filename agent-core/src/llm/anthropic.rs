//! The Anthropic Messages API (`POST {base}/v1/messages`), whole and streamed.
//!
//! Wire facts this module relies on: `x-api-key` and `anthropic-version: 2023-06-01` headers; the
//! system prompt is a top-level field; tool results travel as `tool_result` blocks in one user
//! message after the assistant turn, before any text; streams are server-sent events
//! (`message_start`, `content_block_start/delta/stop`, `message_delta` with cumulative usage,
//! `message_stop`, `ping` anywhere, `error` even after HTTP 200).
//!
//! An answer's text blocks become one text: blocks that follow one another are joined as they are
//! (the API splits text where a citation starts or ends, mid-sentence), and a block of another
//! kind between two of them (a tool call, a search result) becomes a paragraph break, which a
//! stream sends as a text delta too, so the deltas add up to the answer's text.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::http::{Http, HttpOptions};
use super::{EventStream, LlmProvider, ProviderError, SseDecoder, StreamEvent};
use crate::call::ToolCall;
use crate::message::{
    ChatRequest, ChatResponse, Message, Role, StopReason, Thinking, ThinkingConfig, ToolChoice,
    TruncatedToolCall, Usage,
};

const PROVIDER: &str = "anthropic";
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// Where the Anthropic provider puts prompt-cache breakpoints (`cache_control: ephemeral`), so a
/// long run pays for its unchanging prefix once. Both are on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheControl {
    /// After the last tool definition.
    pub tools: bool,
    /// After the system prompt.
    pub system: bool,
}

impl Default for CacheControl {
    fn default() -> Self {
        CacheControl {
            tools: true,
            system: true,
        }
    }
}

impl CacheControl {
    /// No breakpoints.
    pub fn none() -> Self {
        CacheControl {
            tools: false,
            system: false,
        }
    }
}

/// The Anthropic Messages API. Cloning is cheap and clones share one HTTP client.
#[derive(Clone)]
pub struct AnthropicProvider {
    config: Config,
    http: Result<Arc<Http>, ProviderError>,
}

#[derive(Clone)]
struct Config {
    api_key: String,
    model: String,
    base_url: String,
    cache: CacheControl,
    options: HttpOptions,
}

impl AnthropicProvider {
    /// A provider for `model` (e.g. `claude-sonnet-4-5`) with an API key.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        AnthropicProvider::from_config(Config {
            api_key: api_key.into(),
            model: model.into(),
            base_url: DEFAULT_BASE_URL.to_owned(),
            cache: CacheControl::default(),
            options: HttpOptions::default(),
        })
    }

    fn from_config(config: Config) -> Self {
        let headers = vec![
            ("x-api-key", config.api_key.clone()),
            ("anthropic-version", "2023-06-01".to_owned()),
        ];
        let http = Http::new(PROVIDER, headers, config.options.clone()).map(Arc::new);
        AnthropicProvider { config, http }
    }

    fn with(self, change: impl FnOnce(&mut Config)) -> Self {
        let mut config = self.config;
        change(&mut config);
        AnthropicProvider::from_config(config)
    }

    /// Sends requests to `base_url` (default `https://api.anthropic.com`); `/v1/messages` is added.
    pub fn with_base_url(self, base_url: impl Into<String>) -> Self {
        let base_url = base_url.into().trim_end_matches('/').to_owned();
        self.with(|c| c.base_url = base_url)
    }

    super::http::http_settings!();

    /// Where prompt-cache breakpoints go.
    pub fn with_cache_control(self, cache: CacheControl) -> Self {
        self.with(|c| c.cache = cache)
    }

    /// The JSON body this provider sends for `request` (with `stream` set as given).
    pub fn request_body(&self, request: &ChatRequest<'_>, stream: bool) -> Value {
        encode_request(&self.config.model, self.config.cache, request, stream)
    }

    fn url(&self) -> String {
        format!("{}/v1/messages", self.config.base_url)
    }
}

impl std::fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("model", &self.config.model)
            .field("base_url", &self.config.base_url)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl LlmProvider for AnthropicProvider {
    fn name(&self) -> &str {
        PROVIDER
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let body = Bytes::from(self.request_body(request, false).to_string());
        let http = self.http.as_ref().map_err(Clone::clone)?;
        decode_response(&http.send_json(&self.url(), body).await?)
    }

    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        let body = Bytes::from(self.request_body(request, true).to_string());
        super::sse_stream(
            self.http.clone(),
            self.url(),
            body,
            StreamDecoder::default(),
            |_| false,
        )
    }
}

/// The request body. Public through [`AnthropicProvider::request_body`] for tests and debugging.
fn encode_request(
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
    if !system.is_empty() {
        let mut block = json!({"type": "text", "text": system.join("\n\n")});
        if cache.system {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
        body.insert("system".into(), json!([block]));
    }
    body.insert(
        "messages".into(),
        Value::Array(encode_messages(request.messages)),
    );
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
            // The API refuses empty text blocks; an empty user message left alone still gets its
            // (refused) block below, so the mistake is reported rather than hidden.
            Role::User if message.content.is_empty() => ("user", Vec::new()),
            Role::User => (
                "user",
                vec![json!({"type": "text", "text": message.content})],
            ),
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
    if message.content.trim().is_empty() && message.is_error {
        block["content"] = json!("the tool failed without a message");
    } else if !message.content.is_empty() {
        block["content"] = json!(message.content);
    }
    block["is_error"] = json!(message.is_error);
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

fn decode_stop_reason(reason: Option<&str>, stop_sequence: Option<&str>) -> StopReason {
    match reason {
        Some("end_turn") | None => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") | Some("model_context_window_exceeded") => StopReason::MaxTokens,
        Some("stop_sequence") => StopReason::StopSequence(stop_sequence.map(str::to_owned)),
        Some("refusal") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

fn decode_usage(usage: &Value, into: &mut Usage) {
    let get = |key: &str| usage.get(key).and_then(Value::as_u64);
    if let Some(n) = get("input_tokens") {
        into.input_tokens = n;
    }
    if let Some(n) = get("output_tokens") {
        into.output_tokens = n;
    }
    if let Some(n) = get("cache_read_input_tokens") {
        into.cache_read_tokens = n;
    }
    if let Some(n) = get("cache_creation_input_tokens") {
        into.cache_write_tokens = n;
    }
}

fn decode_error(what: &str) -> ProviderError {
    ProviderError::Decode {
        provider: PROVIDER.into(),
        message: what.to_owned(),
    }
}

/// A whole (non-streamed) answer.
fn decode_response(value: &Value) -> Result<ChatResponse, ProviderError> {
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| decode_error("no `content` array"))?;
    let stop_reason = decode_stop_reason(
        value.get("stop_reason").and_then(Value::as_str),
        value.get("stop_sequence").and_then(Value::as_str),
    );
    let mut message = Message::assistant("");
    let mut paragraphs = Paragraphs::default();
    let mut truncated = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                message.content.push_str(paragraphs.text_block());
                message.content.push_str(text);
                if !text.is_empty() {
                    paragraphs.saw_text();
                }
                continue;
            }
            Some("tool_use") => {
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                // A tool call last in an answer cut off by the token limit may be incomplete.
                if stop_reason == StopReason::MaxTokens && i == blocks.len() - 1 {
                    truncated.push(TruncatedToolCall {
                        id,
                        name,
                        partial_arguments: input.to_string(),
                    });
                } else {
                    message.tool_calls.push(ToolCall {
                        id: id.into(),
                        name,
                        arguments: input,
                    });
                }
            }
            Some("thinking") | Some("redacted_thinking") => {
                if let Ok(thinking) = serde_json::from_value::<Thinking>(block.clone()) {
                    message.thinking.push(thinking);
                }
            }
            _ => {}
        }
        paragraphs.other_block();
    }
    let mut usage = Usage::default();
    if let Some(u) = value.get("usage") {
        decode_usage(u, &mut usage);
    }
    Ok(ChatResponse {
        message,
        stop_reason,
        usage,
        truncated_tool_calls: truncated,
        model: value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
        id: value.get("id").and_then(Value::as_str).map(str::to_owned),
    })
}

/// How an answer's text blocks are joined. Text blocks that follow one another are one text (the
/// API splits text where a citation starts or ends, mid-sentence); a block of another kind between
/// two of them (a tool call, a search result) starts a new paragraph.
#[derive(Default)]
struct Paragraphs {
    /// Some text came so far.
    text: bool,
    /// A block of another kind came after it.
    gap: bool,
}

impl Paragraphs {
    /// A block of another kind starts.
    fn other_block(&mut self) {
        self.gap = self.text;
    }

    /// A text block starts: what goes before it (a paragraph break, or nothing).
    fn text_block(&mut self) -> &'static str {
        if std::mem::take(&mut self.gap) {
            "\n\n"
        } else {
            ""
        }
    }

    /// Text came (not empty).
    fn saw_text(&mut self) {
        self.text = true;
    }
}

/// One content block being streamed.
enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
        ordinal: usize,
        done: bool,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    Other,
}

/// Turns the SSE events of one streamed answer into [`StreamEvent`]s and, at the end, the whole
/// [`ChatResponse`]. A pure state machine: no I/O.
#[derive(Default)]
pub(crate) struct StreamDecoder {
    started: bool,
    id: Option<String>,
    model: Option<String>,
    blocks: BTreeMap<u64, Block>,
    /// How text blocks are joined.
    paragraphs: Paragraphs,
    tools_seen: usize,
    stop_reason: Option<String>,
    stop_sequence: Option<String>,
    usage: Usage,
    stopped: bool,
}

impl SseDecoder for StreamDecoder {
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        if event == "ping" || data.trim().is_empty() {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            decode_error(&format!(
                "event `{event}` is not JSON ({e}): {}",
                truncate(data)
            ))
        })?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or(event);
        let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                self.started = true;
                let message = value.get("message").unwrap_or(&Value::Null);
                self.id = message.get("id").and_then(Value::as_str).map(str::to_owned);
                self.model = message
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if let Some(usage) = message.get("usage") {
                    decode_usage(usage, &mut self.usage);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            "content_block_start" => {
                let block = value.get("content_block").unwrap_or(&Value::Null);
                let text = |key: &str| {
                    block
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                let kind = block.get("type").and_then(Value::as_str);
                if kind != Some("text") {
                    self.paragraphs.other_block();
                }
                let new = match kind {
                    Some("text") => {
                        // The paragraph break, if any, is part of the block and of its deltas,
                        // so the deltas add up to the answer's text.
                        let initial = text("text");
                        if !initial.is_empty() {
                            self.paragraphs.saw_text();
                        }
                        Block::Text(format!("{}{initial}", self.paragraphs.text_block()))
                    }
                    Some("tool_use") => {
                        let ordinal = self.tools_seen;
                        self.tools_seen += 1;
                        out.push(StreamEvent::ToolCallStarted {
                            index: ordinal,
                            id: text("id"),
                            name: text("name"),
                        });
                        Block::Tool {
                            id: text("id"),
                            name: text("name"),
                            json: String::new(),
                            ordinal,
                            done: false,
                        }
                    }
                    Some("thinking") => Block::Thinking {
                        thinking: text("thinking"),
                        signature: text("signature"),
                    },
                    Some("redacted_thinking") => Block::Redacted(text("data")),
                    _ => Block::Other,
                };
                if let Block::Text(t) = &new
                    && !t.is_empty()
                {
                    out.push(StreamEvent::TextDelta(t.clone()));
                }
                self.blocks.insert(index, new);
            }
            "content_block_delta" => {
                let delta = value.get("delta").unwrap_or(&Value::Null);
                let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
                match (
                    self.blocks.get_mut(&index),
                    delta.get("type").and_then(Value::as_str),
                ) {
                    (Some(Block::Text(buffer)), Some("text_delta")) => {
                        buffer.push_str(text("text"));
                        if !text("text").is_empty() {
                            self.paragraphs.saw_text();
                        }
                        out.push(StreamEvent::TextDelta(text("text").to_owned()));
                    }
                    (Some(Block::Tool { json, ordinal, .. }), Some("input_json_delta")) => {
                        let piece = text("partial_json");
                        if !piece.is_empty() {
                            json.push_str(piece);
                            out.push(StreamEvent::ToolCallDelta {
                                index: *ordinal,
                                arguments: piece.to_owned(),
                            });
                        }
                    }
                    (Some(Block::Thinking { thinking, .. }), Some("thinking_delta")) => {
                        thinking.push_str(text("thinking"));
                        out.push(StreamEvent::ThinkingDelta(text("thinking").to_owned()));
                    }
                    (Some(Block::Thinking { signature, .. }), Some("signature_delta")) => {
                        signature.push_str(text("signature"));
                    }
                    (None, _) => {
                        return Err(decode_error(&format!(
                            "a delta for block {index}, which never started"
                        )));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(Block::Tool {
                    id,
                    name,
                    json,
                    done,
                    ..
                }) = self.blocks.get_mut(&index)
                {
                    *done = true;
                    out.push(StreamEvent::ToolCallFinished(ToolCall {
                        id: id.as_str().into(),
                        name: name.clone(),
                        arguments: parse_arguments(json),
                    }));
                }
            }
            "message_delta" => {
                let delta = value.get("delta").unwrap_or(&Value::Null);
                if let Some(reason) = delta.get("stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(sequence) = delta.get("stop_sequence").and_then(Value::as_str) {
                    self.stop_sequence = Some(sequence.to_owned());
                }
                if let Some(usage) = value.get("usage") {
                    decode_usage(usage, &mut self.usage);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let error = value.get("error").unwrap_or(&Value::Null);
                return Err(ProviderError::Stream {
                    provider: PROVIDER.into(),
                    error_type: error.get("type").and_then(Value::as_str).map(str::to_owned),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown error")
                        .to_owned(),
                });
            }
            _ => {}
        }
        Ok(out)
    }

    fn is_complete(&self) -> bool {
        self.stopped
    }

    /// A stream that ended before `message_delta` said why the model stopped is incomplete and an
    /// error; tool calls whose block never stopped are reported as truncated.
    fn finish(self) -> Result<ChatResponse, ProviderError> {
        if !self.started {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: None,
                message: "the stream ended before the message started".into(),
            });
        }
        if !self.stopped && self.stop_reason.is_none() {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: None,
                message: "the stream ended before the message was complete (no `message_delta` or `message_stop`)".into(),
            });
        }
        let mut message = Message::assistant("");
        let mut truncated = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                Block::Text(text) => message.content.push_str(&text),
                Block::Tool {
                    id,
                    name,
                    json,
                    done: true,
                    ..
                } => {
                    message.tool_calls.push(ToolCall {
                        id: id.into(),
                        name,
                        arguments: parse_arguments(&json),
                    });
                }
                Block::Tool {
                    id,
                    name,
                    json,
                    done: false,
                    ..
                } => {
                    truncated.push(TruncatedToolCall {
                        id,
                        name,
                        partial_arguments: json,
                    });
                }
                Block::Thinking {
                    thinking,
                    signature,
                } => message.thinking.push(Thinking::Thinking {
                    thinking,
                    signature,
                }),
                Block::Redacted(data) => message.thinking.push(Thinking::RedactedThinking { data }),
                Block::Other => {}
            }
        }
        Ok(ChatResponse {
            message,
            stop_reason: decode_stop_reason(
                self.stop_reason.as_deref(),
                self.stop_sequence.as_deref(),
            ),
            usage: self.usage,
            truncated_tool_calls: truncated,
            model: self.model,
            id: self.id,
        })
    }
}

/// Tool arguments from streamed JSON text: empty means `{}`; text that is not valid JSON is kept
/// as a string, which the registry answers with a `BadArgs` result the model can correct.
pub(crate) fn parse_arguments(json: &str) -> Value {
    if json.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.to_owned()))
}

fn truncate(text: &str) -> String {
    text.chars().take(200).collect()
}
