//! The provider-neutral conversation: [`Message`]s, what is asked of a model ([`ChatRequest`]) and
//! what comes back ([`ChatResponse`], [`StopReason`], [`Usage`]).
//!
//! Each provider translates these to its wire format and back. The types carry everything both
//! wire formats need to round-trip a conversation faithfully: the tool calls of an assistant turn,
//! one [`Role::Tool`] message per tool result (an Anthropic request groups consecutive ones into a
//! single user message), and Anthropic thinking blocks with their signatures, echoed back unchanged.
//!
//! ```
//! use agent_core::{ToolCall, ToolResult, SkillOutput};
//! use agent_llm::{ChatRequest, Message};
//!
//! let call = ToolCall::new("call_1", "read_file", serde_json::json!({"path": "Cargo.toml"}));
//! let transcript = vec![
//!     Message::user("Which edition does Cargo.toml use?"),
//!     Message::assistant_with_tool_calls("Let me look.", vec![call.clone()]),
//!     Message::tool_result(&ToolResult::new(&call, Ok(SkillOutput::from("edition = \"2024\"")))),
//! ];
//! let request = ChatRequest::new(&transcript).system("Answer briefly.").max_tokens(512);
//! assert_eq!(request.messages.len(), 3);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_core::call::{SharedStr, ToolCall, ToolResult};
use agent_core::content::{Media, Part};
use agent_core::schema::ToolDefinition;
use agent_core::skill::SkillOutput;

pub use crate::usage::Usage;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions. Usually given as [`ChatRequest::system`]; a system message in the transcript
    /// is sent where the wire format allows it (Anthropic: appended to the system prompt).
    System,
    /// The person (or program) the agent works for.
    User,
    /// The model.
    Assistant,
    /// The result of one tool call.
    Tool,
}

/// A block of the model's reasoning, kept so it can be sent back unchanged (Anthropic requires the
/// signature to match when thinking is enabled and tools are used).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Thinking {
    /// Visible reasoning with its signature.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The provider's signature over it.
        signature: String,
    },
    /// Reasoning the provider encrypted.
    RedactedThinking {
        /// Opaque data, sent back as is.
        data: String,
    },
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// Its text (for a tool message, the result's text): the first part of the message.
    pub content: String,
    /// What follows the text, in order: images, documents, audio, and more text between them
    /// (see [`agent_core::content`]). Empty for a text-only message, and then not written, so a
    /// text-only transcript is stored as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// For an assistant message: the tool calls it made, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the id of the call it answers (shared with the call and its result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<SharedStr>,
    /// For a tool message: whether the call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// For an assistant message: thinking blocks that came before its text, to echo back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<Thinking>,
    /// For an assistant message: what the provider that wrote it returned beside the text and
    /// calls and wants back on later turns, in its own form (see [`ProviderItem`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_items: Vec<ProviderItem>,
}

/// A part of an answer that has no provider-neutral form but must go back to the provider that
/// wrote it, unchanged, on later turns of the conversation: for example the OpenAI Responses
/// API's reasoning items (with their encrypted content), or the ids and order of the items an
/// answer was made of. Only the provider named reads it; every other provider leaves it out.
///
/// ```
/// use agent_llm::{Message, ProviderItem};
///
/// let mut answer = Message::assistant("Paris.");
/// answer.provider_items.push(ProviderItem::new(
///     "openai-responses",
///     serde_json::json!({"type": "reasoning", "id": "rs_1", "summary": []}),
/// ));
/// assert_eq!(answer.provider_items_of("openai-responses").count(), 1);
/// assert_eq!(answer.provider_items_of("anthropic").count(), 0);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderItem {
    /// The provider that wrote it, as [`LlmProvider::name`](crate::LlmProvider::name) says.
    pub provider: String,
    /// The item, in that provider's JSON.
    pub item: Value,
}

