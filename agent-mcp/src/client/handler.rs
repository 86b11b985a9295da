//! What the client answers when a server asks something of it ([`Handler`]): an elicitation
//! goes to the call waiting on the server (which pauses the run), a sampling request to the
//! application's model, and change notifications mark the lists to read again.

#![allow(deprecated)] // sampling is deprecated by SEP-2577, and still what servers send

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorData,
    FormElicitationCapability, Implementation, ProtocolVersion, RequestId, SamplingCapability,
    UrlElicitationCapability,
};
use rmcp::service::{
    ClientLifecycleMode, InboundStreamOrigin, NotificationContext, RequestContext,
};
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::{Semaphore, SemaphorePermit, mpsc, oneshot};

use super::follow::Follow;
use super::sampling::{Reviewed, Sampling, SamplingRequest, SamplingState, refused};
use agent_llm::ModelUseReporter;

/// How the client starts a session with a server: the handshake decides the protocol version,
/// and with it how a server's questions come (see the [module docs](super)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Handshake {
    /// `initialize` (MCP up to 2025-11-25), which every server speaks: a server asks its
    /// questions while the call's request is open.
    #[default]
    Initialize,
    /// `server/discover` for MCP 2026-07-28, falling back to `initialize` when the server says
    /// it does not know it (or does not answer within 10 seconds): a server that speaks 2026-07-28
    /// asks its questions as an `input_required` result, which a paused run can answer after a
    /// restart.
    Discover,
}

impl Handshake {
    pub(super) fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Handshake::Initialize => ClientLifecycleMode::Initialize,
            Handshake::Discover => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: None,
            },
        }
    }
}

/// Which of the server's lists it said changed (`notifications/*/list_changed`) since they
/// were last read through this [`McpSkills`](super::McpSkills).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListChanges {
    /// The tools: [`McpSkills::refresh_tools`](super::McpSkills::refresh_tools) reads them
    /// again.
    pub tools: bool,
    /// The resources and templates: [`McpSkills::resources`](super::McpSkills::resources)
    /// reads them again.
    pub resources: bool,
    /// The prompts: [`McpSkills::prompts`](super::McpSkills::prompts) reads them again.
    pub prompts: bool,
}

/// What a server asked during an open request that a person answers, and where the answer
/// goes.
pub(super) enum Asked {
    /// A question (`elicitation/create`).
    Elicit {
        params: ElicitRequestParams,
        reply: oneshot::Sender<ElicitResult>,
    },
    /// A sampling request the hook asks a person about.
    Sample {
        sampling: Sampling,
        request: SamplingRequest,
        reason: String,
        reply: oneshot::Sender<Result<CreateMessageResult, ErrorData>>,
    },
}

/// The calls waiting on the server, by the id of their `tools/call` request: where a question
/// asked during that request goes.
pub(super) type Waiting = HashMap<RequestId, Waiter>;

/// One call waiting on the server: where its questions go, and the run that counts the model
/// calls made for it (a sampling request answered at once, in [`Handler::create_message`]).
#[derive(Clone)]
pub(super) struct Waiter {
    pub(super) asked: mpsc::Sender<Asked>,
    /// The reporter of the run the call belongs to; `None` outside a run.
    pub(super) model_use: Option<ModelUseReporter>,
}

/// What a connection's handler shares with its skills; lives as long as the connection, across
/// reconnections.
pub(super) struct Shared {
    pub(super) label: String,
    /// How sessions start, the first and every reconnection.
    pub(super) handshake: Handshake,
    /// The calls waiting on the server. Locked by a call from before it sends its request
    /// until it is listed here, so a question that comes at once finds it.
    pub(super) waiting: tokio::sync::Mutex<Waiting>,
    /// Whether calls take turns while they wait on the server: on a transport that cannot tell
    /// which request a question belongs to (stdio, a duplex).
    one_at_a_time: AtomicBool,
    turn: Semaphore,
    pub(super) sampling: SamplingState,
    pub(super) tools_changed: AtomicBool,
    pub(super) resources_changed: AtomicBool,
    pub(super) prompts_changed: AtomicBool,
    /// The live sets made of the server's tools, brought up to date when it changes them.
    pub(super) follow: Follow,
}

impl Shared {
    pub(super) fn new(label: String) -> Arc<Self> {
        Shared::with_handshake(label, Handshake::default())
    }

