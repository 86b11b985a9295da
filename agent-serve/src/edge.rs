//! [`Edge`]: the one options value of eugene's network edge (who may call, from which pages,
//! how many connections, how long and how large a request may be) and the one way to serve an
//! axum `Router` with it ([`Edge::serve`]). Its defaults are the `DEFAULT_*` constants here.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::response::Response;
use hyper::Request;
use hyper::body::Incoming;
use tokio::net::{TcpListener, ToSocketAddrs};
use tower_service::Service;

use crate::connections::{Limits, accept_forever, bind};
use crate::error::EdgeError;
use crate::loopback::is_loopback;
use crate::origin::Origins;
use crate::rules::{Bound, Rules};

/// How many admitted connections (that sent a request with the token) are open at once unless
/// [`Edge::max_connections`] says otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// How many connections not admitted yet are open at once unless
/// [`Edge::max_pending_connections`] says otherwise.
pub const DEFAULT_MAX_PENDING_CONNECTIONS: usize = 256;
/// How long a client has to send a request's head (and how long a kept-alive connection may sit
/// idle) unless [`Edge::header_read_timeout`] says otherwise.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client has to send a request's body unless [`Edge::body_read_timeout`] says
/// otherwise.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a write may wait on a client that reads nothing unless [`Edge::write_timeout`] says
/// otherwise.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest request body unless [`Edge::max_body_bytes`] says otherwise: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The largest request head (request line and headers); a larger one is answered `431`.
/// hyper's own bound is its read buffer (about 400 KiB), so that many connections could hold a
/// hundred megabytes before any of them is authenticated.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Who may use the server.
#[derive(Clone, Default)]
enum Auth {
    /// No choice made: a token is generated when serving starts and printed on stderr.
    #[default]
    Generate,
    /// Requests must carry this token.
    Token(Arc<str>),
    /// No token, allowed on a loopback address only.
    Disabled,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Generate => f.write_str("Generate"),
            Auth::Token(_) => f.write_str("Token(<redacted>)"),
            Auth::Disabled => f.write_str("Disabled"),
        }
    }
}

/// The settings of the network edge, checked when serving starts. See the
/// [crate docs](crate) for what each request and connection goes through.
///
/// ```no_run
/// use std::time::Duration;
/// use agent_serve::{Edge, Guard};
/// use axum::{Router, routing::post};
///
/// # #[tokio::main] async fn main() -> Result<(), agent_serve::EdgeError> {
/// let app = Router::new()
///     .route("/jobs", post(|| async { "queued" }))
///     .route_layer(Guard::new("jobs"));
/// Edge::new()
///     .bearer_token(agent_serve::generate_token()?)
///     .allowed_origins(["https://app.example.com"])
///     .max_connections(64)
///     .body_read_timeout(Duration::from_secs(10))
///     .serve("127.0.0.1:8080", app)
///     .await
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Edge {
    auth: Auth,
    allowed_origins: Vec<String>,
    max_connections: usize,
    max_pending_connections: usize,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    max_body_bytes: usize,
    write_timeout: Duration,
    name: String,
}

impl Default for Edge {
    fn default() -> Self {
        Edge::new()
    }
}

impl Edge {
    /// An edge with the `DEFAULT_*` settings and a token generated when serving starts
    /// (printed on standard error) unless [`Edge::bearer_token`] or [`Edge::without_auth`]
    /// says otherwise.
    pub fn new() -> Self {
        Edge {
            auth: Auth::Generate,
            allowed_origins: Vec::new(),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_pending_connections: DEFAULT_MAX_PENDING_CONNECTIONS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            name: "eugene".into(),
        }
    }

