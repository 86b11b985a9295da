//! [`AguiServer`]: an [`AgentRuntime`] served to user interfaces over AG-UI, its settings and
//! their defaults.
//!
//! ```no_run
//! use std::time::Duration;
//! use agent_agui::AguiServer;
//! # use agent_core::Registry;
//! # use agent_llm::MockProvider;
//! # use agent_runtime::AgentRuntime;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_agui::AguiError> {
//! # let runtime = AgentRuntime::new(MockProvider::new([]), Registry::new());
//! let listener = agent_serve::bind("127.0.0.1:8080").await.expect("the port is free");
//! AguiServer::new(runtime.streaming(true))
//!     .bearer_token(agent_serve::generate_token()?)
//!     .allowed_origins(["https://console.example.com"])
//!     .run_timeout(Duration::from_secs(600))
//!     .serve(listener)
//!     .await
//! # }
//! ```
//!
//! Limits: [`AguiServer::max_threads`] threads kept ([`Threads`]), or the store given with
//! [`AguiServer::threads`]; [`AguiServer::run_timeout`] per run; [`AguiServer::buffer`] per
//! stream (a client further behind its run is cut, [`crate::outbox`]); the edge's limits per
//! request and connection ([`crate::http`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agent_serve::Edge;
use axum::Router;
use tokio::net::TcpListener;

use agent_core::Registry;
use agent_runtime::{AgentRuntime, SessionStore};
use serde_json::Value;

use crate::console::{Known, Listing};
use crate::http::Endpoint;
use crate::outbox::BufferLimits;
use crate::run::RunContext;
use crate::threads::Threads;

/// Requests larger than this are refused (`413`): 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// How many threads are kept unless [`AguiServer::max_threads`] says otherwise.
pub const DEFAULT_MAX_THREADS: usize = 1000;
/// How long one run may take unless [`AguiServer::run_timeout`] says otherwise: 10 minutes.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// A server's errors: a setting that cannot work, or the edge's.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AguiError {
    /// A setting of the server's own is refused (a zero limit).
    #[error("AG-UI server configuration: {0}")]
    Config(String),
    /// The edge's: a setting refused, the listener failed, no randomness for a token.
    #[error(transparent)]
    Edge(#[from] agent_serve::EdgeError),
}

/// An AG-UI endpoint for a runtime. See the [module docs](self).
#[derive(Clone)]
pub struct AguiServer {
    runtime: AgentRuntime,
    /// The network edge `serve` serves on: token, origins, connections, timeouts, body limit.
    edge: Edge,
    threads: Option<Arc<dyn SessionStore>>,
    max_threads: usize,
    run_timeout: Duration,
    buffer: BufferLimits,
    console: bool,
    /// Skills' input schemas the console shows beside the runtime's own (a nested agent's).
    schemas: HashMap<String, Value>,
}

impl std::fmt::Debug for AguiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AguiServer")
            .field("edge", &self.edge)
            .field("max_threads", &self.max_threads)
            .field("run_timeout", &self.run_timeout)
            .field("buffer", &self.buffer)
            .field("console", &self.console)
            .finish_non_exhaustive()
    }
}

impl AguiServer {
    /// A server for `runtime` with the defaults above, and a token generated when serving starts
    /// (printed on standard error) unless [`AguiServer::bearer_token`] sets one. Give the runtime
    /// `.streaming(true)` for text and tool calls' arguments to arrive as they are written.
    pub fn new(runtime: AgentRuntime) -> Self {
        AguiServer {
            runtime,
            edge: Edge::new()
                .name("agent-agui")
                .max_body_bytes(DEFAULT_MAX_BODY_BYTES),
            threads: None,
            max_threads: DEFAULT_MAX_THREADS,
            run_timeout: DEFAULT_RUN_TIMEOUT,
            buffer: BufferLimits::default(),
            console: true,
            schemas: HashMap::new(),
        }
    }

    /// Whether [`AguiServer::into_router`] mounts the console ([`crate::console`]): the page
    /// at [`CONSOLE_PATH`](crate::CONSOLE_PATH) and the guarded thread listing at
    /// [`THREADS_PATH`](crate::THREADS_PATH). On by default: the page holds no data and
    /// everything it shows needs the same token as the AG-UI endpoint.
    pub fn console(mut self, on: bool) -> Self {
        self.console = on;
        self
    }

