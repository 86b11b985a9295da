//! What a skill asks the client's model ([`ConnectedClient::sample`]): a [`CompletionRequest`]
//! (text messages, with images and audio attached as MCP sampling allows), answered with a
//! [`Completion`].
//!
//! [`ConnectedClient::sample`]: super::ConnectedClient::sample

#![allow(deprecated)] // rmcp marks sampling deprecated (SEP-2577); protocol 2025-11-25 has it.

use agent_core::SkillError;
use agent_core::content::{Media, MediaKind};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{CreateMessageRequestParams, Role};
use serde_json::{Value, json};

/// Server side: a request for one completion of the client's model (`sampling/createMessage`),
/// built a message at a time and sent with
/// [`ConnectedClient::sample`](super::ConnectedClient::sample) (the client side's view of
/// such a request is [`client::SamplingRequest`](crate::client::SamplingRequest)).
///
/// ```
/// use agent_mcp::server::CompletionRequest;
///
/// let request = CompletionRequest::new(200)
///     .system("Answer in one word.")
///     .user("What colour is the sky?")
///     .temperature(0.0);
/// assert_eq!(request.max_tokens(), 200);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    messages: Vec<(Role, String, Vec<Media>)>,
    system: Option<String>,
    max_tokens: u32,
    temperature: Option<f32>,
}

impl CompletionRequest {
    /// A request with no messages yet, for at most `max_tokens` tokens.
    pub fn new(max_tokens: u32) -> Self {
        CompletionRequest {
            messages: Vec::new(),
            system: None,
            max_tokens,
            temperature: None,
        }
    }

    /// Adds a message of the user.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push((Role::User, text.into(), Vec::new()));
        self
    }

    /// Adds a message of the assistant (an earlier answer).
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages
            .push((Role::Assistant, text.into(), Vec::new()));
        self
    }

    /// Attaches an image or a sound to the last message, after its text (MCP sampling carries
    /// images and audio, as base64; a request with other media, or media at a URL, is refused
    /// when sent). Without a message yet, it starts a user message without text.
    ///
    /// ```
    /// use agent_core::content::Media;
    /// use agent_mcp::server::CompletionRequest;
    ///
    /// let chart = Media::new("image/png", agent_core::content::tiny_png());
    /// let request = CompletionRequest::new(100).user("What does this chart show?").attach(chart);
    /// # let _ = request;
    /// ```
    pub fn attach(mut self, media: Media) -> Self {
        match self.messages.last_mut() {
            Some((_, _, attached)) => attached.push(media),
            None => self.messages.push((Role::User, String::new(), vec![media])),
        }
        self
    }

    /// Sets the system prompt (the client may ignore or change it, as the spec allows).
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.system = Some(text.into());
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The most tokens the answer may have.
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens
    }

    /// The request as rmcp sends it.
    pub(crate) fn to_params(&self) -> Result<CreateMessageRequestParams, SkillError> {
        if self.messages.is_empty() {
            return Err(SkillError::tool(
                "a sampling request needs at least one message (CompletionRequest::user)",
            ));
        }
        let messages = self
            .messages
            .iter()
            .map(|(role, text, media)| {
                if media.is_empty() {
                    return Ok(json!({"role": role, "content": {"type": "text", "text": text}}));
                }
                let mut blocks = Vec::with_capacity(media.len() + 1);
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for media in media {
                    blocks.push(sampling_block(media)?);
                }
                Ok(json!({"role": role, "content": blocks}))
            })
            .collect::<Result<Vec<Value>, SkillError>>()?;
        let mut params = json!({"messages": messages, "maxTokens": self.max_tokens});
        if let Some(system) = &self.system {
            params["systemPrompt"] = Value::from(system.as_str());
        }
        if let Some(temperature) = self.temperature {
            params["temperature"] = Value::from(temperature);
        }
        serde_json::from_value(params)
            .map_err(|e| SkillError::tool(format!("the sampling request is not valid: {e}")))
    }
}

/// An image or a sound as a sampling message's content block.
fn sampling_block(media: &Media) -> Result<Value, SkillError> {
    let kind = match media.kind() {
        MediaKind::Image => "image",
        MediaKind::Audio => "audio",
        MediaKind::Document => {
            return Err(SkillError::tool(format!(
                "a sampling request carries images and audio, not {}",
                media.describe()
            )));
        }
    };
    let Some(bytes) = media.bytes() else {
        return Err(SkillError::tool(format!(
            "a sampling request carries media as bytes, not at a URL ({})",
            media.describe()
        )));
    };
    Ok(json!({"type": kind, "data": STANDARD.encode(bytes), "mimeType": &*media.media_type}))
}

/// Server side: the client's model's answer to a [`CompletionRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The model the client used, as it names it.
    pub model: String,
    /// The text of the answer (empty when it holds no text, an image say).
    pub text: String,
    /// Why generation stopped (`endTurn`, `maxTokens`, ...), if the client said.
    pub stop_reason: Option<String>,
}