    /// Requires `Authorization: Bearer <token>` on every request to a guarded route (compared
    /// in constant time; `401` otherwise). The token must have at least
    /// [`MIN_TOKEN_LEN`](crate::MIN_TOKEN_LEN) characters of letters, digits and `-._~+/`;
    /// [`generate_token`](crate::generate_token) makes a good one.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.auth = Auth::Token(token.into().into());
        self
    }

    /// Serves without a token: anyone who can connect can use every guarded route. Allowed only
    /// when the listener is bound to a loopback address (`127.0.0.0/8`, `::1`); elsewhere
    /// serving refuses to start ([`EdgeError::WithoutAuthOffLoopback`]). The `Origin` check
    /// still applies, so web pages cannot call the server from a browser.
    pub fn without_auth(mut self) -> Self {
        self.auth = Auth::Disabled;
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

    /// At most `max` (at least 1) admitted connections open at once: connections that sent a
    /// request that passed a [`Guard`](crate::Guard). Past it, such a request waits until an
    /// admitted connection closes. Connections without the token never take one. Default
    /// [`DEFAULT_MAX_CONNECTIONS`].
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// At most `max` (at least 1) connections open at once that have not sent a request that
    /// passed a guard; past it, the oldest of them that waits on its client (everything it
    /// sent was read, and is no whole request head) is closed. Default
    /// [`DEFAULT_MAX_PENDING_CONNECTIONS`].
    pub fn max_pending_connections(mut self, max: usize) -> Self {
        self.max_pending_connections = max;
        self
    }

    /// How long a client has to send a request's head, counted from when the server starts
    /// waiting for it, so it also closes a kept-alive connection idle that long; a new
    /// connection has half of it for its first head. Default [`DEFAULT_HEADER_READ_TIMEOUT`];
    /// must not be zero.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a client has to send a guarded request's whole body once its head arrived;
    /// later, the request is answered `408` and the connection closed. Default
    /// [`DEFAULT_BODY_READ_TIMEOUT`]; must not be zero.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// The largest body of a guarded request, in bytes (`413` past it). Default
    /// [`DEFAULT_MAX_BODY_BYTES`]; must not be zero.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// How long a write may wait on a client that takes nothing (its receive window full: a
    /// client that never reads the event stream it asked for) before the connection is closed,
    /// freeing its slot. The timer runs only while a write waits, so a quiet stream or a slow
    /// reader that takes something within it is not affected. Default
    /// [`DEFAULT_WRITE_TIMEOUT`]; must not be zero.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// What the server is called in its log events and in the line that prints a generated
    /// token (`eugene` by default; the MCP and A2A servers name themselves).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Serves `app` on `addr` (bound with [`bind`](crate::bind)) until the future is dropped.
    /// Fails before serving when the settings are unsafe or impossible ([`EdgeError`]); once
    /// serving, it does not return.
    pub async fn serve(self, addr: impl ToSocketAddrs, app: Router) -> Result<(), EdgeError> {
        let listener = bind(addr).await.map_err(|source| EdgeError::Io {
            context: "binding the server's address",
            source,
        })?;
        self.serve_on(listener, app).await
    }

    /// Like [`Edge::serve`] on a listener bound already (to port 0 in tests, say);
    /// [`bind`](crate::bind) binds one with a deep listen queue.
    pub async fn serve_on(self, listener: TcpListener, app: Router) -> Result<(), EdgeError> {
        let bound = listener.local_addr().map_err(|source| EdgeError::Io {
            context: "reading the server's address",
            source,
        })?;
        let (rules, limits) = self.check(bound)?;
        let front = Front {
            rules: Arc::new(rules),
            bound: Bound(bound),
            app,
        };
        accept_forever(listener, self.name.into(), front, limits).await;
        Ok(())
    }

    /// The settings checked for a listener bound to `bound`: the rules every request is served
    /// under and the connections' limits.
    fn check(&self, bound: std::net::SocketAddr) -> Result<(Rules, Limits), EdgeError> {
        for (name, zero) in [
            ("max_connections", self.max_connections == 0),
            ("max_pending_connections", self.max_pending_connections == 0),
            ("header_read_timeout", self.header_read_timeout.is_zero()),
            ("body_read_timeout", self.body_read_timeout.is_zero()),
            ("max_body_bytes", self.max_body_bytes == 0),
            ("write_timeout", self.write_timeout.is_zero()),
        ] {
            if zero {
                return Err(EdgeError::Zero(name));
            }
        }
        let token = match &self.auth {
            Auth::Token(token) => {
                crate::bearer::validate_token(token)?;
                Some(token.clone())
            }
            Auth::Generate => {
                let token = crate::generate_token()?;
                eprintln!(
                    "{}: the server at http://{bound} requires the header `Authorization: Bearer {token}`",
                    self.name
                );
                Some(token.into())
            }
            Auth::Disabled if is_loopback(bound.ip()) => None,
            Auth::Disabled => return Err(EdgeError::WithoutAuthOffLoopback { bound }),
        };
        let rules = Rules {
            token,
            origins: Origins::new(&self.allowed_origins, bound)?,
            max_body_bytes: self.max_body_bytes,
            body_read_timeout: self.body_read_timeout,
        };
        let limits = Limits {
            max_admitted: self.max_connections,
            max_pending: self.max_pending_connections,
            first_head_timeout: self.header_read_timeout / 2,
            header_read_timeout: self.header_read_timeout,
            max_header_bytes: MAX_HEADER_BYTES,
            write_timeout: self.write_timeout,
        };
        Ok((rules, limits))
    }
}

