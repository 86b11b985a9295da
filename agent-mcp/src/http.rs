//! Serving MCP's streamable HTTP transport on a TCP listener: [`McpServer::serve_http`], its
//! settings, and what it defends against.
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
//! What every request to `/mcp` goes through, in order (each step a layer of the router, see
//! [below](#on-axum-and-tower-http-what-each-layer-replaces-and-what-stays-ours)); a request
//! for any other path is answered `404` and admits nothing:
//!
//! 1. **Origin** ([`crate::origin`] rules): present and not allowed → `403`.
//! 2. **Bearer token** ([`crate::auth`]): missing or wrong → `401` with
//!    `WWW-Authenticate: Bearer`. Without [`McpServer::bearer_token`] or
//!    [`McpServer::without_auth`], a token is generated when serving starts and printed on
//!    standard error. `without_auth` is refused on any address but loopback. Passing these
//!    two **admits** the connection (below).
//! 3. **Body** (of any request): at most rmcp's body limit (`413`, 4 MiB by default; at once
//!    for a `Content-Length` past it, when the limit is reached for a chunked body), read
//!    whole within [`McpServer::body_read_timeout`] for the whole body (`408` and
//!    `Connection: close`). A POST of JSON is then checked as JSON-RPC: malformed JSON −32700,
//!    no JSON-RPC message −32600, wrong params for an MCP method −32602 (all `400`).
//! 4. **Session cap**: an `initialize` past [`McpServer::max_sessions`] live sessions → `503`
//!    with a JSON-RPC error (−32000) saying the server is at its session limit. Sessions
//!    without an open request for [`McpServer::session_idle_timeout`] are closed.
//! 5. rmcp's streamable-HTTP service: its `Host` allowlist (loopback names by default, against
//!    DNS rebinding; see [`McpServer::http_config`]), `Accept` and `Content-Type` checks, the
//!    session and the call. Before any check, a request with two `Host` headers is refused
//!    (`400`), and one whose target is in absolute form is checked under the target's host
//!    (RFC 9112), so the allowlist sees the one host the request names.
//!
//! Between the first two, tower-http's `CorsLayer` answers the CORS preflights of the origins
//! the first let through (a preflight carries no token, so it comes before the bearer check)
//! and adds the CORS headers to their answers, so that a page of an allowed origin can call
//! the server with its token (see [`crate::origin`]). A preflight runs nothing and admits no
//! connection; from an origin not allowed it is `403`.
//!
//! And every connection:
//!
//! - A connection is **pending** until one of its requests passes the first two checks (and
//!   asks for `/mcp`), which **admits** it; a server without a token admits on the `Origin`
//!   check alone. At most [`McpServer::max_pending_connections`] connections are pending and
//!   at most [`McpServer::max_connections`] admitted, so connections without the token never
//!   take an admitted slot. Any answer on a pending connection (`401`, `403`, `404`) carries
//!   `Connection: close` and ends it: keep-alive is offered to admitted connections only.
//! - New connections are accepted and read as they come, however many pending ones sit
//!   silent or send half a head. When the pending pool is full, the oldest pending connection
//!   that **waits on its client** (the server read everything it sent and found no whole
//!   request head) is closed, without an answer, to make room. One whose bytes have not been
//!   read yet is never chosen; and one told to close reads what it was sent first, so a
//!   request with the token that had arrived is still served. When no pending connection can
//!   be chosen (all are still to be read, or wait for an admitted slot), accepting pauses
//!   until one can, and new connections wait in the kernel's listen queue
//!   ([`LISTEN_BACKLOG`] with [`McpServer::serve_http`] and [`bind`]).
//! - A pending connection has half of [`McpServer::header_read_timeout`] (5 s by default) to
//!   send its first request head; clients send it as soon as they connect.
//! - An admitted connection keeps its slot until it closes. A request that passes the checks
//!   while every slot is taken waits for one; its connection stays counted as pending but is
//!   never closed to make room.
//! - A request's head may have at most 64 KiB (`431` past it) and must arrive within
//!   [`McpServer::header_read_timeout`], counted from when the server starts waiting for it:
//!   on a new connection and after each response on a kept-alive one, so the same limit closes
//!   idle keep-alive connections. A response being streamed (a running call, an event stream)
//!   is not limited.
//! - An error from `accept()` (out of file descriptors, say) is logged and retried after a
//!   pause that doubles from 10 ms to 1 s; it never ends [`McpServer::serve_http`].
//!
//! So connections without the token hold at most `max_pending_connections` places (plus the
//! connection just accepted, and those told to close that have not closed yet), each with at
//! most 64 KiB of head, for one head each; and they cannot keep a client with the token from
//! being read, admitted and served: 4,000 of them, reopened as soon as the server closes them
//! (silent, half a head, requests without or with a wrong token), leave every request of
//! three clients with the token, each on a fresh connection, answered in about a second (4 s
//! at worst; a debug build on two cores shared with the attacker, `tests/http_churn.rs`),
//! where each used to wait for a token-less connection's head timeout. Connections closed
//! without an answer are reset, so the server keeps no `TIME_WAIT` for them.
//!
//! # On axum and tower-http: what each layer replaces, and what stays ours
//!
//! Each request is answered by an axum `Router`: [`HTTP_PATH`](crate::server::HTTP_PATH)
//! mounted as a tower service, `404` for every other path, and around the endpoint, outermost first:
//!
//! | Layer | From | Was |
//! |---|---|---|
//! | `Origin` check (`403`) | ours ([`crate::origin`]) | a step of the endpoint's `admit` |
//! | bearer check (`401`) | ours ([`crate::auth`]) | a step of the endpoint's `admit` |
//! | `AdmitLayer` | agent-serve | agent-serve's own request path |
//! | `RequestBodyLimitLayer` (`413`) | tower-http | a `Limited` body read by hand |
//! | body deadline (`408`) | ours (`src/http/body.rs`) | the same deadline, in the endpoint |
//!
//! Then the endpoint: the JSON-RPC checks, the session cap, rmcp's `StreamableHttpService`.
//!
//! What stays ours, and why:
//!
//! - **The connections** (the listen queue, the pending and admitted pools, closing a pending
//!   connection to make room, the first-head timer, resetting what is closed unanswered, the
//!   `accept()` back-off): agent-serve, shared with agent-a2a. Tower layers see requests, not
//!   connections; nothing in tower or axum counts connections or knows which of them wait on
//!   their client. `axum::serve` is not used: it accepts without bound.
//! - **The bearer check**: tower-http's `ValidateRequestHeaderLayer::bearer` compares the
//!   header with `==`, whose time tells an attacker how much of a guess was right, and answers
//!   `401` without RFC 6750's `WWW-Authenticate` challenge. Ours is agent-bearer's
//!   constant-time check, as a layer.
//! - **The `Origin` refusal**: tower-http's `CorsLayer` answers preflights and adds headers,
//!   but lets a request from any origin through; MCP asks the server to refuse it. So ours
//!   refuses first, and `CorsLayer` answers the preflights of what it let through.
//! - **The body deadline**: tower-http's `RequestBodyTimeoutLayer` restarts its timer with each
//!   frame, so a body dripped a byte at a time never times out
//!   (`a_body_dripped_a_byte_at_a_time_still_meets_the_deadline_for_the_whole_body` in
//!   `tests/http/http_layers.rs`); its `TimeoutLayer` times the whole response, which would end
//!   long tool calls and event streams. Ours counts the whole body once.
//! - **No concurrency limit layer**: tower's `ConcurrencyLimitLayer` bounds requests in
//!   flight, waiting for a permit in `poll_ready`; the server's bounds are on connections
//!   (held until the connection closes, pending ones closed to make room) and sessions
//!   (refused with a JSON-RPC error), which a count of requests does not give.
//! - **The session cap and idle expiry** (`src/sessions.rs`): MCP sessions are rmcp's; no
//!   layer knows them.
//! - **The head's size and time limits**: hyper's own (`max_header_size`,
//!   `header_read_timeout`), set by agent-serve.
//!
//! Measured (`benches/http_round_trip.rs`: an MCP `ping` in a session on a kept-alive
//! connection, against a bare hyper echo service with the same client on the same loopback;
//! release build on two cores shared with other builds): the router and its layers cost
//! nothing the bench can tell from noise (runs of the same binary vary by a third: before
//! 250, 355 and 410 µs; on axum 306, 485 and 332 µs; the floor 85 to 130 µs). What it did
//! find: each streamed answer waited about 40 ms for the client's delayed ACK (45 ms a
//! round trip before, 44 ms on axum) until agent-serve set `TCP_NODELAY`.
//!
//! Limits:
//!
//! - More token-less connection attempts at once than `max_pending_connections` plus the
//!   listen queue fill the queue, and the kernel drops new attempts, the client's with them;
//!   clients retry after 1, 3, 7 s. Floods that large need a firewall (connections per
//!   address).
//! - A head sent in pieces may be closed between two of them while the pending pool is full
//!   of connections waiting on their clients. Clients send a head at once, on connecting.
//! - Nothing is counted per address: an attacker on the same host or behind the same proxy
//!   has the client's address, and one with many addresses would not be slowed by it.
//! - Clients with the token compete with each other for the admitted slots, and with everyone
//!   for the CPU that reading heads takes.
//! - Without a token ([`McpServer::without_auth`], loopback only), every request that passes
//!   the `Origin` check admits its connection, so any local process that sends requests takes
//!   admitted slots as a client would; silent and half-sent connections still cannot keep a
//!   new one from being read.

