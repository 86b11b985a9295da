//! Google's Gemini API (`POST {base}/models/{model}:generateContent`, streamed at
//! `:streamGenerateContent?alt=sse`), whole and streamed.
//!
//! Wire facts this module relies on: the key goes in the `x-goog-api-key` header; the system
//! prompt is `systemInstruction`; the model's turns have the role `model`; a tool's result is a
//! `functionResponse` part of a user turn, named after its function, and Gemini pairs results
//! with calls by their order (and by id, where it gave one), so the results of one turn go in
//! one user turn in the order of the calls. A streamed answer is a series of
//! `GenerateContentResponse` objects, one per server-sent event, with no end marker: their parts
//! add up (text in pieces, each function call whole), `usageMetadata` is a running total, and
//! the last one carries the `finishReason`.
//!
//! What the answer carries beside its text and calls goes back on later turns as the message's
//! [`ProviderItem`](crate::ProviderItem)s of provider `gemini`, each a JSON object with a
//! `part`: `{"part": "thought", "text": …}` for a thought summary (the `thought: true` text
//! parts, streamed as [`StreamEvent::ThinkingDelta`](crate::StreamEvent::ThinkingDelta)), and a
//! `thoughtSignature` exactly as received on the part it came with: a thought, the answer's text
//! (`{"part": "text", …}`) or a function call (`{"part": "functionCall", "id": …, …}`).
//! Gemini 3 refuses a turn whose calls lost their signatures.
//!
//! A call without an id (Gemini's API gives none) gets one made from the answer's `responseId`
//! and its position, `call_<responseId>_<n>`, sent back with the call and its result. Function
//! declarations are converted from JSON Schema to the subset of OpenAPI's schema that Gemini
//! accepts (see `schema.rs`) unless [`GeminiProvider::with_json_schema`] sends them as they are.

mod request;
mod response;
mod schema;
mod stream;

use super::ProviderError;
use super::media::{MB, MediaRules};
use super::provider::{HttpProvider, WireCodec};
use crate::message::{ChatRequest, ChatResponse};
use agent_core::content::{MediaKind, MediaLimits};

/// The provider's name in errors and spans, and the provider of its [`ProviderItem`]s.
///
/// [`ProviderItem`]: crate::ProviderItem
const PROVIDER: &str = "gemini";

/// Google's Gemini API: [`HttpProvider`] with the [`GeminiWire`] codec. Cloning is cheap and
/// clones share one HTTP client.
///
/// ```no_run
/// use agent_llm::{ChatRequest, GeminiProvider, LlmProvider, Message, ThinkingConfig};
///
/// # async fn run() -> Result<(), agent_llm::ProviderError> {
/// let gemini = GeminiProvider::new(std::env::var("GEMINI_API_KEY").unwrap(), "gemini-2.5-flash");
/// let transcript = [Message::user("Why is the sky blue?")];
/// let request = ChatRequest::new(&transcript).thinking(ThinkingConfig::Budget(2048));
/// println!("{}", gemini.complete(&request).await?.message.content);
/// # Ok(()) }
/// ```
pub type GeminiProvider = HttpProvider<GeminiWire>;

/// The Gemini `generateContent` wire format, with its own setting: how schemas are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GeminiWire {
    /// Schemas go as JSON Schema (`parametersJsonSchema`, `responseJsonSchema`) instead of being
    /// converted to Gemini's OpenAPI subset (`parameters`, `responseSchema`).
    pub json_schema: bool,
}

impl GeminiProvider {
    /// A provider for `model` (e.g. `gemini-2.5-flash`; a leading `models/` is allowed) at
    /// `https://generativelanguage.googleapis.com/v1beta` with an API key (Google AI Studio's,
    /// `GEMINI_API_KEY`). An empty key sends none (for a proxy that adds its own).
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        HttpProvider::with_wire(GeminiWire::default(), api_key.into(), model.into())
    }

    /// Sends tool and answer schemas as JSON Schema (`parametersJsonSchema`,
    /// `responseJsonSchema`, which Gemini 2.5 and later read) instead of converting them to the
    /// OpenAPI subset every Gemini model reads (`parameters`, `responseSchema`). Default: off.
    pub fn with_json_schema(self, yes: bool) -> Self {
        self.with_codec(|w| w.json_schema = yes)
    }
}

impl WireCodec for GeminiWire {
    const NAME: &'static str = PROVIDER;
    const DEFAULT_BASE_URL: &'static str = "https://generativelanguage.googleapis.com/v1beta";
    type Decoder = stream::StreamDecoder;

    fn endpoint(&self, base_url: &str, model: &str, stream: bool) -> String {
        let model = model.strip_prefix("models/").unwrap_or(model);
        let method = if stream {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        format!("{base_url}/models/{model}:{method}")
    }

    /// Images (PNG, JPEG, WebP, HEIC, HEIF), documents (PDF, plain text) and audio (WAV, MP3,
    /// AIFF, AAC, OGG, FLAC) as `inlineData` (bytes) or `fileData` (a URL), in user turns, model
    /// turns, and after a turn's `functionResponse`s (each part introduced by a text part that
    /// names it and its call); 20 MB of inline data a request.
    fn media_rules(&self) -> MediaRules {
        MediaRules {
            images: &[
                "image/png",
                "image/jpeg",
                "image/webp",
                "image/heic",
                "image/heif",
            ],
            documents: &["application/pdf", "text/plain"],
            audio: &[
                "audio/wav",
                "audio/mpeg",
                "audio/mp3",
                "audio/aiff",
                "audio/aac",
                "audio/ogg",
                "audio/flac",
            ],
            by_url: &[MediaKind::Image, MediaKind::Document, MediaKind::Audio],
            limits: MediaLimits {
                max_part_bytes: 20 * MB,
                ..MediaLimits::default()
            },
            max_image_bytes: 20 * MB,
            max_request_bytes: 20 * MB,
            assistant_media: true,
        }
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(&'static str, String)> {
        api_key
            .map(|key| ("x-goog-api-key", key.to_owned()))
            .into_iter()
            .collect()
    }

    /// The model is in the URL and streaming is the endpoint's, so neither is in the body.
    fn encode(&self, _model: &str, request: &ChatRequest<'_>, _stream: bool) -> serde_json::Value {
        request::encode_request(self, request)
    }

    fn decode(&self, body: &serde_json::Value) -> Result<ChatResponse, ProviderError> {
        response::decode_response(body)
    }

    /// `responseSchema` (or `responseJsonSchema`) with `responseMimeType: application/json`.
    fn supports_response_schema(&self) -> bool {
        true
    }

    fn explain(&self, error: ProviderError, base_url: &str) -> ProviderError {
        explain_not_found(error, base_url)
    }
}

/// A 404 means an unknown model or a base URL without the API version: say so.
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
    let hint = if base_url.ends_with("/v1beta") || base_url.ends_with("/v1") {
        " (is the model's name right? `gemini-2.5-flash`, not a display name)".to_owned()
    } else {
        format!(
            " (requests go to `{base_url}/models/MODEL:generateContent`: the base URL usually \
             ends in the API version, e.g. `{base_url}/v1beta`)"
        )
    };
    ProviderError::Api {
        provider,
        status: 404,
        error_type,
        message: format!("{message}{hint}"),
        retry_after,
    }
}
