//! What a skill asks the client's model ([`ConnectedClient::sample`]): a [`SampleRequest`],
//! answered with a [`SampleAnswer`].
//!
//! [`ConnectedClient::sample`]: super::ConnectedClient::sample

#![allow(deprecated)] // rmcp marks sampling deprecated (SEP-2577); protocol 2025-11-25 has it.

use agent_core::SkillError;
use rmcp::model::{CreateMessageRequestParams, Role};
use serde_json::{Value, json};

/// A request for one completion of the client's model (`sampling/createMessage`), built a
/// message at a time.
///
/// ```
/// use agent_mcp::server::SampleRequest;
///
/// let request = SampleRequest::new(200)
///     .system("Answer in one word.")
///     .user("What colour is the sky?")
///     .temperature(0.0);
/// assert_eq!(request.max_tokens(), 200);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRequest {
    messages: Vec<(Role, String)>,
    system: Option<String>,
    max_tokens: u32,
    temperature: Option<f32>,
}

impl SampleRequest {
    /// A request with no messages yet, for at most `max_tokens` tokens.
    pub fn new(max_tokens: u32) -> Self {
        SampleRequest {
            messages: Vec::new(),
            system: None,
            max_tokens,
            temperature: None,
        }
    }

    /// Adds a message of the user.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push((Role::User, text.into()));
        self
    }

    /// Adds a message of the assistant (an earlier answer).
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages.push((Role::Assistant, text.into()));
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
                "a sampling request needs at least one message (SampleRequest::user)",
            ));
        }
        let messages: Vec<Value> = self
            .messages
            .iter()
            .map(|(role, text)| json!({"role": role, "content": {"type": "text", "text": text}}))
            .collect();
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

/// The client's model's answer to a [`SampleRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct SampleAnswer {
    /// The model the client used, as it names it.
    pub model: String,
    /// The text of the answer (empty when it holds no text, an image say).
    pub text: String,
    /// Why generation stopped (`endTurn`, `maxTokens`, ...), if the client said.
    pub stop_reason: Option<String>,
}