/// What every request meets first, whatever its path: its `Host` settled ([`crate::host`]),
/// the `Origin` check, then the rules put in its extensions for the routes' guards.
#[derive(Clone)]
struct Front {
    rules: Arc<Rules>,
    bound: Bound,
    app: Router,
}

impl Service<Request<Incoming>> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<Incoming>) -> Self::Future {
        let checked = crate::host::settle(&mut request)
            .and_then(|()| self.rules.origins.check(request.headers()));
        if let Err(refused) = checked {
            return Box::pin(async move { Ok(*refused) });
        }
        request.extensions_mut().insert(self.rules.clone());
        request.extensions_mut().insert(self.bound);
        let mut app = self.app.clone();
        Box::pin(async move {
            std::future::poll_fn(|cx| Service::<Request<Body>>::poll_ready(&mut app, cx)).await?;
            app.call(request.map(Body::new)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(edge: Edge, addr: &str) -> Result<(), EdgeError> {
        edge.check(addr.parse().unwrap()).map(|_| ())
    }

    #[test]
    fn without_auth_is_refused_off_loopback() {
        assert!(check(Edge::new().without_auth(), "127.0.0.1:80").is_ok());
        assert!(check(Edge::new().without_auth(), "[::1]:80").is_ok());
        for addr in ["0.0.0.0:80", "[::]:80", "192.168.1.2:80"] {
            let error = check(Edge::new().without_auth(), addr).expect_err("refused");
            assert!(
                matches!(error, EdgeError::WithoutAuthOffLoopback { .. }),
                "{error}"
            );
        }
        let token = crate::generate_token().unwrap();
        assert!(check(Edge::new().bearer_token(token), "0.0.0.0:80").is_ok());
    }

    #[test]
    fn weak_tokens_bad_origins_and_zero_limits_are_refused() {
        let edge = || Edge::new().bearer_token("0123456789abcdef");
        assert!(check(edge(), "127.0.0.1:80").is_ok());
        let weak = check(Edge::new().bearer_token("short"), "127.0.0.1:80");
        assert!(matches!(weak, Err(EdgeError::WeakToken(_))), "{weak:?}");
        let origin = check(edge().allowed_origins(["app.example.com"]), "127.0.0.1:80");
        assert!(matches!(origin, Err(EdgeError::BadOrigin(o)) if o == "app.example.com"));
        for (zero, name) in [
            (edge().max_connections(0), "max_connections"),
            (edge().max_pending_connections(0), "max_pending_connections"),
            (
                edge().header_read_timeout(Duration::ZERO),
                "header_read_timeout",
            ),
            (
                edge().body_read_timeout(Duration::ZERO),
                "body_read_timeout",
            ),
            (edge().max_body_bytes(0), "max_body_bytes"),
            (edge().write_timeout(Duration::ZERO), "write_timeout"),
        ] {
            let error = check(zero, "127.0.0.1:80").expect_err(name);
            assert!(matches!(error, EdgeError::Zero(n) if n == name), "{error}");
        }
    }

    #[test]
    fn the_token_never_appears_in_debug_output() {
        let edge = Edge::new().bearer_token("0123456789abcdef-secret");
        assert!(!format!("{edge:?}").contains("secret"));
    }
}
