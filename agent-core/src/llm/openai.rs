//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`), whole and streamed: OpenAI
//! itself, DeepSeek, Ollama, vLLM, llama.cpp's server and the like.
//!
//! The compatible servers differ from OpenAI and from each other; the decoder survives: ids
//! repeated on every delta, empty or missing ids (unique ones are made up), indexes starting at 1,
//! missing (Gemini) or 0 for every call (then a new id starts a new call), arguments sent whole or
//! as a JSON object instead of a string, `finish_reason: stop` although tool calls were made, the
//! legacy `function_call` field, usage in a final chunk with `choices: []`, and a stream that ends
//! without `data: [DONE]` after a finish reason.
//!
//! Made-up ids are made when a call is announced ([`StreamEvent::ToolCallStarted`]), so the events
//! and the answer name each call alike. An answer cut at the token limit (`finish_reason: length`)
//! reports only its last call as cut off: calls come one after another, so the ones before it are
//! whole and run. A refusal (OpenAI's `refusal` field instead of `content`) is the answer's text, with
//! [`StopReason::Refusal`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Map, Value, json};

use super::anthropic::parse_arguments;
use super::http::{Http, HttpOptions};
use super::{EventStream, LlmProvider, ProviderError, SseDecoder, StreamEvent};
use crate::call::ToolCall;
use crate::message::{
    ChatRequest, ChatResponse, Effort, Message, Role, StopReason, ThinkingConfig, ToolChoice,
    TruncatedToolCall, Usage,
};

const PROVIDER: &str = "openai";
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// An OpenAI-compatible Chat Completions server. Works without an API key (Ollama, llama.cpp).
#[derive(Clone)]
pub struct OpenAiProvider {
    config: Config,
    http: Result<Arc<Http>, ProviderError>,
    /// Set once the server showed it cannot stream answers with tools: from then on, `stream`
    /// asks for whole answers. Shared by clones.
    whole_answers: Arc<AtomicBool>,
}

#[derive(Clone)]
struct Config {
    api_key: Option<String>,
    model: String,
    base_url: String,
    strict_tools: bool,
    max_completion_tokens: bool,
    options: HttpOptions,
}

impl OpenAiProvider {
    /// A provider for `model` at OpenAI. An empty key sends no `Authorization` header.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        let api_key = Some(api_key.into()).filter(|k| !k.is_empty());
        OpenAiProvider::from_config(Config {
            api_key,
            model: model.into(),
            base_url: DEFAULT_BASE_URL.to_owned(),
            strict_tools: false,
            max_completion_tokens: false,
            options: HttpOptions::default(),
        })
    }

    fn from_config(config: Config) -> Self {
        let headers = config
            .api_key
            .iter()
            .map(|key| ("authorization", format!("Bearer {key}")))
            .collect();
        let http = check_base_url(&config.base_url)
            .and_then(|()| Http::new(PROVIDER, headers, config.options.clone()).map(Arc::new));
        OpenAiProvider {
            config,
            http,
            whole_answers: Arc::new(AtomicBool::new(false)),
        }
    }

    fn with(self, change: impl FnOnce(&mut Config)) -> Self {
        let mut config = self.config;
        change(&mut config);
        OpenAiProvider::from_config(config)
    }

    /// Sends requests to `base_url` (default `https://api.openai.com/v1`, e.g.
    /// `http://localhost:11434/v1` for Ollama); `/chat/completions` is added.
    pub fn with_base_url(self, base_url: impl Into<String>) -> Self {
        let base_url = base_url.into().trim_end_matches('/').to_owned();
        self.with(|c| c.base_url = base_url)
    }

    super::http::http_settings!();

    /// Sends tools in strict mode (`"strict": true`, schemas in OpenAI's strict form).
    pub fn with_strict_tools(self, strict: bool) -> Self {
        self.with(|c| c.strict_tools = strict)
    }

    /// Sends the token limit as `max_completion_tokens` (OpenAI's reasoning models require it)
    /// instead of `max_tokens` (which compatible servers understand).
    pub fn with_max_completion_tokens(self, yes: bool) -> Self {
        self.with(|c| c.max_completion_tokens = yes)
    }

    /// The JSON body this provider sends for `request`.
    pub fn request_body(&self, request: &ChatRequest<'_>, stream: bool) -> Value {
        encode_request(&self.config, request, stream)
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.config.base_url)
    }
}

impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("model", &self.config.model)
            .field("base_url", &self.config.base_url)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl LlmProvider for OpenAiProvider {
    fn name(&self) -> &str {
        PROVIDER
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let body = Bytes::from(self.request_body(request, false).to_string());
        let http = self.http.as_ref().map_err(Clone::clone)?;
        whole_answer(http, &self.url(), body, &self.config.base_url).await
    }

    /// Streams the answer. A server that cannot stream answers with tools (llama-cpp-python's
    /// `chatml-function-calling`: "Automatic streaming tool choice is not supported", or a stream
    /// that ends before any data) is asked again for the whole answer, announced with a
    /// [`StreamEvent::Retry`] that says so, and every later request of this provider (and its
    /// clones) asks for whole answers at once.
    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        let whole_body = Bytes::from(self.request_body(request, false).to_string());
        let http = self.http.clone();
        let url = self.url();
        let base_url = self.config.base_url.clone();
        if self.whole_answers.load(Ordering::Relaxed) {
            return Box::pin(async_stream::try_stream! {
                let http = http?;
                for event in whole_answer_events(&http, &url, whole_body, &base_url).await? {
                    yield event;
                }
            });
        }
        let body = Bytes::from(self.request_body(request, true).to_string());
        let has_tools = !request.tools.is_empty();
        let streamed = super::sse_stream(
            http.clone(),
            url.clone(),
            body,
            StreamDecoder::default(),
            move |error| has_tools && streaming_unsupported(error),
        );
        let whole_answers = self.whole_answers.clone();
        Box::pin(async_stream::try_stream! {
            let mut streamed = streamed;
            let mut delivered = false;
            while let Some(item) = streamed.next().await {
                match item {
                    Ok(event) => {
                        delivered |= !matches!(event, StreamEvent::Retry { .. });
                        yield event;
                    }
                    Err(error) if !delivered && has_tools && streaming_unsupported(&error) => {
                        whole_answers.store(true, Ordering::Relaxed);
                        yield StreamEvent::Retry {
                            attempt: 1,
                            delay: std::time::Duration::ZERO,
                            error: format!(
                                "{error}; this server cannot stream answers that may call tools, \
                                 so whole answers are asked for from now on"
                            ),
                        };
                        let http = http?;
                        for event in whole_answer_events(&http, &url, whole_body, &base_url).await? {
                            yield event;
                        }
                        return;
                    }
                    Err(error) => Err(explain_not_found(error, &base_url))?,
                }
            }
        })
    }
}

/// Whether `error` says the server cannot stream this request (rather than that it failed).
fn streaming_unsupported(error: &ProviderError) -> bool {
    match error {
        ProviderError::Stream { message, .. } => message.contains("before any data"),
        ProviderError::Api {
            status, message, ..
        } => {
            let message = message.to_ascii_lowercase();
            matches!(status, 400 | 422 | 500 | 501)
                && message.contains("stream")
                && (message.contains("not supported")
                    || message.contains("unsupported")
                    || message.contains("not implemented"))
        }
        _ => false,
    }
}

/// Asks for the whole answer (with retries) and decodes it.
async fn whole_answer(
    http: &Http,
    url: &str,
    body: Bytes,
    base_url: &str,
) -> Result<ChatResponse, ProviderError> {
    let value = http
        .send_json(url, body)
        .await
        .map_err(|e| explain_not_found(e, base_url))?;
    decode_response(&value)
}

/// A whole answer as the events a stream of it would have given.
async fn whole_answer_events(
    http: &Http,
    url: &str,
    body: Bytes,
    base_url: &str,
) -> Result<Vec<StreamEvent>, ProviderError> {
    let response = whole_answer(http, url, body, base_url).await?;
    let mut events = Vec::new();
    if !response.message.content.is_empty() {
        events.push(StreamEvent::TextDelta(response.message.content.clone()));
    }
    for (index, call) in response.message.tool_calls.iter().enumerate() {
        events.push(StreamEvent::ToolCallStarted {
            index,
            id: call.id.to_string(),
            name: call.name.clone(),
        });
        events.push(StreamEvent::ToolCallFinished(call.clone()));
    }
    events.push(StreamEvent::Usage(response.usage));
    events.push(StreamEvent::Done(response));
    Ok(events)
}

/// A base URL that cannot work is a configuration error at once, naming the fix, rather than a
/// network error retried four times.
fn check_base_url(base_url: &str) -> Result<(), ProviderError> {
    let fix = |problem: &str| {
        let example = if base_url.contains("://") {
            "http://127.0.0.1:8080/v1".to_owned()
        } else {
            format!("http://{base_url}")
        };
        Err(ProviderError::Config(format!(
            "the OpenAI-compatible base URL `{base_url}` {problem}; write it in full, e.g. `{example}`"
        )))
    };
    match reqwest::Url::parse(base_url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(()),
        Ok(url) if !matches!(url.scheme(), "http" | "https") => {
            fix("has no `http://` or `https://` scheme")
        }
        Ok(_) => fix("names no host"),
        Err(_) => fix("has no `http://` or `https://` scheme"),
    }
}

