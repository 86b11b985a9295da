//! Asking the connected client: a skill served over MCP asks the client's user for input
//! (elicitation, `elicitation/create`) or the client's model for a completion (sampling,
//! `sampling/createMessage`) through [`client_of`].
//!
//! ```
//! use agent_core::{SkillContext, SkillError};
//! use agent_mcp::server::{ClientAnswer, client_of};
//! use serde_json::json;
//!
//! /// Greets a person by the name they give.
//! async fn greet(ctx: &SkillContext) -> Result<String, SkillError> {
//!     let schema = json!({
//!         "type": "object",
//!         "properties": {"name": {"type": "string", "description": "Your name"}},
//!         "required": ["name"]
//!     });
//!     match client_of(ctx)?.elicit("Who are you?", schema).await? {
//!         ClientAnswer::Accept(content) => Ok(format!("hello, {}", content["name"])),
//!         ClientAnswer::Decline => Ok("you did not say".into()),
//!         ClientAnswer::Cancel => Err(SkillError::Cancelled),
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // Outside an MCP server's call there is no client to ask:
//! let error = greet(&SkillContext::default()).await.unwrap_err();
//! assert!(error.to_string().contains("not running as a call of an MCP server"));
//! # });
//! ```
//!
//! Design: the server puts a [`ConnectedClient`] in the [`SkillContext`] of every `tools/call`
//! as an extension ([`SkillContext::with_extension`]), so agent-core knows nothing of MCP and a
//! skill that never asks pays nothing. The type is agent-mcp's own rather than a trait in
//! agent-core: only an MCP connection can answer these requests, and a skill that asks is
//! written for MCP clients (it names an MCP form schema and MCP's answers).
//!
//! What it promises:
//!
//! - **Capabilities**: a client that did not declare `elicitation` (form mode) or `sampling`
//!   in `initialize` is not asked; the skill gets a [`SkillError`] saying which capability is
//!   missing. So does a skill run outside a server's `tools/call` ([`McpServer::call`], an
//!   agent run, a test).
//! - **Bounded**: the client has [`McpServer::client_request_timeout`]
//!   ([`DEFAULT_CLIENT_REQUEST_TIMEOUT`], five minutes, since a person answers) to answer;
//!   past it the skill gets [`SkillError::Timeout`] and the client `notifications/cancelled`.
//! - **Cancelled with the call**: when the client cancels the `tools/call`, the server's token
//!   ([`SkillContext::cancellation`]) fires, the call's timeout passes, or the skill stops
//!   waiting for any other reason (the future is dropped), the client is sent
//!   `notifications/cancelled` for the outstanding request, so its form or model call is
//!   withdrawn.
//! - **Decline and cancel** reach the skill as [`ClientAnswer::Decline`] and
//!   [`ClientAnswer::Cancel`]; it decides what they mean.
//! - **Accepted content** is an object holding every property the schema requires; anything
//!   else is an error naming what is missing (the client is the one that validates values
//!   against the schema, as the spec says).
//! - **URL mode** ([`ConnectedClient::elicit_url`]): only to a client that declared
//!   `elicitation.url`; only `http`/`https` URLs without credentials, at most
//!   [`MAX_ELICITATION_URL_BYTES`](super::MAX_ELICITATION_URL_BYTES), with an id of at most [`MAX_ELICITATION_ID_BYTES`]; anything
//!   else is a tool error and the client is not asked. The answer says whether the person
//!   agreed to go, nothing of what they did there. The completion notification
//!   ([`ConnectedClient::elicitation_complete`]) is the skill's to send: the server cannot know
//!   when an interaction it does not see is done.
//! - **In a task** ([`super::tasks`]) the asks are not sent to the client: the task becomes
//!   `input_required` with the request in `inputRequests`, and the client's `tasks/update`
//!   answers it (same timeout; withdrawn when the task is cancelled). A request the skill stopped
//!   waiting for (timed out) may still be listed until the task ends: rmcp's task store keeps it.
//! - Over streamable HTTP the request travels on the event stream of the `tools/call` POST,
//!   so it needs no separate `GET` stream. Protocol `2026-07-28` forbids server-to-client
//!   requests; a client that negotiated it gets the error rmcp gives, as a tool error.
//!
//! [`McpServer`]: super::McpServer
//! [`McpServer::call`]: super::McpServer::call
//! [`McpServer::client_request_timeout`]: super::McpServer::client_request_timeout