    /// Also describes `registry`'s skills to the console (their input schemas, for the page to
    /// check an edited call's arguments): give it the registries of agents the runtime calls
    /// as skills, whose calls a run may pause on. The runtime's own skills are described anyway.
    pub fn skill_schemas(mut self, registry: &Registry) -> Self {
        for definition in registry.definitions() {
            self.schemas
                .insert(definition.name, definition.input_schema);
        }
        self
    }

    /// How many threads the server's own store ([`Threads`]) keeps; unused with
    /// [`AguiServer::threads`].
    pub fn max_threads(mut self, threads: usize) -> Self {
        self.max_threads = threads;
        self
    }

    /// Keeps the threads in `store` (a session per thread: its conversation and paused run)
    /// instead of the server's own [`Threads`]: a `RedbSessionStore` keeps them across restarts.
    pub fn threads(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.threads = Some(store);
        self
    }

    /// How long one run may take before it is stopped and ends with `RUN_ERROR`.
    pub fn run_timeout(mut self, timeout: Duration) -> Self {
        self.run_timeout = timeout;
        self
    }

    /// How far a stream may fall behind its run before it is cut ([`BufferLimits::default`]).
    pub fn buffer(mut self, limits: BufferLimits) -> Self {
        self.buffer = limits;
        self
    }

    /// The largest request body accepted, in bytes (`413` past it); default
    /// [`DEFAULT_MAX_BODY_BYTES`]. Sets the edge's [`Edge::max_body_bytes`].
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.edge = self.edge.max_body_bytes(bytes);
        self
    }

    agent_serve::edge_builders!();

    /// The endpoint as an axum router: [`AGUI_PATH`](crate::AGUI_PATH) behind an [`agent_serve::Guard`], without a
    /// fallback; with the console ([`AguiServer::console`], on by default) its page and listing. Serve it (merged into an application's router, beside MCP or A2A) with an
    /// [`agent_serve::Edge`], whose settings then hold instead of this server's
    /// [`edge_builders`](agent_serve::edge_builders) methods; served any other way, its requests
    /// are refused. Fails at once on a zero `max_threads`, `run_timeout` or buffer limit.
    pub fn into_router(self) -> Result<Router, AguiError> {
        for (name, zero) in [
            ("max_threads", self.max_threads == 0),
            ("run_timeout", self.run_timeout.is_zero()),
            ("buffer.events", self.buffer.events == 0),
            ("buffer.bytes", self.buffer.bytes == 0),
        ] {
            if zero {
                return Err(AguiError::Config(format!("`{name}` must not be zero")));
            }
        }
        let threads = self
            .threads
            .unwrap_or_else(|| Arc::new(Threads::new(self.max_threads)));
        let known = Arc::new(Known::new(self.max_threads));
        let mut schemas = self.schemas;
        for definition in self.runtime.registry().definitions() {
            schemas.insert(definition.name, definition.input_schema);
        }
        let listing = Listing {
            threads: threads.clone(),
            known: known.clone(),
            schemas,
        };
        let endpoint = Endpoint {
            run: RunContext {
                runtime: self.runtime,
                threads,
                run_timeout: self.run_timeout,
            },
            buffer: self.buffer,
            known,
            answered: Arc::new(crate::answered::Answered::new(self.max_threads)),
        };
        let router = endpoint.router();
        Ok(if self.console {
            router.merge(crate::console::router(listing))
        } else {
            router
        })
    }

    /// Serves on `listener` until the future is dropped, on the server's own edge (its
    /// `bearer_token`, `allowed_origins`, … methods); [`agent_serve::bind`] binds one with a deep
    /// listen queue. Anything but [`AGUI_PATH`](crate::AGUI_PATH) and the console's paths is `404`.
    pub async fn serve(self, listener: TcpListener) -> Result<(), AguiError> {
        let edge = self.edge.clone();
        let router = self.into_router()?;
        edge.serve_on(listener, router).await?;
        Ok(())
    }
}
