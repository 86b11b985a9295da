//! A server's `sampling/createMessage`, answered by the application's model: [`Sampling`] (the
//! provider and the [`SamplingHook`] that allows, denies or edits each request), and what a
//! request and its answer become on either side.

#![allow(deprecated)] // sampling is deprecated by SEP-2577, and still what servers send

use std::sync::{Arc, Mutex, PoisonError};

use agent_core::content::{Content, Media, MediaLimits, Part};
use agent_llm::{
    ChatRequest, LlmProvider, Message, ModelUseReporter, Role as LlmRole, StopReason, Usage,
};
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ErrorData, Role, SamplingContent,
    SamplingMessage, SamplingMessageContentBlock,
};

use crate::media::is_model_type;

/// The most messages one sampling request may carry.
pub const MAX_SAMPLING_MESSAGES: usize = 64;

/// The most bytes of text one sampling request may carry, all messages and the system prompt.
pub const MAX_SAMPLING_BYTES: usize = 256 * 1024;

/// The most base64 characters of images and audio one sampling request may carry, all messages
/// together (each part is bounded by [`Sampling::media_limits`] too); counted before anything is
/// decoded.
pub const MAX_SAMPLING_MEDIA_BASE64: usize = 32 * 1024 * 1024;

/// Client side: a server's request for a completion of the application's model, as the
/// [`SamplingHook`] sees it (and may change it); the server side's request to a client is
/// [`server::CompletionRequest`](crate::server::CompletionRequest). Each message's text, and the images and audio the server sent as its
/// [`parts`](Message::parts), decoded and checked ([`crate::media`], against
/// [`Sampling::media_limits`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The system prompt the server asked for.
    pub system: Option<String>,
    /// The conversation, user and assistant messages.
    pub messages: Vec<Message>,
    /// The most tokens the answer may have (the server's number, at most
    /// [`Sampling::max_tokens`]).
    pub max_tokens: u32,
    /// The temperature the server asked for.
    pub temperature: Option<f32>,
    /// Texts that end the answer.
    pub stop_sequences: Vec<String>,
}

/// Client side: what a [`SamplingHook`] says about one request from a server.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingVerdict {
    /// Ask the model, as the server asked.
    Allow,
    /// Do not ask the model; the server gets an error with this reason.
    Deny(String),
    /// Ask the model this instead (a system prompt of one's own, fewer tokens, ...).
    Edit(SamplingRequest),
    /// Ask a person first: the tool call that made the request suspends, and its run pauses
    /// with a pending call named [`SAMPLING_CALL`] that shows the request and this reason.
    /// `Decision::Approve` lets the model answer it; `Decision::Deny(reason)` refuses it. A
    /// request that comes with no call waiting on the server (or in a multi-round-trip
    /// `input_required` result) is refused instead, saying a person was to be asked.
    Ask(String),
}

/// The name a pending sampling request's [`PendingCall::call`](agent_core::PendingCall::call)
/// carries; its arguments are the request (`system`, `messages`, `max_tokens`).
pub const SAMPLING_CALL: &str = "sampling/createMessage";

/// Client side: decides on each of a server's sampling requests before the model sees it. Any
/// `Fn(&str, &SamplingRequest) -> SamplingVerdict` is one; the `&str` is the server's label.
pub trait SamplingHook: Send + Sync {
    /// The verdict on `request` from the server `server`.
    fn review(&self, server: &str, request: &SamplingRequest) -> SamplingVerdict;
}

impl<F> SamplingHook for F
where
    F: Fn(&str, &SamplingRequest) -> SamplingVerdict + Send + Sync,
{
    fn review(&self, server: &str, request: &SamplingRequest) -> SamplingVerdict {
        self(server, request)
    }
}

/// Client side: how a server's sampling requests are answered: by `provider`, after `hook`
/// allowed them.
/// Give it to [`McpSkills::with_sampling`](super::McpSkills::with_sampling); without it every
/// request is refused.
#[derive(Clone)]
pub struct Sampling {
    provider: Arc<dyn LlmProvider>,
    hook: Arc<dyn SamplingHook>,
    max_tokens: u32,
    media_limits: MediaLimits,
}

