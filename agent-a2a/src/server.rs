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
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
//! A2aServer::new(runtime.streaming(true))
//!     .name("helper")
//!     .description("Answers questions about the project.")
//!     .bearer_token(token)
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
//! [`A2aServer::run_timeout`] per run; [`A2aServer::max_body_bytes`] per request, read within
//! [`A2aServer::body_read_timeout`]; heads within [`A2aServer::header_read_timeout`] (which
//! also closes idle kept-alive connections), at most 64 KiB; [`A2aServer::max_connections`]
//! connections at once.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::net::TcpListener;

use agent_runtime::AgentRuntime;

use crate::card::AgentCard;
use crate::error::A2aError;
use crate::http::{Endpoint, Limits};
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
/// How many connections are served at once unless [`A2aServer::max_connections`] says
/// otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
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
        }
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

    /// How long a client has to send a request head.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a client has to send a request body.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// How many connections are served at once.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// The card this server serves when reached at `url`.
    pub fn card(&self, url: &str) -> AgentCard {
        AgentCard::for_registry(&self.name, &self.description, url, self.runtime.registry())
    }

    /// Serves on `listener` until the future is dropped. Fails at once on a setting that cannot
    /// work (a zero limit, a short token).
    pub async fn serve(self, listener: TcpListener) -> Result<(), A2aError> {
        let bound = listener.local_addr().map_err(|source| A2aError::Io {
            context: "reading the A2A server's address".into(),
            source,
        })?;
        for (name, zero) in [
            ("max_body_bytes", self.max_body_bytes == 0),
            ("max_tasks", self.max_tasks == 0),
            ("max_connections", self.max_connections == 0),
            ("run_timeout", self.run_timeout.is_zero()),
            ("header_read_timeout", self.header_read_timeout.is_zero()),
            ("body_read_timeout", self.body_read_timeout.is_zero()),
        ] {
            if zero {
                return Err(A2aError::Config(format!("`{name}` must not be zero")));
            }
        }
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
            },
            card: Bytes::from(card),
            token: token.into(),
            rpc_path: RPC_PATH.into(),
            max_body_bytes: self.max_body_bytes,
            body_read_timeout: self.body_read_timeout,
        });
        let limits = Limits {
            max_connections: self.max_connections,
            header_read_timeout: self.header_read_timeout,
        };
        crate::http::accept_forever(listener, endpoint, limits).await;
        Ok(())
    }
}