impl ProviderItem {
    /// An item of `provider`'s.
    pub fn new(provider: impl Into<String>, item: Value) -> Self {
        ProviderItem {
            provider: provider.into(),
            item,
        }
    }
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            parts: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            thinking: Vec::new(),
            provider_items: Vec::new(),
        }
    }

    /// The [`ProviderItem`]s that `provider` wrote, in order.
    pub fn provider_items_of<'m>(
        &'m self,
        provider: &'m str,
    ) -> impl Iterator<Item = &'m Value> + 'm {
        self.provider_items
            .iter()
            .filter(move |i| i.provider == provider)
            .map(|i| &i.item)
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::new(Role::User, content)
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::new(Role::Assistant, content)
    }

    /// An assistant message that makes tool calls.
    pub fn assistant_with_tool_calls(
        content: impl Into<String>,
        tool_calls: Vec<ToolCall>,
    ) -> Self {
        Message {
            tool_calls,
            ..Message::new(Role::Assistant, content)
        }
    }

    /// The message that carries a tool's result back to the model: its text (error messages
    /// included), its media, and whether it failed. The media is shared, not copied.
    pub fn tool_result(result: &ToolResult) -> Self {
        let (content, parts) = match &result.output {
            Ok(SkillOutput::Content(content)) => content.clone().into_leading_text(),
            _ => (result.content().into_owned(), Vec::new()),
        };
        Message {
            tool_call_id: Some(result.call_id.clone()),
            is_error: result.is_error(),
            parts,
            ..Message::new(Role::Tool, content)
        }
    }

    /// The same message with one more part at the end: an image, a document, a sound, or text.
    ///
    /// ```
    /// use agent_core::content::Media;
    /// use agent_llm::Message;
    ///
    /// let png = agent_core::content::tiny_png();
    /// let goal = Message::user("What is in this picture?").attach(Media::new("image/png", png));
    /// assert_eq!(goal.media().count(), 1);
    /// ```
    pub fn attach(mut self, part: impl Into<Part>) -> Self {
        self.parts.push(part.into());
        self
    }

    /// The message's media parts, in order.
    pub fn media(&self) -> impl Iterator<Item = &Media> {
        self.parts.iter().filter_map(Part::as_media)
    }

    /// The message's parts in order, its text first (when it has any).
    pub fn all_parts(&self) -> impl Iterator<Item = PartRef<'_>> {
        let text = (!self.content.is_empty()).then_some(PartRef::Text(&self.content));
        text.into_iter()
            .chain(self.parts.iter().map(|part| match part {
                Part::Text(text) => PartRef::Text(text),
                Part::Media(media) => PartRef::Media(media),
            }))
    }
}

/// A borrowed part of a [`Message`], as [`Message::all_parts`] yields them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PartRef<'a> {
    /// Text.
    Text(&'a str),
    /// Media.
    Media(&'a Media),
}

/// Which tools the model may or must call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call some tool.
    Required,
    /// The model must not call tools.
    None,
    /// The model must call this tool.
    Tool(String),
}

/// What is asked of a model. It borrows the transcript, so building a request never copies it.
#[derive(Debug, Clone)]
pub struct ChatRequest<'a> {
    /// The system prompt.
    pub system: Option<&'a str>,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The tools the model may call.
    pub tools: &'a [ToolDefinition],
    /// Which tools it may or must call.
    pub tool_choice: ToolChoice,
    /// Whether the model may call several tools in one turn.
    pub parallel_tool_calls: bool,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// Sampling temperature; `None` leaves the provider's default.
    pub temperature: Option<f32>,
    /// Texts that end the answer when generated.
    pub stop_sequences: &'a [String],
    /// Whether, and how much, the model should think before it answers; `None` leaves the
    /// provider's default (no thinking, for most models).
    pub thinking: Option<ThinkingConfig>,
    /// A JSON Schema the answer's text must follow (native structured output), for providers
    /// that [support it](crate::LlmProvider::supports_response_schema). The runtime sets it only
    /// on a turn that offers no tools: a response schema beside tools makes models skip them.
    pub response_schema: Option<&'a ResponseSchema>,
    /// A key naming the conversation this request continues, the same on each of its turns,
    /// sent as OpenAI's `prompt_cache_key` (Chat Completions and Responses) so its requests go
    /// where their common prefix is cached. The runtime sets one per run (per session, for a
    /// run kept in one); `None` sends none.
    pub cache_key: Option<&'a str>,
    /// Whether the provider may wait and ask again itself when the API is busy — rate limited
    /// or overloaded ([`ErrorClass::is_busy`](crate::ErrorClass::is_busy): 429, 503, 529) —
    /// as its retry policy says (`true`, the default), or must return the error at once
    /// (`false`): what a [`Failover`](crate::Failover) asks while another provider could take
    /// the request. The HTTP providers follow it; other failures are retried either way.
    pub wait_when_busy: bool,
}