#![allow(deprecated)] // rmcp marks sampling deprecated (SEP-2577); protocol 2025-11-25 has it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_core::{SkillContext, SkillError};
use rmcp::model::GetExtensions;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, CreateMessageRequest, CreateMessageResult,
    CustomNotification, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    InputRequest, RequestId, SamplingMessageContentBlock, ServerNotification, ServerRequest,
};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions};
use rmcp::task_manager::TaskContext;
use rmcp::{Peer, RoleServer};

use super::sampling::{Completion, CompletionRequest};
use super::url_elicitation::{ClientUrlAnswer, MAX_ELICITATION_ID_BYTES, checked_url};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// How long the client has to answer an elicitation or a sampling request unless
/// [`McpServer::client_request_timeout`](super::McpServer::client_request_timeout) says
/// otherwise: five minutes, since a person may be filling in a form.
pub const DEFAULT_CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// Server side: the client of the MCP connection a call came from, as a skill sees it: see the
/// [module docs](self). Got with [`client_of`].
#[derive(Clone)]
pub struct ConnectedClient {
    peer: Peer<RoleServer>,
    call: RequestId,
    cancelled: CancellationToken,
    timeout: Duration,
    /// Set when the call runs as an MCP task: asks become the task's `inputRequests`.
    task: Option<TaskContext>,
    /// Numbers the task's input requests (their keys must be unique over the task).
    asked: Arc<AtomicU64>,
}

/// The client that made the call `ctx` belongs to, to ask it for input or a completion; an
/// error when the skill is not running as a call of an MCP server.
pub fn client_of(ctx: &SkillContext) -> Result<&ConnectedClient, SkillError> {
    ctx.extension::<ConnectedClient>().ok_or_else(|| {
        SkillError::tool(
            "this skill asks the MCP client for input, but it is not running as a call of an \
             MCP server, so there is no client to ask",
        )
    })
}

/// Server side: what the client's user answered to a form a skill sent with
/// [`ConnectedClient::elicit`] (the client side's answer to a server's question is
/// [`client::ElicitationAnswer`](crate::client::ElicitationAnswer)).
#[derive(Debug, Clone, PartialEq)]
pub enum ClientAnswer {
    /// They filled in the form: the content, an object with every property the schema requires.
    Accept(Map<String, Value>),
    /// They said no to giving it (the operation may go on without it).
    Decline,
    /// They dismissed the request without choosing.
    Cancel,
}