    pub(super) fn with_handshake(label: String, handshake: Handshake) -> Arc<Self> {
        Arc::new(Shared {
            label,
            handshake,
            waiting: tokio::sync::Mutex::new(HashMap::new()),
            one_at_a_time: AtomicBool::new(true),
            turn: Semaphore::new(1),
            sampling: SamplingState::default(),
            tools_changed: AtomicBool::new(false),
            resources_changed: AtomicBool::new(false),
            prompts_changed: AtomicBool::new(false),
            follow: Follow::default(),
        })
    }

    /// Which lists the server said changed.
    pub(super) fn changes(&self) -> ListChanges {
        ListChanges {
            tools: self.tools_changed.load(Ordering::SeqCst),
            resources: self.resources_changed.load(Ordering::SeqCst),
            prompts: self.prompts_changed.load(Ordering::SeqCst),
        }
    }

    /// Says whether the transport tells which request a server's request belongs to (the
    /// streamable-HTTP client marks each with the POST whose response stream carried it).
    pub(super) fn set_streams_tell(&self, tell: bool) {
        self.one_at_a_time.store(!tell, Ordering::SeqCst);
    }

    /// The turn to wait on the server, where calls take turns; `None` where they need not.
    pub(super) async fn turn(&self) -> Option<SemaphorePermit<'_>> {
        if !self.one_at_a_time.load(Ordering::SeqCst) {
            return None;
        }
        self.turn.acquire().await.ok()
    }

    /// The call a question goes to: the one whose request's response stream carried it, or,
    /// when the transport does not say, the only call waiting. `None` when no call waits, or
    /// when several do and nothing tells which one asked.
    fn route(waiting: &Waiting, origin: Option<&InboundStreamOrigin>) -> Option<Waiter> {
        match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => waiting.get(id).cloned(),
            _ if waiting.len() == 1 => waiting.values().next().cloned(),
            _ => None,
        }
    }
}

impl Handler {
    /// The call `context`'s request belongs to, if one waits and it can be told.
    async fn waiter(&self, context: &RequestContext<RoleClient>) -> Option<Waiter> {
        let origin = context.extensions.get::<InboundStreamOrigin>();
        let waiting = self.shared.waiting.lock().await;
        Shared::route(&waiting, origin)
    }

    /// Hands what the server asked to the call it belongs to; `false` (and a warning) when none
    /// can take it.
    async fn to_call(&self, context: &RequestContext<RoleClient>, asked: Asked) -> bool {
        let Some(call) = self.waiter(context).await else {
            let origin = context.extensions.get::<InboundStreamOrigin>();
            tracing::warn!(
                server = self.shared.label,
                ?origin,
                "refused a request that belongs to no tool call waiting on the server"
            );
            return false;
        };
        if call.asked.try_send(asked).is_err() {
            tracing::warn!(
                server = self.shared.label,
                "refused a request: its call already has one to take"
            );
            return false;
        }
        true
    }
}

/// The client side of one connection.
#[derive(Clone)]
pub(super) struct Handler {
    pub(super) shared: Arc<Shared>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::default())
                .with_url(UrlElicitationCapability::new()),
        );
        capabilities.sampling = Some(SamplingCapability::default());
        ClientConfig::new(
            capabilities,
            Implementation::new("eugene", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (reply, answer) = oneshot::channel();
        if !self
            .to_call(&context, Asked::Elicit { params, reply })
            .await
        {
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        }
        // A question no call takes (the call ended, the pause was never continued) is
        // cancelled when its sender is dropped.
        Ok(answer
            .await
            .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Cancel)))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let server = &self.shared.label;
        let sampling = &self.shared.sampling;
        match sampling.review(server, &params)? {
            Reviewed::Ready(with, request) => {
                // Counted in the run of the call it came with; with no call waiting, only per
                // connection.
                let model_use = self.waiter(&context).await.and_then(|w| w.model_use);
                sampling
                    .complete(&with, server, request, model_use.as_ref())
                    .await
            }
            Reviewed::Ask {
                sampling,
                request,
                reason,
            } => {
                let (reply, answer) = oneshot::channel();
                let asked = Asked::Sample {
                    sampling,
                    request,
                    reason,
                    reply,
                };
                if !self.to_call(&context, asked).await {
                    return Err(refused(
                        "the client asks a person about each sampling request, and it came with no tool call to ask in",
                    ));
                }
                answer.await.unwrap_or_else(|_| {
                    Err(refused(
                        "the person was not asked: the call that made it ended",
                    ))
                })
            }
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.tools_changed.store(true, Ordering::SeqCst);
        self.shared.follow.wake();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.resources_changed.store(true, Ordering::SeqCst);
        self.shared.follow.wake();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.prompts_changed.store(true, Ordering::SeqCst);
    }
}
