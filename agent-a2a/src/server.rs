//! [`A2aServer`]: an [`AgentRuntime`] served as an A2A agent, its settings and their defaults.
//!
//! ```no_run
//! use std::time::Duration;
//! use agent_a2a::A2aServer;
//! # use agent_core::Registry;
//! # use agent_llm::MockProvider;
//! # use agent_runtime::AgentRuntime;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_a2a::A2aError> {
//! # let runtime = AgentRuntime::new(MockProvider::new([]), Registry::new());
//! let token = agent_a2a::generate_token()?;
//! let listener = agent_a2a::http::bind("127.0.0.1:8080").await.expect("the port is free");
//! A2aServer::new(runtime.streaming(true))
//!     .name("helper")
//!     .description("Answers questions about the project.")
//!     .bearer_token(token)
//!     .allowed_origins(["https://app.example.com"])
//!     .max_connections(64)
//!     .run_timeout(Duration::from_secs(600))
//!     .serve(listener)
//!     .await
//! # }
//! ```
//!
//! Each task is one run of the runtime (a clone of it, with the task's own cancellation token and
//! an event sink for the task's stream); give the runtime `.streaming(true)` for the answer to
//! arrive as it is written. A new message in a context whose last task completed continues that
//! conversation (the transcript is kept with the tasks, in memory).
//!
//! Limits: [`A2aServer::max_tasks`] tasks kept (the oldest that is not running is forgotten to
//! make room; when all are running a new one is refused), the same number of conversations;
//! the messages that started the kept tasks at most [`MAX_TASK_BYTES`](crate::MAX_TASK_BYTES)
//! together, the kept conversations [`MAX_CONVERSATION_BYTES`](crate::MAX_CONVERSATION_BYTES)
//! (the oldest forgotten past either); one context's conversation at most
//! [`MAX_CONTEXT_MESSAGES`](crate::MAX_CONTEXT_MESSAGES) messages and
//! [`MAX_CONTEXT_BYTES`](crate::MAX_CONTEXT_BYTES) (a message past them is refused with
//! `InvalidParams`, saying to start a new context);
//! [`A2aServer::run_timeout`] per run; [`A2aServer::max_body_bytes`] per request, read within
//! [`A2aServer::body_read_timeout`]; heads within [`A2aServer::header_read_timeout`] (which
//! also closes idle kept-alive connections; a new connection has half of it for its first
//! head), at most 64 KiB; [`A2aServer::max_connections`] connections admitted by a request with
//! the token, and [`A2aServer::max_pending_connections`] with no such request yet (the oldest
//! of them that waits on its client closed to make room), so that connections without the
//! token cannot keep a client with it waiting; requests from a browser page on an origin not
//! in [`A2aServer::allowed_origins`] are refused; a message's file parts are checked against
//! [`A2aServer::media_limits`]. What each request and connection goes
//! through, in order, is in [`crate::http`].

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_serve::Edge;
use axum::Router;
use tokio::net::{TcpListener, ToSocketAddrs};

use agent_core::content::MediaLimits;
use agent_runtime::AgentRuntime;

use crate::card::AgentCard;
use crate::error::A2aError;
use crate::http::Endpoint;
use crate::run::RunContext;
use crate::tasks::TaskStore;

/// Requests larger than this are refused (`413`) unless [`A2aServer::max_body_bytes`] says
/// otherwise: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// How many tasks (and conversations) are kept unless [`A2aServer::max_tasks`] says otherwise.
pub const DEFAULT_MAX_TASKS: usize = 1000;
/// How long one run may take unless [`A2aServer::run_timeout`] says otherwise: 10 minutes.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// The path of the JSON-RPC endpoint.
pub const RPC_PATH: &str = "/";

/// An A2A agent server for a runtime. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct A2aServer {
    runtime: AgentRuntime,
    name: String,
    description: String,
    /// The network edge `serve` serves on: token, origins, connections, timeouts, body limit.
    edge: Edge,
    public_url: Option<String>,
    max_tasks: usize,
    run_timeout: Duration,
    media_limits: MediaLimits,
}

impl A2aServer {
    /// A server for `runtime`, named `eugene`, with the defaults above and a token generated
    /// when serving starts (printed on standard error) unless [`A2aServer::bearer_token`] sets
    /// one.
    pub fn new(runtime: AgentRuntime) -> Self {
        A2aServer {
            runtime,
            name: "eugene".into(),
            description: "An agent built with eugene.".into(),
            edge: Edge::new()
                .name("agent-a2a")
                .max_body_bytes(DEFAULT_MAX_BODY_BYTES),
            public_url: None,
            max_tasks: DEFAULT_MAX_TASKS,
            run_timeout: DEFAULT_RUN_TIMEOUT,
            media_limits: MediaLimits::default(),
        }
    }

