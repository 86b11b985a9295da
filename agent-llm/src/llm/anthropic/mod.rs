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
//!
//! Prompt caching is on by default: [`CacheControl`] says where the breakpoints go (the tools,
//! the system prompt, and the last two user messages, so each turn reads the conversation
//! before it from the cache) and how to turn them off. The usage's `cache_read_input_tokens` and
//! `cache_creation_input_tokens` are [`Usage::cache_read_tokens`](crate::Usage::cache_read_tokens)
//! and [`Usage::cache_write_tokens`](crate::Usage::cache_write_tokens).

mod breakpoints;
mod request;
mod response;
mod stream;

use super::ProviderError;
use super::media::{MB, MediaRules};
use super::provider::{HttpProvider, WireCodec};
use crate::message::{ChatRequest, ChatResponse};
use agent_core::content::{MediaKind, MediaLimits};

/// The provider's name in errors and spans.
const PROVIDER: &str = "anthropic";

/// Where the Anthropic provider puts prompt-cache breakpoints (`cache_control: ephemeral`), so a
/// long run pays full price for each part of its prompt once and reads it back from the cache
/// at a tenth of the price on later turns. All are on by default.
///
/// A request carries at most four breakpoints: after the last tool definition, after the
/// system prompt, and on the last block of the newest user message (tool results included)
/// and of the user message before it. The newest one writes the conversation so far to the
/// cache; the one before it is where the previous request wrote, so this request reads that
/// prefix back. What a turn adds is then written once (at 1.25 times the input price, for the
/// five-minute cache) and read on every later turn (at 0.1 times); a prompt shorter than the
/// model's minimum (1,024 tokens for most models) is neither cached nor charged extra.
///
/// ```
/// use agent_llm::{AnthropicProvider, CacheControl};
///
/// // Tools and system prompt cached, the conversation not:
/// let cache = CacheControl { conversation: false, ..CacheControl::default() };
/// let provider = AnthropicProvider::new("sk-ant-…", "claude-sonnet-4-5").with_cache_control(cache);
/// // No breakpoints at all:
/// let provider = provider.with_cache_control(CacheControl::none());
/// # let _ = provider;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheControl {
    /// After the last tool definition.
    pub tools: bool,
    /// After the system prompt.
    pub system: bool,
    /// On the newest user message and the one before it (as many of the two as the four
    /// breakpoints leave room for).
    pub conversation: bool,
}

impl Default for CacheControl {
    fn default() -> Self {
        CacheControl {
            tools: true,
            system: true,
            conversation: true,
        }
    }
}

impl CacheControl {
    /// No breakpoints.
    pub fn none() -> Self {
        CacheControl {
            tools: false,
            system: false,
            conversation: false,
        }
    }
}

/// The Anthropic Messages API: [`HttpProvider`] with the [`AnthropicWire`] codec. Cloning is cheap
/// and clones share one HTTP client.
pub type AnthropicProvider = HttpProvider<AnthropicWire>;

/// The Anthropic Messages wire format (`POST {base}/v1/messages`), with its own setting: where
/// prompt-cache breakpoints go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnthropicWire {
    /// Where prompt-cache breakpoints go.
    pub cache: CacheControl,
}

impl AnthropicProvider {
    /// A provider for `model` (e.g. `claude-sonnet-4-5`) with an API key.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        HttpProvider::with_wire(AnthropicWire::default(), api_key.into(), model.into())
    }

    /// Where prompt-cache breakpoints go.
    pub fn with_cache_control(self, cache: CacheControl) -> Self {
        self.with_codec(|w| w.cache = cache)
    }
}

impl WireCodec for AnthropicWire {
    const NAME: &'static str = PROVIDER;
    const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";
    type Decoder = stream::StreamDecoder;

    fn endpoint(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/v1/messages")
    }

    /// Structured outputs (`output_config.format`), generally available since 2025-11.
    fn supports_response_schema(&self) -> bool {
        true
    }

    /// Images (JPEG, PNG, GIF, WebP; 5 MB and 8,000 pixels a side each) and documents (PDF,
    /// plain text), as bytes or URLs, in user messages and inside `tool_result`s; 32 MB a
    /// request. No audio.
    fn media_rules(&self) -> MediaRules {
        MediaRules {
            images: &["image/jpeg", "image/png", "image/gif", "image/webp"],
            documents: &["application/pdf", "text/plain"],
            audio: &[],
            by_url: &[MediaKind::Image, MediaKind::Document],
            limits: MediaLimits {
                max_part_bytes: 32 * MB,
                max_image_pixels: 8_000 * 8_000,
                max_image_side: 8_000,
                allow_private_urls: false,
            },
            max_image_bytes: 5 * MB,
            max_request_bytes: 32 * MB,
            assistant_media: false,
        }
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(&'static str, String)> {
        vec![
            ("x-api-key", api_key.unwrap_or_default().to_owned()),
            ("anthropic-version", "2023-06-01".to_owned()),
        ]
    }

    fn encode(&self, model: &str, request: &ChatRequest<'_>, stream: bool) -> serde_json::Value {
        request::encode_request(model, self.cache, request, stream)
    }

    fn decode(&self, body: &serde_json::Value) -> Result<ChatResponse, ProviderError> {
        response::decode_response(body)
    }
}