use std::sync::Arc;
use std::time::Duration;

use agent_serve::Limits;
use tokio::net::{TcpListener, ToSocketAddrs};

use crate::auth::Auth;
use crate::error::McpError;
pub use crate::http_settings::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_PENDING_CONNECTIONS, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT,
};
use crate::server::McpServer;
use crate::sessions::BoundedSessions;
use endpoint::Endpoint;

mod answers;
mod body;
mod endpoint;

/// The largest request head (request line and headers) read; a larger one is answered `431`.
/// hyper's own bound is its read buffer (about 400 KiB), so that many connections could hold
/// a hundred megabytes before any of them is authenticated.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How many established connections the kernel queues for [`McpServer::serve_http`] (and
/// [`bind`]) until the server accepts them; Linux caps it at `net.core.somaxconn` (4096 by
/// default since Linux 5.4).
pub const LISTEN_BACKLOG: u32 = agent_serve::LISTEN_BACKLOG;

/// A listener on `addr` as [`McpServer::serve_http`] binds it: on the first address `addr`
/// resolves to that can be bound, with `SO_REUSEADDR` on Unix (as [`TcpListener::bind`] sets
/// it) and a listen queue of [`LISTEN_BACKLOG`].
pub async fn bind(addr: impl ToSocketAddrs) -> Result<TcpListener, McpError> {
    agent_serve::bind(addr)
        .await
        .map_err(|e| McpError::io("binding the MCP HTTP server", e))
}