    /// What the file parts of incoming messages are checked against before they are attached
    /// to the run's goal ([`MediaLimits::default`] unless set; see [`crate::media`]). A message
    /// with a file refused is refused whole, with `InvalidParams` saying why.
    pub fn media_limits(mut self, limits: MediaLimits) -> Self {
        self.media_limits = limits;
        self
    }

    /// The agent's name in its card.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The agent's description in its card.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The URL clients reach the server at, as the card announces it (default
    /// `http://<bound address>/`); set it behind a proxy or TLS terminator.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = Some(url.into());
        self
    }

    /// The largest request body accepted, in bytes (`413` past it); default
    /// [`DEFAULT_MAX_BODY_BYTES`]. Sets the edge's [`Edge::max_body_bytes`].
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.edge = self.edge.max_body_bytes(bytes);
        self
    }

    /// How many tasks (and conversations) are kept.
    pub fn max_tasks(mut self, tasks: usize) -> Self {
        self.max_tasks = tasks;
        self
    }

    /// How long one run (a task, or its continuation after a decision) may take before it is
    /// stopped and the task fails.
    pub fn run_timeout(mut self, timeout: Duration) -> Self {
        self.run_timeout = timeout;
        self
    }

    /// The card this server serves when reached at `url`.
    pub fn card(&self, url: &str) -> AgentCard {
        AgentCard::for_registry(&self.name, &self.description, url, self.runtime.registry())
    }

    agent_serve::edge_builders!();

    /// The agent as an axum router: its card at `/.well-known/agent-card.json` (public) and
    /// JSON-RPC at [`RPC_PATH`] behind an [`agent_serve::Guard`], without a fallback (axum
    /// merges only one). Serve it
    /// (merged into an application's router, beside an MCP endpoint, say) with an
    /// [`agent_serve::Edge`], whose settings then hold instead of those of this server's
    /// [`edge_builders`](agent_serve::edge_builders) methods; served any other way, its JSON-RPC
    /// requests are refused. The card names [`A2aServer::public_url`], or else the address the
    /// edge is bound to. Fails at once on a zero `max_tasks` or `run_timeout`.
    pub fn into_router(self) -> Result<Router, A2aError> {
        for (name, zero) in [
            ("max_tasks", self.max_tasks == 0),
            ("run_timeout", self.run_timeout.is_zero()),
        ] {
            if zero {
                return Err(A2aError::Config(format!("`{name}` must not be zero")));
            }
        }
        let (name, description) = (self.name.clone(), self.description.clone());
        let runtime = self.runtime.clone();
        let make_card = move |url: &str| {
            let card = AgentCard::for_registry(&name, &description, url, runtime.registry());
            serde_json::to_vec(&card).expect("the card serializes")
        };
        let endpoint = Endpoint {
            run: RunContext {
                runtime: self.runtime,
                store: Arc::new(TaskStore::new(self.max_tasks)),
                run_timeout: self.run_timeout,
                media_limits: self.media_limits,
            },
            card: OnceLock::new(),
            make_card: Box::new(make_card),
            public_url: self.public_url,
            rpc_path: RPC_PATH,
        };
        Ok(endpoint.router())
    }

    /// Serves on `addr` (bound with a deep listen queue) until the future is dropped; see
    /// [`A2aServer::serve`].
    pub async fn serve_at(self, addr: impl ToSocketAddrs) -> Result<(), A2aError> {
        let listener = crate::http::bind(addr)
            .await
            .map_err(|source| A2aError::Io {
                context: "binding the A2A server".into(),
                source,
            })?;
        self.serve(listener).await
    }

    /// Serves on `listener` until the future is dropped, on the server's own edge (its
    /// `bearer_token`, `allowed_origins`, … methods); [`bind`](crate::http::bind) binds one
    /// with a deep listen queue. Fails at once on a setting that cannot work (a zero limit, a
    /// short token, a malformed origin): [`A2aError::Edge`] for the edge's settings,
    /// [`A2aError::Config`] for the server's own.
    pub async fn serve(self, listener: TcpListener) -> Result<(), A2aError> {
        let edge = self.edge.clone();
        let router = self
            .into_router()?
            .fallback(|| async { Endpoint::not_found() });
        edge.serve_on(listener, router).await?;
        Ok(())
    }
}