/// A JSON Schema the model's answer must follow, sent as Anthropic's
/// `output_config.format` or OpenAI's `response_format: json_schema` (strict).
///
/// Gemini takes it as `responseSchema`, converted to the OpenAPI subset it reads (or, with
/// `GeminiProvider::with_json_schema`, as `responseJsonSchema`), with `responseMimeType:
/// application/json`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSchema {
    /// A name for the schema (OpenAI requires one: `^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// The schema, in strict form: every object closed (`additionalProperties: false`) and every
    /// property required, optional ones nullable, as both providers' constrained decoding wants.
    pub schema: Value,
}

/// How much a model should reason before it answers, in terms every provider can map.
///
/// | | Anthropic Messages | OpenAI-compatible Chat Completions |
/// |---|---|---|
/// | `Budget(n)` | `thinking: {type: "enabled", budget_tokens: n}` (at least 1,024; `max_tokens` is raised above it when needed) | `reasoning_effort`: `low` below 4,096 tokens, `medium` below 16,384, else `high` |
/// | `Adaptive(effort)` | `thinking: {type: "adaptive"}` with `output_config: {effort}` (the models that offer it) | `reasoning_effort: effort` |
///
/// Gemini: `Budget(n)` is `thinkingConfig: {thinkingBudget: n, includeThoughts: true}` (the
/// budget is added to `maxOutputTokens`, which counts thinking; 0 turns thinking off where the
/// model allows it), `Adaptive(effort)` is `thinkingLevel: effort` (Gemini 3), and its thought
/// summaries arrive as `ThinkingDelta`s too.
///
/// The thinking text arrives as [`StreamEvent::ThinkingDelta`](crate::StreamEvent::ThinkingDelta)
/// events and in [`Message::thinking`], never in the answer's text. Anthropic requires
/// automatic tool choice and the default temperature with thinking, so a request that thinks
/// sends neither a forced tool choice nor a temperature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThinkingConfig {
    /// Think with up to this many tokens.
    Budget(u32),
    /// Let the model decide how much to think, at this effort.
    Adaptive(Effort),
}

/// How hard a model should think: OpenAI's `reasoning_effort`, Anthropic's `effort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Effort {
    /// Quick answers, little reasoning.
    Low,
    /// The usual balance.
    Medium,
    /// The most reasoning the model offers.
    High,
}

impl Effort {
    /// The word both APIs use: `low`, `medium`, `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }
}

impl<'a> ChatRequest<'a> {
    /// A request for `messages` with no tools, automatic tool choice, parallel calls allowed and
    /// 4,096 tokens at most.
    pub fn new(messages: &'a [Message]) -> Self {
        ChatRequest {
            system: None,
            messages,
            tools: &[],
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: true,
            max_tokens: 4096,
            temperature: None,
            stop_sequences: &[],
            thinking: None,
            response_schema: None,
            cache_key: None,
            wait_when_busy: true,
        }
    }

    /// Sets the system prompt.
    pub fn system(mut self, system: &'a str) -> Self {
        self.system = Some(system);
        self
    }