impl McpServer {
    /// Requires `Authorization: Bearer <token>` on every HTTP request (compared in constant
    /// time; `401` otherwise). The token must have at least
    /// [`MIN_TOKEN_LEN`](crate::auth::MIN_TOKEN_LEN) characters of letters, digits and
    /// `-._~+/`; [`generate_token`](crate::generate_token) makes a good one. Without this or
    /// [`McpServer::without_auth`], [`McpServer::serve_http`] generates a token and prints it on
    /// standard error.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.http.auth = Auth::Token(token.into().into());
        self
    }

    /// Serves HTTP without a token: anyone who can connect can call every tool. Allowed only
    /// when the listener is bound to a loopback address (`127.0.0.0/8`, `::1`); on any other
    /// address [`McpServer::serve_http`] refuses to start with [`McpError::HttpConfig`]. The
    /// `Origin` check still applies, so web pages cannot call the server from a browser.
    pub fn without_auth(mut self) -> Self {
        self.http.auth = Auth::Disabled;
        self
    }

    /// Web origins (`scheme://host[:port]`, e.g. `https://app.example.com`) whose pages may
    /// call the server from a browser. Requests without an `Origin` header (every client that
    /// is not a browser) are not affected. By default no cross-origin request is allowed; on a
    /// loopback bind the server's own `http://localhost:PORT`, `http://127.0.0.1:PORT` and
    /// `http://[::1]:PORT` are. See [`crate::origin`] for the rule.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.http
            .allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// At most `max` (at least 1) admitted connections open at once: connections that sent a
    /// request with the token (or, without auth, any request that passed the checks). Past
    /// it, such a request waits until an admitted connection closes. Default
    /// [`DEFAULT_MAX_CONNECTIONS`]. Each MCP client usually holds two (its requests and its
    /// event stream). Connections without the token never take one; see the
    /// [module docs](self).
    pub fn max_connections(mut self, max: usize) -> Self {
        self.http.max_connections = max;
        self
    }

    /// At most `max` (at least 1) connections open at once that have not sent a request with
    /// the token yet; past it, the oldest of them that waits on its client (everything it sent
    /// was read, and is no whole request head) is closed. Default
    /// [`DEFAULT_MAX_PENDING_CONNECTIONS`]. See the [module docs](self).
    pub fn max_pending_connections(mut self, max: usize) -> Self {
        self.http.max_pending_connections = max;
        self
    }

    /// How long a client has to send a request's head, counted from when the server starts
    /// waiting for it, so it also closes a kept-alive connection idle that long; a new
    /// connection has half of it for its first head. Default [`DEFAULT_HEADER_READ_TIMEOUT`];
    /// must not be zero.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.http.header_read_timeout = timeout;
        self
    }

    /// How long a client has to send a POSTed body once its head arrived; later, the request
    /// is answered `408` and the connection closed. Default [`DEFAULT_BODY_READ_TIMEOUT`]; must
    /// not be zero.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.http.body_read_timeout = timeout;
        self
    }

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

    /// Serves MCP's streamable HTTP transport on `addr`, at `http://ADDR/mcp`
    /// ([`HTTP_PATH`](crate::server::HTTP_PATH)), until the task is dropped. Each client session gets its own
    /// [`RunScope`](agent_core::RunScope). See the [module docs](self) for what every
    /// request and connection goes through.
    ///
    /// Fails with [`McpError::HttpConfig`] before serving when the settings are unsafe
    /// ([`McpServer::without_auth`] off loopback, a weak token, a malformed origin, a zero
    /// limit), and with [`McpError::Io`] when `addr` cannot be bound. Once serving, it does not
    /// return.
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> Result<(), McpError> {
        self.serve_http_on(bind(addr).await?).await
    }

    /// Like [`McpServer::serve_http`] on a listener bound already (to port 0 in tests, say);
    /// [`bind`] binds one as `serve_http` does.
    pub async fn serve_http_on(self, listener: TcpListener) -> Result<(), McpError> {
        let bound = listener
            .local_addr()
            .map_err(|e| McpError::io("reading the MCP HTTP server's address", e))?;
        let settings = self.http.clone();
        let endpoint = Endpoint::new(self, bound)?;
        let _reaper = AbortOnDrop(tokio::spawn(reap_idle_sessions(
            endpoint.sessions.clone(),
            settings.session_idle_timeout,
        )));
        let limits = Limits {
            max_admitted: settings.max_connections,
            max_pending: settings.max_pending_connections,
            first_head_timeout: settings.header_read_timeout / 2,
            header_read_timeout: settings.header_read_timeout,
            max_header_bytes: MAX_HEADER_BYTES,
        };
        agent_serve::accept_forever_tower(listener, "MCP", endpoint.router(), limits).await;
        Ok(())
    }
}

/// Aborts a background task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn reap_idle_sessions(sessions: Arc<BoundedSessions>, idle: Duration) {
    let tick = (idle / 2).clamp(Duration::from_millis(10), Duration::from_secs(15));
    loop {
        tokio::time::sleep(tick).await;
        sessions.reap().await;
    }
}