impl ConnectedClient {
    /// The client of the call `call` on the connection `peer`: asks are withdrawn when
    /// `cancelled` fires and bounded by `timeout`.
    pub(crate) fn new(
        peer: Peer<RoleServer>,
        call: RequestId,
        cancelled: CancellationToken,
        timeout: Duration,
    ) -> Self {
        ConnectedClient {
            peer,
            call,
            cancelled,
            timeout,
            task: None,
            asked: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The same client for a call that runs as the MCP task `task`: asks are surfaced as the
    /// task's `inputRequests` (`input_required`) and answered with `tasks/update`, and are
    /// withdrawn when `cancelled` (the task's token) fires, not the `tools/call`'s (which ends
    /// when the task is handed out).
    pub(crate) fn in_task(&self, task: TaskContext, cancelled: CancellationToken) -> Self {
        ConnectedClient {
            task: Some(task),
            cancelled,
            ..self.clone()
        }
    }

    /// The id of the MCP task the call runs as, if it runs as one.
    pub fn task_id(&self) -> Option<&str> {
        self.task.as_ref().map(TaskContext::task_id)
    }

    /// Whether the client declared form elicitation in `initialize`.
    pub fn supports_elicitation(&self) -> bool {
        self.peer
            .supported_elicitation_modes()
            .contains(&rmcp::service::ElicitationMode::Form)
    }

    /// Whether the client declared URL-mode elicitation (`elicitation.url`) in `initialize`.
    pub fn supports_url_elicitation(&self) -> bool {
        self.peer
            .supported_elicitation_modes()
            .contains(&rmcp::service::ElicitationMode::Url)
    }

    /// Whether the client declared sampling in `initialize`.
    pub fn supports_sampling(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.sampling.is_some())
    }

    /// Asks the client's user for input: `message` says what and why, `requested_schema` is
    /// the form, an object schema whose properties are strings, numbers, booleans or enums
    /// (what MCP's form mode allows). See the [module docs](self) for the errors.
    pub async fn elicit(
        &self,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Result<ClientAnswer, SkillError> {
        if !self.supports_elicitation() {
            return Err(not_supported("elicitation"));
        }
        let required = required_properties(&requested_schema);
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": message.into(),
            "requestedSchema": requested_schema,
        }))
        .map_err(|e| {
            SkillError::tool(format!(
                "the elicitation's schema is not one MCP's form mode allows (an object of \
                 strings, numbers, booleans and enums): {e}"
            ))
        })?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let answer = match self.ask(request, "elicitation").await? {
            ClientResult::ElicitResult(answer) => answer,
            other => return Err(unexpected("elicitation/create", &other)),
        };
        match answer.action {
            ElicitationAction::Accept => {
                let content = match answer.content {
                    Some(Value::Object(content)) => content,
                    None => Map::new(),
                    Some(other) => {
                        return Err(SkillError::tool(format!(
                            "the MCP client accepted the elicitation with content that is not \
                             an object: {other}"
                        )));
                    }
                };
                let missing: Vec<&str> = required
                    .iter()
                    .map(String::as_str)
                    .filter(|name| !content.contains_key(*name))
                    .collect();
                if !missing.is_empty() {
                    return Err(SkillError::tool(format!(
                        "the MCP client accepted the elicitation without the required \
                         properties {}",
                        missing.join(", ")
                    )));
                }
                Ok(ClientAnswer::Accept(content))
            }
            ElicitationAction::Decline => Ok(ClientAnswer::Decline),
            ElicitationAction::Cancel => Ok(ClientAnswer::Cancel),
            other => Err(SkillError::tool(format!(
                "the MCP client answered the elicitation with an action this server does not \
                 know: {other:?}"
            ))),
        }
    }

    /// Asks the client's user to visit `url` (URL-mode elicitation, for what must not pass
    /// through the client: a credential, a payment, an OAuth consent). `elicitation_id`
    /// names this elicitation; the skill passes it to
    /// [`ConnectedClient::elicitation_complete`] once the interaction at `url` is done.
    ///
    /// The answer says only whether the person agreed to go ([`ClientUrlAnswer::Accept`]):
    /// what they do there reaches the server by its own way, never through the client. A
    /// client that did not declare `elicitation.url` is not asked; neither is one given a URL
    /// that is not `http` or `https`, that holds credentials (`user:password@`), or that is
    /// longer than [`MAX_ELICITATION_URL_BYTES`](super::MAX_ELICITATION_URL_BYTES), nor an empty `elicitation_id`.
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: &str,
        elicitation_id: impl Into<String>,
    ) -> Result<ClientUrlAnswer, SkillError> {
        if !self.supports_url_elicitation() {
            return Err(SkillError::tool(
                "the MCP client does not support URL-mode elicitation: it did not declare \
                 `elicitation.url` when it connected, so this skill cannot send its user to a URL",
            ));
        }
        let url = checked_url(url)?;
        let elicitation_id = elicitation_id.into();
        if elicitation_id.is_empty() || elicitation_id.len() > MAX_ELICITATION_ID_BYTES {
            return Err(SkillError::tool(format!(
                "a URL elicitation needs an id of 1 to {MAX_ELICITATION_ID_BYTES} bytes"
            )));
        }
        let params = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: message.into(),
            url: url.to_string(),
            elicitation_id,
        };
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let answer = match self.ask(request, "URL elicitation").await? {
            ClientResult::ElicitResult(answer) => answer,
            other => return Err(unexpected("elicitation/create", &other)),
        };
        match answer.action {
            ElicitationAction::Accept => Ok(ClientUrlAnswer::Accept),
            ElicitationAction::Decline => Ok(ClientUrlAnswer::Decline),
            ElicitationAction::Cancel => Ok(ClientUrlAnswer::Cancel),
            other => Err(SkillError::tool(format!(
                "the MCP client answered the URL elicitation with an action this server does \
                 not know: {other:?}"
            ))),
        }
    }

    /// Tells the client that the URL elicitation `elicitation_id` is done
    /// (`notifications/elicitation/complete`), so it may close what it showed and retry what
    /// waited on it. Sent on the call's stream while the call is open.
    pub async fn elicitation_complete(
        &self,
        elicitation_id: impl Into<String>,
    ) -> Result<(), SkillError> {
        let mut notification = CustomNotification::new(
            "notifications/elicitation/complete",
            Some(json!({"elicitationId": elicitation_id.into()})),
        );
        notification
            .extensions
            .insert(OriginatingRequestId(self.call.clone()));
        self.peer
            .send_notification(ServerNotification::CustomNotification(notification))
            .await
            .map_err(|e| {
                SkillError::tool(format!(
                    "could not tell the MCP client that the elicitation is complete: {e}"
                ))
            })
    }

    /// Asks the client's model for one completion (the client may show it to its user, change
    /// or refuse it). A refusal comes back as the error the client sent.
    pub async fn sample(&self, request: &CompletionRequest) -> Result<Completion, SkillError> {
        if !self.supports_sampling() {
            return Err(not_supported("sampling"));
        }
        let params = request.to_params()?;
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        let answer = match self.ask(request, "sampling").await? {
            ClientResult::CreateMessageResult(answer) => answer,
            other => return Err(unexpected("sampling/createMessage", &other)),
        };
        let text = answer
            .message
            .content
            .iter()
            .filter_map(|block| match block {
                SamplingMessageContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect();
        Ok(Completion {
            model: answer.model.clone(),
            text,
            stop_reason: answer.stop_reason.clone(),
        })
    }

    /// Sends `request` on the call's stream and waits for the answer, the timeout or the
    /// cancellation; the client is told when the server stops waiting without an answer.
    async fn ask(
        &self,
        mut request: ServerRequest,
        what: &str,
    ) -> Result<ClientResult, SkillError> {
        if let Some(task) = &self.task {
            return self.ask_in_task(task, request, what).await;
        }
        // Streamable HTTP sends it on the call's own event stream.
        request
            .extensions_mut()
            .insert(OriginatingRequestId(self.call.clone()));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| SkillError::tool(format!("could not ask the MCP client ({what}): {e}")))?;
        let mut outstanding = Outstanding {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            () = tokio::time::sleep(self.timeout) => return Err(SkillError::Timeout(self.timeout)),
            () = self.cancelled.cancelled() => return Err(SkillError::Cancelled),
        };
        outstanding.id = None;
        answer.map_err(|e| SkillError::tool(format!("the MCP client refused the {what}: {e}")))
    }
    /// Surfaces `request` as an input request of the task and waits for the client's
    /// `tasks/update`, the timeout or the cancellation.
    async fn ask_in_task(
        &self,
        task: &TaskContext,
        request: ServerRequest,
        what: &str,
    ) -> Result<ClientResult, SkillError> {
        let (input, elicitation) = match request {
            ServerRequest::ElicitRequest(request) => (InputRequest::Elicitation(request), true),
            ServerRequest::CreateMessageRequest(request) => {
                (InputRequest::CreateMessage(request), false)
            }
            _ => {
                return Err(SkillError::tool(format!(
                    "a task cannot ask the MCP client for {what}"
                )));
            }
        };
        let key = format!("{what}-{}", self.asked.fetch_add(1, Ordering::Relaxed) + 1);
        let answer = tokio::select! {
            answer = task.request_input(key, input) => answer.map_err(|_| SkillError::Cancelled)?,
            () = tokio::time::sleep(self.timeout) => return Err(SkillError::Timeout(self.timeout)),
            () = self.cancelled.cancelled() => return Err(SkillError::Cancelled),
        };
        let invalid = |e: serde_json::Error| {
            SkillError::tool(format!(
                "the MCP client answered the task's {what} request with something else: {e}"
            ))
        };
        if elicitation {
            serde_json::from_value::<ElicitResult>(answer)
                .map(ClientResult::ElicitResult)
                .map_err(invalid)
        } else {
            serde_json::from_value::<CreateMessageResult>(answer)
                .map(|answer| ClientResult::CreateMessageResult(Box::new(answer)))
                .map_err(invalid)
        }
    }
}

impl std::fmt::Debug for ConnectedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectedClient")
            .field("call", &self.call)
            .field("elicitation", &self.supports_elicitation())
            .field("sampling", &self.supports_sampling())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A request the client has not answered: dropped before it is, it sends
/// `notifications/cancelled` for it.
struct Outstanding {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let params = CancelledNotificationParam::new(
                Some(id),
                Some("the tool call stopped waiting for the answer".into()),
            );
            if let Err(error) = peer.notify_cancelled(params).await {
                tracing::debug!(%error, "could not send notifications/cancelled to the client");
            }
        });
    }
}

/// The names in a schema's `required`.
fn required_properties(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn not_supported(capability: &str) -> SkillError {
    SkillError::tool(format!(
        "the MCP client does not support {capability}: it did not declare the `{capability}` \
         capability when it connected, so this skill cannot ask it"
    ))
}

fn unexpected(method: &str, answer: &ClientResult) -> SkillError {
    SkillError::tool(format!(
        "the MCP client answered {method} with something else: {}",
        serde_json::to_string(answer).unwrap_or_else(|_| "(unprintable)".into())
    ))
}
