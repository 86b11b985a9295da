//! The HTTP side of the server: its connections, the two routes, and what a request goes
//! through before a method runs.
//!
//! Every request is first checked for its **`Origin`**: present and not allowed, it is answered
//! `403`, and nothing of it is read further or run. Allowed: no `Origin` (every client that is
//! not a browser), an origin listed with [`A2aServer::allowed_origins`], and on a loopback bind
//! the server's own `http://localhost:PORT`, `http://127.0.0.1:PORT`, `http://[::1]:PORT`;
//! anything else, `null` and a malformed or repeated header included, is refused. Origins are
//! compared as RFC 6454 tuples (scheme and host in any case, a default port written or not).
//! The check applies to the card too: the server sends no CORS headers, so no page on another
//! origin could read the card anyway, and one rule for every route leaves nothing to get wrong.
//!
//! Then, by path:
//!
//! - `GET /.well-known/agent-card.json`: the agent card, to anyone (it says how to
//!   authenticate). Reading it does **not** admit the connection: the card is public, so a
//!   request for it proves nothing, and a client that only read it must not hold one of the
//!   slots kept for clients with the token. It is answered on the pending connection, with
//!   `Connection: close`; a client sends its JSON-RPC requests on a new connection, which its
//!   token admits. (Keeping the connection open, still pending, would save that client a
//!   connection but offer keep-alive to anyone, which no answer without the token does.)
//! - `POST` to the JSON-RPC path (`/`), in this order:
//!   1. `Authorization: Bearer <token>` — missing or wrong: `401` with `WWW-Authenticate`.
//!      Passing it **admits** the connection (waiting, if every admitted slot is taken, for one
//!      to free);
//!   2. `A2A-Version` — present and not `1.x`: `VersionNotSupportedError` (−32009);
//!   3. the body, read within the body timeout (`408`) and the size limit (`413`, with a
//!      JSON-RPC error);
//!   4. JSON-RPC: invalid JSON −32700, not a request −32600, unknown method −32601, bad params
//!      −32602 (HTTP `200`, as JSON-RPC errors are);
//!   5. the method: a JSON answer, or `text/event-stream` whose events are JSON-RPC answers, with a
//!      `: keep-alive` comment every 15 s of silence.
//! - anything else: `404` (`405` for another method on a known path).
//!
//! And every connection, through agent-serve's pools (the same as agent-mcp's HTTP server):
//!
//! - A connection is **pending** until a request passes the token check, which admits it. At
//!   most [`A2aServer::max_pending_connections`] connections are pending and at most
//!   [`A2aServer::max_connections`] admitted, so connections without the token never take an
//!   admitted slot. Any answer on a pending connection (`401`, `403`, `404`, `405`, the card)
//!   carries `Connection: close` and ends it.
//! - New connections are accepted and read as they come, however many pending ones sit silent
//!   or send half a head: when the pending pool is full, the oldest pending connection that
//!   waits on its client (the server read everything it sent and found no whole request head)
//!   is closed without an answer (reset) to make room. One whose bytes have not been read yet is
//!   never chosen, and one told to close reads what it was sent first, so a request with the
//!   token that had arrived is still served. When none can be chosen, accepting pauses and new
//!   connections wait in the listen queue ([`LISTEN_BACKLOG`] with [`bind`]; tokio's
//!   `TcpListener::bind` asks for 1024).
//! - A pending connection has half of [`A2aServer::header_read_timeout`] (5 s by default) to
//!   send its first request head; any head must arrive within the whole timeout, counted from
//!   when the server starts waiting for it, which also closes idle kept-alive connections. A
//!   head has at most 64 KiB (`431` past it). An answer being streamed is not limited.
//! - An admitted connection keeps its slot until it closes (an open event stream holds one).
//! - An error from `accept()` is logged and retried after a pause that doubles from 10 ms to
//!   1 s; it never ends [`A2aServer::serve`].
//!
//! Limits: more token-less connection attempts at once than the pending pool and the listen
//! queue hold fill the queue, and the kernel drops new attempts, a client's among them (it
//! retries after 1, 3, 7 s); floods that large need a firewall. A head sent in pieces may be
//! closed between two of them while the pending pool is full of connections waiting on their
//! clients. Nothing is counted per address. Clients with the token compete with each other for
//! the admitted slots.
//!
//! [`A2aServer::allowed_origins`]: crate::A2aServer::allowed_origins
//! [`A2aServer::max_pending_connections`]: crate::A2aServer::max_pending_connections
//! [`A2aServer::max_connections`]: crate::A2aServer::max_connections
//! [`A2aServer::header_read_timeout`]: crate::A2aServer::header_read_timeout
//! [`A2aServer::serve`]: crate::A2aServer::serve

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agent_serve::Origins;
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use tokio::net::{TcpListener, ToSocketAddrs};

