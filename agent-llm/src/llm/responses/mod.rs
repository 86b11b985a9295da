//! The OpenAI Responses API (`POST {base}/responses`), whole and streamed.
//!
//! Wire facts this module relies on: the system prompt is the top-level `instructions`; the
//! conversation is a list of input items (messages, `function_call`s, `function_call_output`s
//! matched by `call_id`, `reasoning` items); an answer is a list of output items of the same
//! kinds, with `usage` counting cached input and reasoning output tokens; typed runs ask for
//! `text.format: {type: "json_schema", strict: true}`; reasoning effort is `reasoning.effort`;
//! there are no stop sequences. A stream is server-sent events named by their `type`
//! (`response.output_text.delta`, `response.function_call_arguments.delta`,
//! `response.output_item.added/done`, `response.reasoning_summary_text.delta`, ending with
//! `response.completed` or `response.incomplete`; `response.failed` and `error` are failures).
//!
//! # What goes back on later turns
//!
//! An answer keeps its output items, in order, as [`ProviderItem`](crate::ProviderItem)s of its
//! assistant message: reasoning items (with `encrypted_content` when the server gave it), the
//! message and `function_call` items with their ids, and the answer's id. The next request sends
//! them back where the answer had them, so reasoning carries across turns. A message whose text
//! or calls were changed since is sent as its text and calls instead; calls cut off by the token
//! limit are never sent. How the server keeps the conversation is [`ResponsesState`].
//!
//! The answer's text is its message items' text (items after the first start a new paragraph);
//! the reasoning summaries arrive as [`StreamEvent::ThinkingDelta`](crate::StreamEvent) events
//! and are never the answer.
//!
//! # Prompt caching
//!
//! OpenAI caches long prompts' prefixes by itself. A request with a
//! [`ChatRequest::cache_key`] sends it as `prompt_cache_key`, so the turns of one run go where
//! their prefix is cached; cached input comes back as `input_tokens_details.cached_tokens`
//! ([`Usage::cache_read_tokens`](crate::Usage::cache_read_tokens)).

mod request;
mod response;
mod stream;

use super::ProviderError;
use super::media::{MediaRules, openai_rules};
use super::provider::{HttpProvider, WireCodec};
use crate::message::{ChatRequest, ChatResponse};
use agent_core::content::MediaKind;

/// The provider's name in errors, spans and [`ProviderItem`](crate::ProviderItem)s.
const PROVIDER: &str = "openai-responses";

/// A model behind OpenAI's Responses API: [`HttpProvider`] with the [`OpenAiResponsesWire`]
/// codec. The key is sent as `Authorization: Bearer`. Cloning is cheap and clones share one HTTP
/// client.
///
/// ```no_run
/// use agent_llm::{ChatRequest, LlmProvider, Message, OpenAiResponsesProvider, ResponsesState};
///
/// # async fn run() -> Result<(), agent_llm::ProviderError> {
/// let provider = OpenAiResponsesProvider::new(std::env::var("OPENAI_API_KEY").unwrap(), "gpt-5")
///     .with_state(ResponsesState::Stateless);
/// let transcript = [Message::user("Say hello.")];
/// let answer = provider.complete(&ChatRequest::new(&transcript)).await?;
/// println!("{}", answer.message.content);
/// # Ok(()) }
/// ```
pub type OpenAiResponsesProvider = HttpProvider<OpenAiResponsesWire>;

/// How the server keeps the conversation between requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResponsesState {
    /// The server's default: it stores each answer (`store` is not sent, so it is on at
    /// OpenAI), and every request sends the whole transcript, reasoning items by their ids.
    #[default]
    Stored,
    /// Nothing is stored (`store: false`, as zero-data-retention organisations need): answers
    /// carry their reasoning encrypted (`include: ["reasoning.encrypted_content"]`) and it goes
    /// back that way; reasoning items without it are left out, as the server could not find them.
    Stateless,
    /// Each request continues the last answer of this API in the transcript by its id
    /// (`previous_response_id`, with `store: true`) and sends only the messages after it; with
    /// no such answer, the whole transcript. Less to send; the server must still have the answer.
    Chained,
}

/// The Responses wire format (`POST {base}/responses`), with its own settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenAiResponsesWire {
    /// How the server keeps the conversation.
    pub state: ResponsesState,
    /// Tools are sent in strict mode (`"strict": true`, schemas in OpenAI's strict form);
    /// otherwise `"strict": false` with the schemas as they are (the API's own default is strict).
    pub strict_tools: bool,
    /// With thinking asked for, reasoning summaries are asked for too (`reasoning.summary:
    /// "auto"`), to show as thinking. Some organisations must be verified first.
    pub reasoning_summary: bool,
}

impl Default for OpenAiResponsesWire {
    fn default() -> Self {
        OpenAiResponsesWire {
            state: ResponsesState::default(),
            strict_tools: false,
            reasoning_summary: true,
        }
    }
}

impl OpenAiResponsesProvider {
    /// A provider for `model` at OpenAI (`https://api.openai.com/v1`; see
    /// [`HttpProvider::with_base_url`] for other servers that speak this API). An empty key sends
    /// no `Authorization` header.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        HttpProvider::with_wire(OpenAiResponsesWire::default(), api_key.into(), model.into())
    }

    /// How the server keeps the conversation (see [`ResponsesState`]).
    pub fn with_state(self, state: ResponsesState) -> Self {
        self.with_codec(|w| w.state = state)
    }

    /// Sends tools in strict mode (`"strict": true`, schemas in OpenAI's strict form).
    pub fn with_strict_tools(self, strict: bool) -> Self {
        self.with_codec(|w| w.strict_tools = strict)
    }

    /// Whether a request that asks for thinking asks for reasoning summaries too (default: yes).
    pub fn with_reasoning_summary(self, yes: bool) -> Self {
        self.with_codec(|w| w.reasoning_summary = yes)
    }
}

impl WireCodec for OpenAiResponsesWire {
    const NAME: &'static str = PROVIDER;
    const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";
    type Decoder = stream::StreamDecoder;

    fn endpoint(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/responses")
    }

    /// Structured outputs (`text.format`).
    fn supports_response_schema(&self) -> bool {
        true
    }

    /// Images (PNG, JPEG, GIF, WebP; 20 MB each) as `input_image` (`data:` URL or URL), PDFs as
    /// `input_file` (bytes or URL), plain-text documents as `input_text`, in user messages and in
    /// a `function_call_output`'s content list; 50 MB a request. No audio: the API takes none.
    fn media_rules(&self) -> MediaRules {
        openai_rules(&[], &[MediaKind::Image, MediaKind::Document])
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

    fn explain(&self, error: ProviderError, base_url: &str) -> ProviderError {
        match error {
            // A 404 with the API's own error (`model_not_found`) is about the model, not the URL.
            ProviderError::Api {
                provider,
                status: 404,
                error_type: error_type @ None,
                message,
                retry_after,
            } => ProviderError::Api {
                provider,
                status: 404,
                error_type,
                message: format!(
                    "{message} (no Responses API at `{base_url}/responses`: the base URL is the \
                     part before `/responses`, usually ending in `/v1`)"
                ),
                retry_after,
            },
            other => other,
        }
    }
}
