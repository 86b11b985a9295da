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
//!
//! Prompt caching: OpenAI caches long prompts' prefixes by itself; a request with a
//! [`ChatRequest::cache_key`] sends it as `prompt_cache_key`, so the turns of one run go where
//! their prefix is cached. Cached input comes back as `prompt_tokens_details.cached_tokens`
//! ([`Usage::cache_read_tokens`](crate::Usage::cache_read_tokens)).
//!
//! Media: a user message with parts is sent as an array of content parts (`text`, `image_url`,
//! `input_audio`, `file`); a text-only one stays a string. A `tool` message takes text only, so
//! a tool result's media is a documented conversion: the result's text names each part (`[image 1
//! of call_7: chart.png, below]`) and, after the run of tool messages, one user message carries
//! the same labels, each followed by its part. The bytes on the wire are the part's bytes.

mod request;
mod response;
mod stream;

use super::ProviderError;
use super::media::{MediaRules, openai_rules};
use super::provider::{HttpProvider, WireCodec};
use crate::message::{ChatRequest, ChatResponse};
use agent_core::content::MediaKind;

/// The provider's name in errors and spans.
const PROVIDER: &str = "openai";

/// An OpenAI-compatible Chat Completions server: [`HttpProvider`] with the [`OpenAiWire`] codec.
/// Works without an API key (Ollama, llama.cpp). Cloning is cheap and clones share one HTTP client.
pub type OpenAiProvider = HttpProvider<OpenAiWire>;

/// The Chat Completions wire format (`POST {base}/chat/completions`), with its own settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenAiWire {
    /// Tools are sent in strict mode (`"strict": true`, schemas in OpenAI's strict form).
    pub strict_tools: bool,
    /// The token limit is sent as `max_completion_tokens` instead of `max_tokens`.
    pub max_completion_tokens: bool,
    /// The server does not follow `response_format: json_schema`, so typed runs do not ask for
    /// it (see [`OpenAiProvider::with_response_schema`]).
    pub no_response_schema: bool,
    /// The server refuses an unknown `prompt_cache_key`, so [`ChatRequest::cache_key`] is not
    /// sent (see [`OpenAiProvider::with_prompt_cache_key`]).
    pub no_prompt_cache_key: bool,
}

impl OpenAiProvider {
    /// A provider for `model` at OpenAI (`https://api.openai.com/v1`; see
    /// [`HttpProvider::with_base_url`] for other servers, e.g. `http://localhost:11434/v1` for
    /// Ollama). An empty key sends no `Authorization` header.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        HttpProvider::with_wire(OpenAiWire::default(), api_key.into(), model.into())
    }

    /// Sends tools in strict mode (`"strict": true`, schemas in OpenAI's strict form).
    pub fn with_strict_tools(self, strict: bool) -> Self {
        self.with_codec(|w| w.strict_tools = strict)
    }

    /// Whether the server follows `response_format: {type: "json_schema"}` (OpenAI, vLLM,
    /// llama.cpp and Ollama do). Default: `true`. Turn it off for a server that ignores or refuses
    /// it; typed runs in `OutputMode::Auto` (agent-runtime) then never ask for it.
    pub fn with_response_schema(self, supported: bool) -> Self {
        self.with_codec(|w| w.no_response_schema = !supported)
    }

    /// Whether [`ChatRequest::cache_key`] is sent as `prompt_cache_key`. Default: `true`.
    /// OpenAI routes requests with the same key and prefix to the same cache, so a run's turns
    /// read their shared history from it (billed as `cached_tokens`, at the model's cache-read
    /// price); most compatible servers ignore the field. Turn it off for a server that refuses it.
    pub fn with_prompt_cache_key(self, send: bool) -> Self {
        self.with_codec(|w| w.no_prompt_cache_key = !send)
    }

    /// Sends the token limit as `max_completion_tokens` (OpenAI's reasoning models require it)
    /// instead of `max_tokens` (which compatible servers understand).
    pub fn with_max_completion_tokens(self, yes: bool) -> Self {
        self.with_codec(|w| w.max_completion_tokens = yes)
    }
}

impl WireCodec for OpenAiWire {
    const NAME: &'static str = PROVIDER;
    const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";
    type Decoder = stream::StreamDecoder;

    fn endpoint(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/chat/completions")
    }

    fn supports_response_schema(&self) -> bool {
        !self.no_response_schema
    }

    /// Images (PNG, JPEG, GIF, WebP; 20 MB each) as `data:` URLs or URLs, audio (WAV, MP3) as
    /// `input_audio`, PDFs as `file` parts, plain-text documents as text; 50 MB a request. A
    /// `tool` message takes text only: a result's media is named in it and sent in a user
    /// message right after the results (as the module docs say). OpenAI-compatible servers
    /// (vLLM, Ollama...) take what their model takes; a part they cannot read is their error.
    fn media_rules(&self) -> MediaRules {
        openai_rules(&["audio/wav", "audio/mpeg"], &[MediaKind::Image])
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(&'static str, String)> {
        api_key
            .map(|key| ("authorization", format!("Bearer {key}")))
            .into_iter()
            .collect()
    }

    fn encode(&self, model: &str, request: &ChatRequest<'_>, stream: bool) -> serde_json::Value {
        request::encode_request(self, model, request, stream)
    }

    fn decode(&self, body: &serde_json::Value) -> Result<ChatResponse, ProviderError> {
        response::decode_response(body)
    }

    /// llama-cpp-python's `chatml-function-calling` cannot stream answers that may call tools: it
    /// ends the stream before any data, or says "Automatic streaming tool choice is not supported".
    fn may_fall_back_to_whole(&self, has_tools: bool) -> bool {
        has_tools
    }

    fn streaming_unsupported(&self, error: &ProviderError, has_tools: bool) -> bool {
        has_tools && streaming_unsupported(error)
    }

    fn explain(&self, error: ProviderError, base_url: &str) -> ProviderError {
        explain_not_found(error, base_url)
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