use crate::error::A2aError;
use crate::jsonrpc::{self, INVALID_REQUEST, RpcError, VERSION_NOT_SUPPORTED};
use crate::methods::{self, Answer};
use crate::run::RunContext;
use crate::types::{AGENT_CARD_PATH, StreamResponse};

pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// How often a silent event stream gets a comment, so that proxies and clients see it alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The most a request head may have.
pub(crate) const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How many established connections the kernel queues for a listener of [`bind`] until the
/// server accepts them; Linux caps it at `net.core.somaxconn` (4096 by default since Linux 5.4).
pub const LISTEN_BACKLOG: u32 = agent_serve::LISTEN_BACKLOG;

/// A listener on `addr` for [`A2aServer::serve`](crate::A2aServer::serve): on the first address
/// `addr` resolves to that can be bound, with `SO_REUSEADDR` on Unix (as
/// `TcpListener::bind` sets it) and a listen queue of [`LISTEN_BACKLOG`], where new connections
/// wait while the server's pending pool cannot make room.
pub async fn bind(addr: impl ToSocketAddrs) -> Result<TcpListener, A2aError> {
    agent_serve::bind(addr)
        .await
        .map_err(|source| A2aError::Io {
            context: "binding the A2A server".into(),
            source,
        })
}

/// Everything a request needs.
pub(crate) struct Endpoint {
    pub(crate) run: RunContext,
    pub(crate) card: Bytes,
    pub(crate) token: Arc<str>,
    pub(crate) origins: Origins,
    pub(crate) rpc_path: String,
    pub(crate) max_body_bytes: usize,
    pub(crate) body_read_timeout: Duration,
}

impl agent_serve::Service for Endpoint {
    type Body = Body;
    const NAME: &'static str = "A2A";

    /// The `Origin`, the route and the token, on the head alone: a POST with the token to the
    /// JSON-RPC path admits its connection; everything else (a refusal, the card) is answered
    /// here and leaves it pending.
    fn admit(&self, request: &Request<Incoming>) -> Result<(), Box<Response<Body>>> {
        self.origins.check(request.headers())?;
        let path = request.uri().path();
        if path == AGENT_CARD_PATH {
            return Err(Box::new(self.card(request.method())));
        }
        if path != self.rpc_path {
            return Err(Box::new(plain(
                StatusCode::NOT_FOUND,
                "not found: the agent card is at /.well-known/agent-card.json",
            )));
        }
        if request.method() != Method::POST {
            return Err(Box::new(plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the JSON-RPC endpoint takes POST requests",
            )));
        }
        crate::auth::check(request.headers(), &self.token)
            .map_err(|token_sent| Box::new(unauthorized(token_sent)))
    }

    async fn serve(&self, request: Request<Incoming>) -> Response<Body> {
        self.handle(request).await
    }
}