/// A 404 usually means the base URL is one path segment off: say which.
fn explain_not_found(error: ProviderError, base_url: &str) -> ProviderError {
    let ProviderError::Api {
        provider,
        status: 404,
        error_type,
        message,
        retry_after,
    } = error
    else {
        return error;
    };
    let hint = if base_url.ends_with("/chat/completions") {
        format!(
            " (the base URL `{base_url}` already ends in `/chat/completions`, which is added to \
             it: give the part before it)"
        )
    } else if !base_url.ends_with("/v1") {
        format!(
            " (no chat completions at `{base_url}/chat/completions`: most OpenAI-compatible \
             servers answer under `/v1`, so try `{base_url}/v1` as the base URL)"
        )
    } else {
        format!(" (no chat completions at `{base_url}/chat/completions`: is the base URL right?)")
    };
    ProviderError::Api {
        provider,
        status: 404,
        error_type,
        message: format!("{message}{hint}"),
        retry_after,
    }
}

fn encode_request(config: &Config, request: &ChatRequest<'_>, stream: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(config.model));
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

fn decode_error(what: &str) -> ProviderError {
    ProviderError::Decode {
        provider: PROVIDER.into(),
        message: what.to_owned(),
    }
}

fn decode_usage(usage: &Value) -> Usage {
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
    }
}

/// `finish_reason` in neutral words. `stop` with tool calls present means tool use (some servers
/// never say `tool_calls`); an answer that sent `refusal` text and no calls is a refusal, whatever
/// its `finish_reason`.
fn decode_finish(reason: Option<&str>, has_tool_calls: bool, refused: bool) -> StopReason {
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
fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

fn decode_response(value: &Value) -> Result<ChatResponse, ProviderError> {
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
                call.get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                arguments_text(function.get("arguments")),
            ));
        }
    }
    if calls.is_empty()
        && let Some(function) = wire.get("function_call").filter(|f| f.is_object())
    {
        calls.push((
            String::new(),
            function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments_text(function.get("arguments")),
        ));
    }
    let finish = choice.get("finish_reason").and_then(Value::as_str);
    // A refusal comes as `refusal` text instead of `content`; it is the answer's text.
    let refusal = wire
        .get("refusal")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let stop_reason = decode_finish(finish, !calls.is_empty(), refusal.is_some());
    let mut ids = IdMaker::default();
    let calls = calls
        .into_iter()
        .map(|(id, name, arguments)| (ids.make(&id), name, arguments))
        .collect();
    let mut text = wire
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    text.push_str(refusal.unwrap_or_default());
    let (message, truncated) = answer(text, calls, &stop_reason);
    Ok(ChatResponse {
        message,
        stop_reason,
        usage: value.get("usage").map(decode_usage).unwrap_or_default(),
        truncated_tool_calls: truncated,
        model: value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
        id: value.get("id").and_then(Value::as_str).map(str::to_owned),
    })
}

/// The assistant message of an answer, and the calls the token limit cut off. Calls come one after
/// another, so only the last one can have been cut: when the answer stopped at the limit, that one
/// is reported as truncated (never run) and the ones before it are whole.
fn answer(
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
struct IdMaker {
    used: Vec<String>,
}

impl IdMaker {
    fn make(&mut self, given: &str) -> String {
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
pub(crate) struct StreamDecoder {
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
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_owned(),
            });
        }
        self.saw_chunk = true;
        // Azure's first chunk (prompt filter results) has `"id": ""` and `"model": ""`.
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
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
            if let Some(text) = delta
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.refused |= key == "refusal";
                self.text.push_str(text);
                out.push(StreamEvent::TextDelta(text.to_owned()));
            }
        }
        // vLLM sends the same text under both names; the first one present is the reasoning.
        if let Some(text) = ["reasoning_content", "reasoning"].iter().find_map(|key| {
            delta
                .get(*key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
        }) {
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
                    call.get("id").and_then(Value::as_str),
                    function.get("name").and_then(Value::as_str),
                    function.get("arguments"),
                    &mut out,
                );
            }
        } else if let Some(function) = delta.get("function_call").filter(|f| f.is_object()) {
            self.tool_delta(
                Some(LEGACY_KEY),
                None,
                function.get("name").and_then(Value::as_str),
                function.get("arguments"),
                &mut out,
            );
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
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
            usage: self.usage,
            truncated_tool_calls: truncated,
            model: self.model,
            id: self.id,
        })
    }
}
