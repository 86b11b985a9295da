//! The HTTP side of the server: the routes, and what a request goes through before a method
//! runs. The server is an axum router ([`A2aServer::into_router`]) served by agent-serve's
//! network edge, with [`A2aServer::serve`] (one line) or mounted in an application's app
//! beside an MCP endpoint on one port.
//!
//! Every request first meets the edge (agent-serve's crate docs say each step and each limit):
//! its `Host` settled, its **`Origin`** checked (present and not allowed: `403`, nothing of it
//! read further or run; allowed: no `Origin`, an origin listed with
//! [`A2aServer::allowed_origins`], and on a loopback bind the server's own). The check applies
//! to the card too: the server sends no CORS headers for it, so no page on another origin could
//! read the card anyway, and one rule for every route leaves nothing to get wrong.
//!
//! Then, by path:
//!
//! - `GET /.well-known/agent-card.json`: the agent card, to anyone (it says how to
//!   authenticate). Reading it does **not** admit the connection: the card is public, so a
//!   request for it proves nothing, and a client that only read it must not hold one of the
//!   slots kept for clients with the token. It is answered on the pending connection, with
//!   `Connection: close`; a client sends its JSON-RPC requests on a new connection, which its
//!   token admits. Another method: `405`.
//! - the JSON-RPC path (`/`), behind the edge's guard, in this order:
//!   1. `Authorization: Bearer <token>` — missing or wrong: `401` with `WWW-Authenticate:
//!      Bearer realm="a2a"`. Passing it **admits** the connection (waiting, if every admitted
//!      slot is taken, for one to free);
//!   2. the body, read whole within [`A2aServer::body_read_timeout`] (`408`) and
//!      [`A2aServer::max_body_bytes`] (`413`);
//!   3. the method: not `POST`, `405`;
//!   4. `A2A-Version` — present and not `1.x`: `VersionNotSupportedError` (−32009);
//!   5. JSON-RPC: invalid JSON −32700, not a request −32600, unknown method −32601, bad params
//!      −32602 (HTTP `200`, as JSON-RPC errors are);
//!   6. the method: a JSON answer, or `text/event-stream` whose events are JSON-RPC answers, with a
//!      `: keep-alive` comment every 15 s of silence.
//! - anything else: `404`.
//!
//! Connections are the edge's: pending until a request passes the token (at most
//! [`A2aServer::max_pending_connections`], the oldest that waits on its client closed to make
//! room), at most [`A2aServer::max_connections`] admitted (an open event stream holds one),
//! heads within [`A2aServer::header_read_timeout`] and at most 64 KiB.
//!
//! [`A2aServer::allowed_origins`]: crate::A2aServer::allowed_origins
//! [`A2aServer::max_pending_connections`]: crate::A2aServer::max_pending_connections
//! [`A2aServer::max_connections`]: crate::A2aServer::max_connections
//! [`A2aServer::header_read_timeout`]: crate::A2aServer::header_read_timeout
//! [`A2aServer::body_read_timeout`]: crate::A2aServer::body_read_timeout
//! [`A2aServer::max_body_bytes`]: crate::A2aServer::max_body_bytes
//! [`A2aServer::into_router`]: crate::A2aServer::into_router
//! [`A2aServer::serve`]: crate::A2aServer::serve

use std::convert::Infallible;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_serve::{Bound, Guard, plain};
use axum::Router;
use axum::body::Body;
use axum::extract::{Extension, Request};
use axum::response::Response;
use axum::routing::any;
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::{Method, StatusCode};
use serde_json::Value;

use crate::jsonrpc::{self, RpcError, VERSION_NOT_SUPPORTED};
use crate::methods::{self, Answer};
use crate::run::RunContext;
use crate::types::{AGENT_CARD_PATH, StreamResponse};

pub use agent_serve::{LISTEN_BACKLOG, bind};

/// How often a silent event stream gets a comment, so that proxies and clients see it alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Makes the card's JSON for the URL it names.
pub(crate) type MakeCard = dyn Fn(&str) -> Vec<u8> + Send + Sync;

/// Everything a request needs.
pub(crate) struct Endpoint {
    pub(crate) run: RunContext,
    /// The card as served: made once, with the server's public URL, or with the address the
    /// edge is bound to (the first request for it says which).
    pub(crate) card: OnceLock<Bytes>,
    pub(crate) make_card: Box<MakeCard>,
    pub(crate) public_url: Option<String>,
    pub(crate) rpc_path: &'static str,
}

impl Endpoint {
    /// The router: the card (public), the JSON-RPC path behind the edge's [`Guard`]; no
    /// fallback (an application that merges it has its own; `serve` adds
    /// [`Endpoint::not_found`]).
    pub(crate) fn router(self) -> Router {
        let endpoint = Arc::new(self);
        let rpc_path = endpoint.rpc_path;
        let (for_card, for_rpc) = (endpoint.clone(), endpoint);
        let card = any(move |bound: Option<Extension<Bound>>, request: Request| {
            let endpoint = for_card.clone();
            async move { endpoint.card(request.method(), bound.map(|b| b.0)) }
        });
        let rpc = any(move |request: Request| {
            let endpoint = for_rpc.clone();
            async move { endpoint.handle(request).await }
        });
        let guarded = Router::new()
            .route(rpc_path, rpc)
            .route_layer(Guard::new("a2a"));
        Router::new().route(AGENT_CARD_PATH, card).merge(guarded)
    }

    /// The answer to a path no route has, when the server is served alone.
    pub(crate) fn not_found() -> Response {
        plain(
            StatusCode::NOT_FOUND,
            "not found: the agent card is at /.well-known/agent-card.json",
        )
    }

    /// The answer to a request for the card.
    fn card(&self, method: &Method, bound: Option<Bound>) -> Response {
        if method != Method::GET && method != Method::HEAD {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the agent card is read with GET",
            );
        }
        let card = self.card.get_or_init(|| {
            let url = match (&self.public_url, bound) {
                (Some(url), _) => url.clone(),
                (None, Some(Bound(addr))) => format!("http://{addr}{}", self.rpc_path),
                (None, None) => self.rpc_path.to_owned(),
            };
            Bytes::from((self.make_card)(&url))
        });
        let mut response = Response::new(Body::from(card.clone()));
        set(&mut response, CONTENT_TYPE, "application/json");
        set(&mut response, CACHE_CONTROL, "public, max-age=300");
        response
    }

    /// A request that passed the edge's guard (token, body): steps 3 to 6 of the
    /// [module docs](self).
    async fn handle(&self, request: Request) -> Response {
        if request.method() != Method::POST {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the JSON-RPC endpoint takes POST requests",
            );
        }
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
        // Whole already: the guard read it within the edge's limits.
        let body = match request.into_body().collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    format!("the request body could not be read: {error}"),
                );
            }
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
}

/// An SSE response: each event a JSON-RPC answer with `id`.
fn event_stream(id: Value, events: BoxStream<'static, StreamResponse>) -> Response {
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
    let mut response = Response::new(Body::new(StreamBody::new(frames)));
    set(&mut response, CONTENT_TYPE, "text/event-stream");
    set(&mut response, CACHE_CONTROL, "no-store");
    response
}

fn set(response: &mut Response, name: hyper::header::HeaderName, value: &'static str) {
    response
        .headers_mut()
        .insert(name, HeaderValue::from_static(value));
}

fn json(status: StatusCode, value: &Value) -> Response {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    set(&mut response, CONTENT_TYPE, "application/json");
    response
}
