//! [`OwnedRequest`]: a [`ChatRequest`] copied out of the caller's borrows, so that a streamed
//! failover can ask a later provider after the caller's request is gone.

use agent_core::schema::ToolDefinition;

use crate::message::{ChatRequest, Message, ResponseSchema, ThinkingConfig, ToolChoice};

/// Everything a [`ChatRequest`] says, owned. Both conversions name every field, so a field
/// added to [`ChatRequest`] does not compile until it is carried here too.
pub(super) struct OwnedRequest {
    system: Option<String>,
    messages: Vec<Message>,
    tools: Vec<ToolDefinition>,
    tool_choice: ToolChoice,
    parallel_tool_calls: bool,
    max_tokens: u32,
    temperature: Option<f32>,
    stop_sequences: Vec<String>,
    thinking: Option<ThinkingConfig>,
    response_schema: Option<ResponseSchema>,
    cache_key: Option<String>,
    wait_when_busy: bool,
}

impl OwnedRequest {
    /// A copy of `request` (media parts are shared, not copied).
    pub(super) fn of(request: &ChatRequest<'_>) -> Self {
        let ChatRequest {
            system,
            messages,
            tools,
            tool_choice,
            parallel_tool_calls,
            max_tokens,
            temperature,
            stop_sequences,
            thinking,
            response_schema,
            cache_key,
            wait_when_busy,
        } = request;
        OwnedRequest {
            system: system.map(str::to_owned),
            messages: messages.to_vec(),
            tools: tools.to_vec(),
            tool_choice: tool_choice.clone(),
            parallel_tool_calls: *parallel_tool_calls,
            max_tokens: *max_tokens,
            temperature: *temperature,
            stop_sequences: stop_sequences.to_vec(),
            thinking: *thinking,
            response_schema: response_schema.cloned(),
            cache_key: cache_key.map(str::to_owned),
            wait_when_busy: *wait_when_busy,
        }
    }

    /// The request again, borrowing this copy.
    pub(super) fn request(&self) -> ChatRequest<'_> {
        ChatRequest {
            system: self.system.as_deref(),
            messages: &self.messages,
            tools: &self.tools,
            tool_choice: self.tool_choice.clone(),
            parallel_tool_calls: self.parallel_tool_calls,
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            stop_sequences: &self.stop_sequences,
            thinking: self.thinking,
            response_schema: self.response_schema.as_ref(),
            cache_key: self.cache_key.as_deref(),
            wait_when_busy: self.wait_when_busy,
        }
    }
}