impl Sampling {
    /// Requests go to `provider` after a person approved each: the hook asks
    /// ([`SamplingVerdict::Ask`]) every time. The default to reach for: a server's prompt is
    /// spent on the application's model and account only with someone's yes.
    pub fn asking(provider: Arc<dyn LlmProvider>) -> Self {
        Sampling::new(provider, |server: &str, _: &SamplingRequest| {
            SamplingVerdict::Ask(format!("the MCP server {server} asks to use your model"))
        })
    }

    /// Requests go to `provider` when `hook` allows them.
    pub fn new(provider: Arc<dyn LlmProvider>, hook: impl SamplingHook + 'static) -> Self {
        Sampling {
            provider,
            hook: Arc::new(hook),
            max_tokens: 4096,
            media_limits: MediaLimits::default(),
        }
    }

    /// The most tokens an answer may have, whatever the server asks (4,096 by default).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// What the images and audio of a request are checked against before the hook or the model
    /// sees them ([`MediaLimits::default`] unless set); a request with one part refused is
    /// refused whole.
    pub fn media_limits(mut self, limits: MediaLimits) -> Self {
        self.media_limits = limits;
        self
    }
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling")
            .field("provider", &self.provider.name())
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

/// The sampling settings of one connection and the tokens its answers used.
#[derive(Default)]
pub(super) struct SamplingState {
    pub(super) sampling: Mutex<Option<Sampling>>,
    pub(super) usage: Mutex<Usage>,
    pub(super) answered: Mutex<u64>,
}

impl SamplingState {
    pub(super) fn set(&self, sampling: Option<Sampling>) {
        *self.sampling.lock().unwrap_or_else(PoisonError::into_inner) = sampling;
    }

