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
//! let listener = agent_a2a::http::bind("127.0.0.1:8080").await?;
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

use std::sync::Arc;
use std::time::Duration;

use agent_serve::{Limits, Origins};
use bytes::Bytes;
use tokio::net::TcpListener;

use agent_core::content::MediaLimits;
use agent_runtime::AgentRuntime;

use crate::card::AgentCard;
use crate::error::A2aError;
use crate::http::{Endpoint, MAX_HEADER_BYTES};
use crate::run::RunContext;
use crate::tasks::TaskStore;

/// Requests larger than this are refused (`413`) unless [`A2aServer::max_body_bytes`] says
/// otherwise: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// How many tasks (and conversations) are kept unless [`A2aServer::max_tasks`] says otherwise.
pub const DEFAULT_MAX_TASKS: usize = 1000;
/// How long one run may take unless [`A2aServer::run_timeout`] says otherwise: 10 minutes.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a client has to send a request head unless [`A2aServer::header_read_timeout`] says
/// otherwise.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client has to send a request body unless [`A2aServer::body_read_timeout`] says
/// otherwise.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How many admitted connections (that sent a request with the token) are served at once
/// unless [`A2aServer::max_connections`] says otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// How many connections not admitted yet are kept open at once unless
/// [`A2aServer::max_pending_connections`] says otherwise (as agent-mcp's server).
pub const DEFAULT_MAX_PENDING_CONNECTIONS: usize = 256;
/// The path of the JSON-RPC endpoint.
pub const RPC_PATH: &str = "/";

/// An A2A agent server for a runtime. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct A2aServer {
    runtime: AgentRuntime,
    name: String,
    description: String,
    token: Option<String>,
    public_url: Option<String>,
    max_body_bytes: usize,
    max_tasks: usize,
    run_timeout: Duration,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    max_connections: usize,
    max_pending_connections: usize,
    allowed_origins: Vec<String>,
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
            token: None,
            public_url: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_tasks: DEFAULT_MAX_TASKS,
            run_timeout: DEFAULT_RUN_TIMEOUT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_pending_connections: DEFAULT_MAX_PENDING_CONNECTIONS,
            allowed_origins: Vec::new(),
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

    /// The token every JSON-RPC request must carry (`Authorization: Bearer <token>`): at least
    /// 16 characters that fit in a header ([`generate_token`](crate::generate_token) makes one).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The URL clients reach the server at, as the card announces it (default
    /// `http://<bound address>/`); set it behind a proxy or TLS terminator.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = Some(url.into());
        self
    }

    /// The largest request body accepted, in bytes.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
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

    /// How long a client has to send a request head, counted from when the server starts
    /// waiting for it, so it also closes a kept-alive connection idle that long; a new
    /// connection has half of it for its first head.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a client has to send a request body.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// At most `connections` (at least 1) admitted connections open at once: connections that
    /// sent a JSON-RPC request with the token. Past it, such a request waits until an admitted
    /// connection closes. Reading the agent card does not take one. Connections without the
    /// token never do; see [`crate::http`].
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// At most `connections` (at least 1) connections open at once that have not sent a
    /// request with the token yet; past it, the oldest of them that waits on its client
    /// (everything it sent was read, and is no whole request head) is closed. See
    /// [`crate::http`].
    pub fn max_pending_connections(mut self, connections: usize) -> Self {
        self.max_pending_connections = connections;
        self
    }

    /// Web origins (`scheme://host[:port]`, e.g. `https://app.example.com`) whose pages may
    /// call the server from a browser. Requests without an `Origin` header (every client that
    /// is not a browser) are not affected. By default no cross-origin request is allowed; on a
    /// loopback bind the server's own `http://localhost:PORT`, `http://127.0.0.1:PORT` and
    /// `http://[::1]:PORT` are. A request from any other origin is answered `403` and runs
    /// nothing.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// The card this server serves when reached at `url`.
    pub fn card(&self, url: &str) -> AgentCard {
        AgentCard::for_registry(&self.name, &self.description, url, self.runtime.registry())
    }

    /// Serves on `listener` until the future is dropped; [`bind`](crate::http::bind) binds one
    /// with a deep listen queue. Fails at once on a setting that cannot work (a zero limit, a
    /// short token, a malformed origin).
    pub async fn serve(self, listener: TcpListener) -> Result<(), A2aError> {
        let bound = listener.local_addr().map_err(|source| A2aError::Io {
            context: "reading the A2A server's address".into(),
            source,
        })?;
        for (name, zero) in [
            ("max_body_bytes", self.max_body_bytes == 0),
            ("max_tasks", self.max_tasks == 0),
            ("max_connections", self.max_connections == 0),
            ("max_pending_connections", self.max_pending_connections == 0),
            ("run_timeout", self.run_timeout.is_zero()),
            ("header_read_timeout", self.header_read_timeout.is_zero()),
            ("body_read_timeout", self.body_read_timeout.is_zero()),
        ] {
            if zero {
                return Err(A2aError::Config(format!("`{name}` must not be zero")));
            }
        }
        let origins = Origins::new(&self.allowed_origins, bound).map_err(A2aError::Config)?;
        let token = match self.token.clone() {
            Some(token) => {
                crate::auth::validate_token(&token)?;
                token
            }
            None => {
                let token = crate::generate_token()?;
                eprintln!(
                    "agent-a2a: the A2A agent at http://{bound}{RPC_PATH} requires the header \
                     `Authorization: Bearer {token}`"
                );
                token
            }
        };
        let url = self
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{bound}{RPC_PATH}"));
        let card = serde_json::to_vec(&self.card(&url)).expect("the card serializes");
        let endpoint = Arc::new(Endpoint {
            run: RunContext {
                runtime: self.runtime,
                store: Arc::new(TaskStore::new(self.max_tasks)),
                run_timeout: self.run_timeout,
                media_limits: self.media_limits,
            },
            card: Bytes::from(card),
            token: token.into(),
            origins,
            rpc_path: RPC_PATH.into(),
            max_body_bytes: self.max_body_bytes,
            body_read_timeout: self.body_read_timeout,
        });
        let limits = Limits {
            max_admitted: self.max_connections,
            max_pending: self.max_pending_connections,
            first_head_timeout: self.header_read_timeout / 2,
            header_read_timeout: self.header_read_timeout,
            max_header_bytes: MAX_HEADER_BYTES,
        };
        agent_serve::accept_forever(listener, endpoint, limits).await;
        Ok(())
    }
}
