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
//! What every request to `/mcp` goes through, in order:
//!
//! 1. **Origin** ([`crate::origin`] rules): present and not allowed → `403`.
//! 2. **Bearer token** ([`crate::auth`]): missing or wrong → `401` with
//!    `WWW-Authenticate: Bearer`. Without [`McpServer::bearer_token`] or
//!    [`McpServer::without_auth`], a token is generated when serving starts and printed on
//!    standard error. `without_auth` is refused on any address but loopback.
//! 3. **Body** (a POST of JSON): read within [`McpServer::body_read_timeout`] (`408`) and
//!    rmcp's body limit (`413`, 4 MiB by default), then checked as JSON-RPC: malformed JSON
//!    −32700, no JSON-RPC message −32600, wrong params for an MCP method −32602 (all `400`).
//! 4. **Session cap**: an `initialize` past [`McpServer::max_sessions`] live sessions → `503`
//!    with a JSON-RPC error (−32000) saying the server is at its session limit. Sessions
//!    without an open request for [`McpServer::session_idle_timeout`] are closed.
//! 5. rmcp's streamable-HTTP service: its `Host` allowlist (loopback names by default, against
//!    DNS rebinding; see [`McpServer::http_config`]), `Accept` and `Content-Type` checks, the
//!    session and the call.
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

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agent_serve::{Limits, Origins, is_loopback};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{CONNECTION, CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use rmcp::transport::StreamableHttpService;
use tokio::net::{TcpListener, ToSocketAddrs};

use crate::auth::{self, Auth};
use crate::error::McpError;
pub use crate::http_settings::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_PENDING_CONNECTIONS, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT,
};
use crate::jsonrpc;
use crate::server::{HTTP_PATH, McpServer};
use crate::sessions::{BoundedSessions, SessionError};

/// A response of the HTTP server.
pub(crate) type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

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

    /// Serves MCP's streamable HTTP transport on `addr`, at `http://ADDR/mcp` ([`HTTP_PATH`]),
    /// until the task is dropped. Each client session gets its own
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
        let endpoint = Arc::new(Endpoint::new(self, bound)?);
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
        agent_serve::accept_forever(listener, endpoint, limits).await;
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

/// What every connection of one server shares.
struct Endpoint {
    service: StreamableHttpService<McpServer, BoundedSessions>,
    sessions: Arc<BoundedSessions>,
    token: Option<Arc<str>>,
    origins: Origins,
    body_read_timeout: Duration,
    max_body_bytes: usize,
    sessions_enabled: bool,
}

impl Endpoint {
    /// Checks the settings of `server` for a listener bound to `bound` and builds the endpoint.
    fn new(server: McpServer, bound: SocketAddr) -> Result<Self, McpError> {
        let settings = server.http.clone();
        for (name, zero) in [
            ("max_connections", settings.max_connections == 0),
            (
                "max_pending_connections",
                settings.max_pending_connections == 0,
            ),
            ("max_sessions", settings.max_sessions == 0),
            (
                "header_read_timeout",
                settings.header_read_timeout.is_zero(),
            ),
            ("body_read_timeout", settings.body_read_timeout.is_zero()),
            (
                "session_idle_timeout",
                settings.session_idle_timeout.is_zero(),
            ),
        ] {
            if zero {
                return Err(McpError::HttpConfig(format!("`{name}` must not be zero")));
            }
        }
        let token = match settings.auth {
            Auth::Token(token) => {
                auth::validate_token(&token)?;
                Some(token)
            }
            Auth::Generate => {
                let token = crate::generate_token()?;
                eprintln!(
                    "agent-mcp: the MCP server at http://{bound}{HTTP_PATH} requires the header `Authorization: Bearer {token}`"
                );
                Some(token.into())
            }
            Auth::Disabled if is_loopback(bound.ip()) => None,
            Auth::Disabled => {
                return Err(McpError::HttpConfig(format!(
                    "`without_auth` is allowed only on a loopback address, and {bound} can be \
                     reached from other hosts; set a bearer token (agent_mcp::generate_token())"
                )));
            }
        };
        let origins =
            Origins::new(&settings.allowed_origins, bound).map_err(McpError::HttpConfig)?;
        let config = server.http_config.clone();
        let sessions = Arc::new(BoundedSessions::new(
            settings.max_sessions,
            settings.session_idle_timeout,
        ));
        let template = server;
        let service = StreamableHttpService::new(
            move || Ok(template.for_new_session()),
            sessions.clone(),
            config.clone(),
        );
        Ok(Endpoint {
            service,
            sessions,
            token,
            origins,
            body_read_timeout: settings.body_read_timeout,
            max_body_bytes: config.max_request_body_bytes,
            sessions_enabled: config.legacy_session_mode,
        })
    }

