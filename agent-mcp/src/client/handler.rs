//! What the client answers when a server asks something of it ([`Handler`]): an elicitation
//! goes to the call waiting on the server (which pauses the run), a sampling request to the
//! application's model, and change notifications mark the lists to read again.

#![allow(deprecated)] // sampling is deprecated by SEP-2577, and still what servers send

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorData,
    FormElicitationCapability, Implementation, SamplingCapability, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::{mpsc, oneshot};

use super::sampling::SamplingState;

/// How many questions from a server may wait, unclaimed, for a call to take them.
const ASKED_QUEUE: usize = 16;

/// A question a server asked during an open request, and where its answer goes.
pub(super) struct Asked {
    pub(super) params: ElicitRequestParams,
    pub(super) reply: oneshot::Sender<ElicitResult>,
}

/// What a connection's handler shares with its skills; lives as long as the connection, across
/// reconnections.
pub(super) struct Shared {
    pub(super) label: String,
    asked_tx: mpsc::Sender<Asked>,
    /// Where the calls that wait on the server take questions from.
    pub(super) asked: tokio::sync::Mutex<mpsc::Receiver<Asked>>,
    pub(super) sampling: SamplingState,
    /// How many calls wait on the server and would take a question.
    pub(super) listening: AtomicUsize,
    pub(super) tools_changed: AtomicBool,
    pub(super) resources_changed: AtomicBool,
    pub(super) prompts_changed: AtomicBool,
}

impl Shared {
    pub(super) fn new(label: String) -> Arc<Self> {
        let (asked_tx, asked) = mpsc::channel(ASKED_QUEUE);
        Arc::new(Shared {
            label,
            asked_tx,
            asked: tokio::sync::Mutex::new(asked),
            sampling: SamplingState::default(),
            listening: AtomicUsize::new(0),
            tools_changed: AtomicBool::new(false),
            resources_changed: AtomicBool::new(false),
            prompts_changed: AtomicBool::new(false),
        })
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
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if self.shared.listening.load(Ordering::SeqCst) == 0 {
            tracing::warn!(
                server = self.shared.label,
                "cancelled an elicitation that came outside any tool call"
            );
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        }
        let (reply, answer) = oneshot::channel();
        if self
            .shared
            .asked_tx
            .try_send(Asked { params, reply })
            .is_err()
        {
            tracing::warn!(
                server = self.shared.label,
                "cancelled an elicitation: too many questions wait unclaimed"
            );
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
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.shared
            .sampling
            .answer(&self.shared.label, params)
            .await
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.tools_changed.store(true, Ordering::SeqCst);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.resources_changed.store(true, Ordering::SeqCst);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.prompts_changed.store(true, Ordering::SeqCst);
    }
}
