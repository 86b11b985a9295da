//! Serving MCP's streamable HTTP transport: [`McpServer::serve_http`] (one line), or
//! [`McpServer::into_router`] to mount `/mcp` in an application's own axum app served by an
//! [`agent_serve::Edge`] (beside an A2A agent on the same port, say).
//!
//! ```no_run
//! use std::time::Duration;
//! use agent_core::{Registry, SkillContext};
//! use agent_mcp::McpServer;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_mcp::McpError> {
//! let token = agent_mcp::generate_token()?;
//! eprintln!("clients send: Authorization: Bearer {token}");
//! McpServer::new(Registry::discover().expect("skills are linked"))
//!     .context(SkillContext::new("/path/to/project"))
//!     .bearer_token(token)
//!     .allowed_origins(["https://app.example.com"])
//!     .max_connections(64)
//!     .max_sessions(16)
//!     .session_idle_timeout(Duration::from_secs(300))
//!     .serve_http("127.0.0.1:8080")
//!     .await
//! # }
//! ```
//!
//! Mounted in an application's app, with the settings on the one edge:
//!
//! ```no_run
//! use agent_core::Registry;
//! use agent_mcp::McpServer;
//! use agent_serve::Edge;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let app = axum::Router::new()
//!     .merge(McpServer::new(Registry::new()).into_router()?)
//!     .route("/health", axum::routing::get(|| async { "ok" }));
//! Edge::new()
//!     .bearer_token(agent_mcp::generate_token()?)
//!     .serve("127.0.0.1:8080", app)
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! What every request to `/mcp` goes through, in order; a request for any other path is
//! answered `404` and admits nothing:
//!
//! 1. **The edge** (agent-serve, whose crate docs say each step and each limit): the `Host`
//!    settled (two `Host` headers `400`; an absolute-form target taken under its host), the
//!    `Origin` (`403`), CORS preflights answered (exposing `Mcp-Session-Id`), the bearer token
//!    (`401` with `WWW-Authenticate: Bearer realm="mcp"`; without
//!    [`McpServer::bearer_token`] or [`McpServer::without_auth`] a token is generated when
//!    serving starts and printed on standard error; `without_auth` is refused off loopback),
//!    which **admits** the connection, then the body (`413` past rmcp's
//!    `max_request_body_bytes`, 4 MiB by default, with `serve_http`; `408` past
//!    [`McpServer::body_read_timeout`] for the whole body).
//! 2. **JSON-RPC**: a POST of JSON is checked: malformed JSON −32700, no JSON-RPC message
//!    −32600, wrong params for an MCP method −32602 (all `400`).
//! 3. **Session cap**: an `initialize` past [`McpServer::max_sessions`] live sessions → `503`
//!    with a JSON-RPC error (−32000) saying the server is at its session limit. Sessions
//!    without an open request for [`McpServer::session_idle_timeout`] are closed.
//! 4. rmcp's streamable-HTTP service: its `Host` allowlist (loopback names by default, against
//!    DNS rebinding; see [`McpServer::http_config`]), `Accept` and `Content-Type` checks, the
//!    session and the call.
//!
//! Connections (pending until a request passes the token, at most
//! [`McpServer::max_pending_connections`] of them, the oldest that waits on its client closed
//! to make room; at most [`McpServer::max_connections`] admitted; heads within
//! [`McpServer::header_read_timeout`], at most 64 KiB) are the edge's too. Measured
//! (`tests/http_churn.rs`): 4,000 token-less connections, reopened as soon as the server closes
//! them (silent, half a head, requests without or with a wrong token), leave every request of
//! three clients with the token, each on a fresh connection, answered in about a second (4 s at
//! worst; a debug build on two cores shared with the attacker).
//!
//! What stays here, and why: the session cap and idle expiry (`src/sessions.rs`; MCP sessions
//! are rmcp's, no layer knows them), and the JSON-RPC checks (MCP's methods). No concurrency
//! limit layer: the bounds are on connections (the edge's) and sessions (refused with a
//! JSON-RPC error), which a count of requests does not give.
//!
//! Measured (`benches/http_round_trip.rs`: an MCP `ping` in a session on a kept-alive
//! connection, against a bare hyper echo service with the same client on the same loopback):
//! the router and the edge's layers cost nothing the bench can tell from noise (runs of the
//! same binary vary by a third). What it did find: each streamed answer waited about 40 ms for
//! the client's delayed ACK until the edge set `TCP_NODELAY`.

use std::time::Duration;

use axum::Router;
use tokio::net::{TcpListener, ToSocketAddrs};

use crate::error::McpError;
pub use crate::http_settings::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT};
use crate::server::McpServer;
pub use agent_serve::{LISTEN_BACKLOG, bind};
use endpoint::Endpoint;

mod answers;
mod endpoint;

impl McpServer {
    agent_serve::edge_builders!();

    /// At most `max` (at least 1) MCP sessions live at once; an `initialize` past it is
    /// answered `503` with a JSON-RPC error saying the server is at its session limit. Default
    /// [`DEFAULT_MAX_SESSIONS`].
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.http.max_sessions = max;
        self
    }

    /// A session with no open request (no call running, no event stream listened to) for this
    /// long is closed; its client gets `404` and initializes again. Default
    /// [`DEFAULT_SESSION_IDLE_TIMEOUT`]; must not be zero.
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.http.session_idle_timeout = timeout;
        self
    }

    /// The MCP endpoint as an axum router: [`HTTP_PATH`](crate::server::HTTP_PATH) behind an
    /// [`agent_serve::Guard`], without a fallback (axum merges only one). Serve it (merged into an
    /// application's router, if you like) with an [`agent_serve::Edge`], whose settings then
    /// hold instead of those of this server's [`edge_builders`](agent_serve::edge_builders)
    /// methods; served any other way, its requests are refused. Each client session gets its
    /// own [`RunScope`](agent_core::RunScope).
    ///
    /// Fails with [`McpError::HttpConfig`] on a zero session limit or idle timeout.
    pub fn into_router(self) -> Result<Router, McpError> {
        Ok(Endpoint::new(self)?.router())
    }

    /// Serves MCP's streamable HTTP transport on `addr`, at `http://ADDR/mcp`
    /// ([`HTTP_PATH`](crate::server::HTTP_PATH)), until the task is dropped, on the server's
    /// own edge (its `bearer_token`, `allowed_origins`, … methods). See the
    /// [module docs](self) for what every request and connection goes through.
    ///
    /// Fails with [`McpError::Edge`] or [`McpError::HttpConfig`] before serving when the
    /// settings are unsafe ([`McpServer::without_auth`] off loopback, a weak token, a malformed
    /// origin, a zero limit) or `addr` cannot be bound. Once serving, it does not return.
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> Result<(), McpError> {
        let listener = bind(addr)
            .await
            .map_err(|e| McpError::io("binding the MCP HTTP server", e))?;
        self.serve_http_on(listener).await
    }

    /// Like [`McpServer::serve_http`] on a listener bound already (to port 0 in tests, say);
    /// [`bind`] binds one as `serve_http` does.
    pub async fn serve_http_on(self, listener: TcpListener) -> Result<(), McpError> {
        let edge = self
            .edge
            .clone()
            .max_body_bytes(self.http_config.max_request_body_bytes);
        let router = self
            .into_router()?
            .fallback(|| async { answers::not_found() });
        edge.serve_on(listener, router).await?;
        Ok(())
    }
}