    /// The body checks of the [module docs](self), then rmcp.
    async fn handle(&self, request: Request<Incoming>) -> HttpResponse {
        if request.method() != Method::POST || !is_json(request.headers()) {
            // rmcp answers these itself (a GET event stream, a DELETE, a wrong media type).
            return self.service.handle(request).await;
        }
        let (parts, body) = request.into_parts();
        let body = match self.read_body(body).await {
            Ok(body) => body,
            Err(response) => return *response,
        };
        let checked = match jsonrpc::check(&body) {
            Ok(checked) => checked,
            Err(rejected) => return rejected.into_response(),
        };
        if checked.is_initialize
            && self.sessions_enabled
            && !parts.headers.contains_key("mcp-session-id")
            && self.sessions.is_full().await
        {
            tracing::warn!(
                live = self.sessions.len(),
                "refused an MCP session: the server is at its session limit"
            );
            let full = SessionError::Full {
                max: self.sessions.max(),
            };
            return jsonrpc::error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                checked.id,
                jsonrpc::SERVER_BUSY,
                &full.to_string(),
            );
        }
        self.service
            .handle(Request::from_parts(parts, Full::new(body)))
            .await
    }

    /// The whole body, within the time and size limits.
    async fn read_body(&self, body: Incoming) -> Result<Bytes, Box<HttpResponse>> {
        let limited = Limited::new(body, self.max_body_bytes);
        match tokio::time::timeout(self.body_read_timeout, limited.collect()).await {
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
            Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => {
                Err(Box::new(plain(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "payload too large: a request body may have at most {} bytes",
                        self.max_body_bytes
                    ),
                )))
            }
            Ok(Err(error)) => Err(Box::new(plain(
                StatusCode::BAD_REQUEST,
                format!("the request body could not be read: {error}"),
            ))),
            Err(_elapsed) => {
                let mut response = plain(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "request timeout: the body did not arrive within {:?}",
                        self.body_read_timeout
                    ),
                );
                response
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
                Err(Box::new(response))
            }
        }
    }
}

impl agent_serve::Service for Endpoint {
    type Body = BoxBody<Bytes, Infallible>;
    const NAME: &'static str = "MCP";

    /// The path, the `Origin` and the token: what a request must pass before anything of it
    /// but its head is read, and what admits its connection.
    fn admit(&self, request: &Request<Incoming>) -> Result<(), Box<HttpResponse>> {
        if request.uri().path() != HTTP_PATH {
            return Err(Box::new(not_found()));
        }
        self.origins.check(request.headers())?;
        match &self.token {
            Some(token) => auth::check(request.headers(), token),
            None => Ok(()),
        }
    }

    async fn serve(&self, request: Request<Incoming>) -> HttpResponse {
        self.handle(request).await
    }
}

/// Whether the request's `Content-Type` is `application/json` (parameters aside).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

fn plain(status: StatusCode, text: String) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn not_found() -> HttpResponse {
    plain(
        StatusCode::NOT_FOUND,
        format!("not found: the MCP endpoint is {HTTP_PATH}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::Registry;

    fn endpoint(server: McpServer, addr: &str) -> Result<Endpoint, McpError> {
        Endpoint::new(server, addr.parse().unwrap())
    }

    #[test]
    fn without_auth_is_refused_off_loopback() {
        let server = || McpServer::new(Registry::new()).without_auth();
        assert!(endpoint(server(), "127.0.0.1:80").is_ok());
        assert!(endpoint(server(), "[::1]:80").is_ok());
        for addr in ["0.0.0.0:80", "[::]:80", "192.168.1.2:80"] {
            let error = endpoint(server(), addr).err().expect("refused");
            assert!(
                matches!(&error, McpError::HttpConfig(m) if m.contains("without_auth")),
                "{error}"
            );
        }
        // With a token, any address will do.
        let token = crate::generate_token().unwrap();
        assert!(
            endpoint(
                McpServer::new(Registry::new()).bearer_token(token),
                "0.0.0.0:80"
            )
            .is_ok()
        );
    }

    #[test]
    fn weak_tokens_bad_origins_and_zero_limits_are_refused() {
        let server = || McpServer::new(Registry::new()).bearer_token("0123456789abcdef");
        assert!(endpoint(server(), "127.0.0.1:80").is_ok());
        for refused in [
            McpServer::new(Registry::new()).bearer_token("short"),
            server().allowed_origins(["app.example.com"]),
            server().max_connections(0),
            server().max_pending_connections(0),
            server().max_sessions(0),
            server().header_read_timeout(Duration::ZERO),
            server().body_read_timeout(Duration::ZERO),
            server().session_idle_timeout(Duration::ZERO),
        ] {
            let error = endpoint(refused, "127.0.0.1:80").err().expect("refused");
            assert!(matches!(error, McpError::HttpConfig(_)), "{error}");
        }
    }
}