impl Endpoint {
    /// The answer to a request for the card.
    fn card(&self, method: &Method) -> Response<Body> {
        if method != Method::GET && method != Method::HEAD {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the agent card is read with GET",
            );
        }
        let mut response = Response::new(full(self.card.clone()));
        set(&mut response, CONTENT_TYPE, "application/json");
        set(&mut response, CACHE_CONTROL, "public, max-age=300");
        response
    }

    /// A JSON-RPC request that passed [`agent_serve::Service::admit`]: steps 2 to 5 of the
    /// [module docs](self).
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if let Some(version) = request.headers().get("a2a-version") {
            let version = version.to_str().unwrap_or("").trim();
            if !version.is_empty() && version.split('.').next() != Some("1") {
                let error = RpcError::new(
                    VERSION_NOT_SUPPORTED,
                    format!("A2A version `{version}` is not supported: this agent speaks 1.0"),
                );
                return json(StatusCode::OK, &jsonrpc::error(&Value::Null, &error));
            }
        }
        let body = match self.read_body(request.into_body()).await {
            Ok(body) => body,
            Err(response) => return *response,
        };
        let rpc = match jsonrpc::parse_request(&body) {
            Ok(rpc) => rpc,
            Err((id, error)) => return json(StatusCode::OK, &jsonrpc::error(&id, &error)),
        };
        match methods::call(&self.run, &rpc.method, rpc.params).await {
            Ok(Answer::Result(result)) => json(StatusCode::OK, &jsonrpc::result(&rpc.id, result)),
            Ok(Answer::Stream(events)) => event_stream(rpc.id, events),
            Err(error) => json(StatusCode::OK, &jsonrpc::error(&rpc.id, &error)),
        }
    }

    async fn read_body(&self, body: Incoming) -> Result<Bytes, Box<Response<Body>>> {
        let limited = Limited::new(body, self.max_body_bytes);
        match tokio::time::timeout(self.body_read_timeout, limited.collect()).await {
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
            Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => {
                let error = RpcError::new(
                    INVALID_REQUEST,
                    format!(
                        "payload too large: a request body may have at most {} bytes",
                        self.max_body_bytes
                    ),
                );
                Err(Box::new(json(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &jsonrpc::error(&Value::Null, &error),
                )))
            }
            Ok(Err(error)) => Err(Box::new(plain(
                StatusCode::BAD_REQUEST,
                &format!("the request body could not be read: {error}"),
            ))),
            Err(_) => Err(Box::new(plain(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "request timeout: the body did not arrive within {}s",
                    self.body_read_timeout.as_secs_f64()
                ),
            ))),
        }
    }
}

/// An SSE response: each event a JSON-RPC answer with `id`.
fn event_stream(id: Value, events: BoxStream<'static, StreamResponse>) -> Response<Body> {
    let frames = futures::stream::unfold((events, id), |(mut events, id)| async move {
        let bytes = tokio::select! {
            next = events.next() => {
                let event = next?;
                let result = serde_json::to_value(&event).expect("protocol types serialize");
                let answer = jsonrpc::result(&id, result);
                Bytes::from(format!("data: {answer}\n\n"))
            }
            () = tokio::time::sleep(KEEP_ALIVE) => Bytes::from_static(b": keep-alive\n\n"),
        };
        Some((Ok::<_, Infallible>(Frame::data(bytes)), (events, id)))
    });
    let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
    set(&mut response, CONTENT_TYPE, "text/event-stream");
    set(&mut response, CACHE_CONTROL, "no-store");
    response
}

fn full(bytes: Bytes) -> Body {
    Full::new(bytes).boxed_unsync()
}

fn set(response: &mut Response<Body>, name: hyper::header::HeaderName, value: &'static str) {
    response
        .headers_mut()
        .insert(name, HeaderValue::from_static(value));
}

fn json(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(full(Bytes::from(value.to_string())));
    *response.status_mut() = status;
    set(&mut response, CONTENT_TYPE, "application/json");
    response
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(full(Bytes::from(text.to_owned())));
    *response.status_mut() = status;
    set(&mut response, CONTENT_TYPE, "text/plain; charset=utf-8");
    response
}

fn unauthorized(token_sent: bool) -> Response<Body> {
    let mut response = plain(
        StatusCode::UNAUTHORIZED,
        "unauthorized: this A2A agent requires the header `Authorization: Bearer <token>`",
    );
    let challenge = if token_sent {
        r#"Bearer realm="a2a", error="invalid_token""#
    } else {
        r#"Bearer realm="a2a""#
    };
    set(&mut response, WWW_AUTHENTICATE, challenge);
    response
}