    /// Sets the tools.
    pub fn tools(mut self, tools: &'a [ToolDefinition]) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the tool choice.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// Allows or forbids several tool calls in one turn.
    pub fn parallel_tool_calls(mut self, allowed: bool) -> Self {
        self.parallel_tool_calls = allowed;
        self
    }

    /// Sets the token limit of the answer.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the stop sequences.
    pub fn stop_sequences(mut self, stop: &'a [String]) -> Self {
        self.stop_sequences = stop;
        self
    }

    /// Asks the model to think first (see [`ThinkingConfig`]).
    pub fn thinking(mut self, thinking: ThinkingConfig) -> Self {
        self.thinking = Some(thinking);
        self
    }

    /// Asks for an answer that follows this schema (native structured output).
    pub fn response_schema(mut self, schema: &'a ResponseSchema) -> Self {
        self.response_schema = Some(schema);
        self
    }

    /// Names the conversation for the provider's prompt cache (see [`ChatRequest::cache_key`]).
    pub fn cache_key(mut self, key: &'a str) -> Self {
        self.cache_key = Some(key);
        self
    }

    /// Lets the provider wait out a busy API itself, or not (see
    /// [`ChatRequest::wait_when_busy`](ChatRequest#structfield.wait_when_busy)).
    pub fn wait_when_busy(mut self, wait: bool) -> Self {
        self.wait_when_busy = wait;
        self
    }
}

/// Why the model stopped, in words common to every provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It wants tools called.
    ToolUse,
    /// It ran into the token limit.
    MaxTokens,
    /// It generated a stop sequence.
    StopSequence(Option<String>),
    /// It refused, or a content filter stopped it.
    Refusal,
    /// Anything else, in the provider's words.
    Other(String),
}

/// A tool call the model had not finished writing when its answer was cut off (by the token limit).
/// It is never executed; the runtime tells the model instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncatedToolCall {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments text received before the cut.
    pub partial_arguments: String,
}

/// A model's answer. `Serialize + Deserialize`, so a durable run can journal it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant message: text, complete tool calls, thinking.
    pub message: Message,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// Why the model stopped in the provider's own word, when it gave one (`end_turn`, `length`,
    /// `SAFETY`, `RECITATION`): what [`ChatResponse::stop_reason`] was mapped from, kept because
    /// the mapping joins several (every content filter is [`StopReason::Refusal`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_stop_reason: Option<String>,
    /// Tokens used.
    pub usage: Usage,
    /// Tool calls cut off before they were complete; never executed.
    pub truncated_tool_calls: Vec<TruncatedToolCall>,
    /// The model that answered, when the provider says.
    pub model: Option<String>,
    /// The provider that answered, as its [`LlmProvider::name`](crate::LlmProvider::name)
    /// says, when the provider asked stands for others (a [`Failover`](crate::Failover) sets
    /// it); `None`: the provider asked answered itself. Not written when `None`, so answers
    /// journaled or recorded before it read and write as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The provider's id of the answer, when it gives one.
    pub id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journals_written_before_reasoning_tokens_and_provider_items_still_read() {
        let usage: Usage = serde_json::from_value(serde_json::json!({
            "input_tokens": 3, "output_tokens": 2, "cache_read_tokens": 1, "cache_write_tokens": 0
        }))
        .unwrap();
        assert_eq!((usage.reasoning_tokens, usage.total()), (0, 6));
        let message: Message =
            serde_json::from_value(serde_json::json!({"role": "assistant", "content": "hi"}))
                .unwrap();
        assert!(message.provider_items.is_empty());
        let response: ChatResponse = serde_json::from_value(serde_json::json!({
            "message": {"role": "assistant", "content": "hi"}, "stop_reason": "EndTurn",
            "usage": usage, "truncated_tool_calls": [], "model": null, "id": null
        }))
        .unwrap();
        assert_eq!(
            (&response.provider_stop_reason, &response.provider),
            (&None, &None)
        );
        let written = serde_json::to_string(&response).unwrap();
        assert!(
            !written.contains("provider_stop_reason") && !written.contains("\"provider\""),
            "an answer without them is written as before: {written}"
        );
        // And a message without provider items is written as before.
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            serde_json::json!({"role": "assistant", "content": "hi"})
        );
    }

    #[test]
    fn reasoning_tokens_add_up_but_are_not_counted_twice_in_the_total() {
        let mut usage = Usage {
            output_tokens: 10,
            reasoning_tokens: 8,
            ..Usage::default()
        };
        usage += usage;
        assert_eq!((usage.reasoning_tokens, usage.total()), (16, 20));
    }
}