    pub(super) fn usage(&self) -> (Usage, u64) {
        (
            *self.usage.lock().unwrap_or_else(PoisonError::into_inner),
            *self.answered.lock().unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Answers one request that no person can be asked about: refused unless configured and
    /// allowed (a request the hook would ask a person about is refused, saying so).
    pub(super) async fn answer(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
        model_use: Option<&ModelUseReporter>,
    ) -> Result<CreateMessageResult, ErrorData> {
        match self.review(server, &params)? {
            Reviewed::Ready(sampling, request) => {
                self.complete(&sampling, server, request, model_use).await
            }
            Reviewed::Ask { reason, .. } => {
                tracing::info!(server, %reason, "refused a sampling request no one can be asked about");
                Err(refused(&format!(
                    "the client asks a person about each sampling request ({reason}), and none could be asked about this one"
                )))
            }
        }
    }

    /// What the hook says about one request: refused (an error for the server), ready for the
    /// model, or to be asked about.
    pub(super) fn review(
        &self,
        server: &str,
        params: &CreateMessageRequestParams,
    ) -> Result<Reviewed, ErrorData> {
        let sampling = self
            .sampling
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(sampling) = sampling else {
            tracing::info!(
                server,
                "refused a sampling request: sampling is not configured"
            );
            return Err(refused(
                "this client answers sampling requests only when the application configured a model for them (McpSkills::with_sampling)",
            ));
        };
        let request =
            from_params(params, sampling.max_tokens, &sampling.media_limits).map_err(|why| {
                ErrorData::invalid_params(format!("sampling request refused: {why}"), None)
            })?;
        match sampling.hook.review(server, &request) {
            SamplingVerdict::Allow => Ok(Reviewed::Ready(sampling, request)),
            SamplingVerdict::Deny(reason) => {
                tracing::info!(server, %reason, "a sampling hook denied a request");
                Err(refused(&format!("the client denied it: {reason}")))
            }
            SamplingVerdict::Edit(edited) => {
                let max_tokens = edited.max_tokens.min(sampling.max_tokens);
                Ok(Reviewed::Ready(
                    sampling,
                    SamplingRequest {
                        max_tokens,
                        ..edited
                    },
                ))
            }
            SamplingVerdict::Ask(reason) => Ok(Reviewed::Ask {
                sampling,
                request,
                reason,
            }),
        }
    }

    /// Asks the model `request`: its tokens are added to this connection's count, reported as
    /// a `tracing` event, and to `model_use` (the run of the call the request came with), priced
    /// at the run's prices, under [`sampling_source`].
    pub(super) async fn complete(
        &self,
        sampling: &Sampling,
        server: &str,
        request: SamplingRequest,
        model_use: Option<&ModelUseReporter>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let mut chat = ChatRequest::new(&request.messages);
        chat.system = request.system.as_deref();
        chat.max_tokens = request.max_tokens;
        chat.temperature = request.temperature;
        chat.stop_sequences = &request.stop_sequences;
        let response = sampling.provider.complete(&chat).await.map_err(|e| {
            tracing::warn!(server, error = %e, "the model failed a sampling request");
            ErrorData::internal_error(format!("the client's model failed: {e}"), None)
        })?;
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner) += response.usage;
        *self.answered.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        tracing::info!(
            server,
            provider = sampling.provider.name(),
            input_tokens = response.usage.input_tokens,
            output_tokens = response.usage.output_tokens,
            "answered a sampling request"
        );
        if let Some(reporter) = model_use {
            let provider = sampling.provider.name();
            let priced_as = response.model.as_deref().or(sampling.provider.model());
            let cost = reporter.cost(provider, priced_as, &response.usage);
            reporter.report(&sampling_source(server), response.usage, cost);
        }
        let model = response
            .model
            .clone()
            .or_else(|| sampling.provider.model().map(str::to_owned))
            .unwrap_or_else(|| sampling.provider.name().to_owned());
        let stop = match response.stop_reason {
            StopReason::MaxTokens => CreateMessageResult::STOP_REASON_END_MAX_TOKEN,
            StopReason::StopSequence(_) => CreateMessageResult::STOP_REASON_END_SEQUENCE,
            _ => CreateMessageResult::STOP_REASON_END_TURN,
        };
        Ok(CreateMessageResult::new(
            SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::text(response.message.content),
            ),
            model,
        )
        .with_stop_reason(stop))
    }
}

/// The source the sampling requests of the server labelled `server` are reported under
/// ([`agent_llm::report_model_use`]), and so the key of their tokens in a run's
/// `RunOutcome::agents` (agent-runtime): `mcp sampling › SERVER`.
pub fn sampling_source(server: &str) -> String {
    format!("mcp sampling › {server}")
}

/// The pending call a paused run lists for a sampling request a person is asked about, made
/// by the skill `skill` of the server `server`; `problem` says why a decision was refused.
pub(super) fn pending_sampling(
    id: &str,
    skill: &str,
    server: &str,
    request: &SamplingRequest,
    reason: &str,
    problem: Option<&str>,
) -> agent_core::PendingCall {
    let messages: Vec<serde_json::Value> = request
        .messages
        .iter()
        .map(|m| {
            let role = if m.role == LlmRole::Assistant {
                "assistant"
            } else {
                "user"
            };
            let media: Vec<String> = m.media().map(Media::describe).collect();
            if media.is_empty() {
                serde_json::json!({"role": role, "content": m.content})
            } else {
                serde_json::json!({"role": role, "content": m.content, "media": media})
            }
        })
        .collect();
    let arguments = serde_json::json!({
        "system": request.system,
        "messages": messages,
        "max_tokens": request.max_tokens,
    });
    let mut reason = format!(
        "{reason} (sampling/createMessage from {server}); approve to let the model answer, deny to refuse"
    );
    if let Some(problem) = problem {
        reason = format!("your answer was not sent ({problem}); answer again: {reason}");
    }
    agent_core::PendingCall {
        call: agent_core::ToolCall::new(id, SAMPLING_CALL, arguments),
        skill: skill.to_owned(),
        is_read_only: true,
        is_destructive: false,
        reason,
        via: Vec::new(),
    }
}

/// What the hook said about a request that was not refused.
pub(super) enum Reviewed {
    /// Ask the model this.
    Ready(Sampling, SamplingRequest),
    /// Ask a person first.
    Ask {
        sampling: Sampling,
        request: SamplingRequest,
        reason: String,
    },
}

/// The error a refused request gets.
pub(super) fn refused(reason: &str) -> ErrorData {
    ErrorData::invalid_request(format!("sampling request refused: {reason}"), None)
}

/// The request as the hook and the model see it, bounded.
fn from_params(
    params: &CreateMessageRequestParams,
    max_tokens: u32,
    limits: &MediaLimits,
) -> Result<SamplingRequest, String> {
    if params.messages.len() > MAX_SAMPLING_MESSAGES {
        return Err(format!(
            "it has {} messages, over the limit of {MAX_SAMPLING_MESSAGES}",
            params.messages.len()
        ));
    }
    let base64: usize = params
        .messages
        .iter()
        .flat_map(|message| blocks_of(&message.content))
        .map(|block: &SamplingMessageContentBlock| match block {
            SamplingMessageContentBlock::Image(image) => image.data.len(),
            SamplingMessageContentBlock::Audio(audio) => audio.data.len(),
            _ => 0,
        })
        .sum();
    if base64 > MAX_SAMPLING_MEDIA_BASE64 {
        return Err(format!(
            "its images and audio are {base64} characters of base64, over the limit of {MAX_SAMPLING_MEDIA_BASE64}"
        ));
    }
    let mut bytes = params.system_prompt.as_deref().map_or(0, str::len);
    let mut messages = Vec::with_capacity(params.messages.len());
    for message in &params.messages {
        let (text, parts) = content_of(blocks_of(&message.content), limits)?;
        bytes += text.len();
        if bytes > MAX_SAMPLING_BYTES {
            return Err(format!(
                "its text is over the limit of {MAX_SAMPLING_BYTES} bytes"
            ));
        }
        let mut message = match message.role {
            Role::Assistant => Message::assistant(text),
            _ => Message::user(text),
        };
        message.parts = parts;
        messages.push(message);
    }
    debug_assert!(messages.iter().all(|m| m.role != LlmRole::Tool));
    Ok(SamplingRequest {
        system: params.system_prompt.clone(),
        messages,
        max_tokens: params.max_tokens.min(max_tokens),
        temperature: params.temperature,
        stop_sequences: params.stop_sequences.clone().unwrap_or_default(),
    })
}

/// A message's blocks, one or several.
fn blocks_of(
    content: &SamplingContent<SamplingMessageContentBlock>,
) -> &[SamplingMessageContentBlock] {
    match content {
        SamplingContent::Single(block) => std::slice::from_ref(block),
        SamplingContent::Multiple(blocks) => blocks,
    }
}

/// A message's blocks as its text (before its first image or sound) and its parts; the media
/// decoded and checked.
fn content_of(
    blocks: &[SamplingMessageContentBlock],
    limits: &MediaLimits,
) -> Result<(String, Vec<Part>), String> {
    let mut content = Content::default();
    for block in blocks {
        let part = match block {
            SamplingMessageContentBlock::Text(text) => Part::Text(text.text.clone()),
            SamplingMessageContentBlock::Image(image) if !is_model_type(&image.mime_type) => {
                Part::Text(format!(
                    "[image: {}, of a type models do not take]",
                    image.mime_type
                ))
            }
            SamplingMessageContentBlock::Image(image) => Part::Media(
                Media::from_base64(image.mime_type.as_str(), &image.data, limits)
                    .map_err(|e| e.to_string())?,
            ),
            SamplingMessageContentBlock::Audio(audio) => Part::Media(
                Media::from_base64(audio.mime_type.as_str(), &audio.data, limits)
                    .map_err(|e| e.to_string())?,
            ),
            _ => {
                Part::Text("[content of a kind this client does not send to its model]".to_owned())
            }
        };
        content = content.with(part);
    }
    Ok(content.into_leading_text())
}
