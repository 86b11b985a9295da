//! The HTTP side of the server: connections (bounded, with hyper's header-read timeout), the
//! two routes, and what a request goes through before a method runs.
//!
//! - `GET /.well-known/agent-card.json`: the agent card, to anyone (it says how to
//!   authenticate).
//! - `POST` to the JSON-RPC path (`/`): in this order,
//!   1. `Authorization: Bearer <token>` — missing or wrong: `401` with `WWW-Authenticate`;
//!   2. `A2A-Version` — present and not `1.x`: `VersionNotSupportedError` (−32009);
//!   3. the body, read within the body timeout (`408`) and the size limit (`413`, with a
//!      JSON-RPC error);
//!   4. JSON-RPC: invalid JSON −32700, not a request −32600, unknown method −32601, bad params
//!      −32602 (HTTP `200`, as JSON-RPC errors are);
//!   5. the method: a JSON answer, or `text/event-stream` whose events are JSON-RPC answers, with a
//!      `: keep-alive` comment every 15 s of silence.
//! - anything else: `404` (`405` for another method on a known path).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::jsonrpc::{self, INVALID_REQUEST, RpcError, VERSION_NOT_SUPPORTED};
use crate::methods::{self, Answer};
use crate::run::RunContext;
use crate::types::{AGENT_CARD_PATH, StreamResponse};

pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// How often a silent event stream gets a comment, so that proxies and clients see it alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The most a request head may have.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Everything a request needs.
pub(crate) struct Endpoint {
    pub(crate) run: RunContext,
    pub(crate) card: Bytes,
    pub(crate) token: Arc<str>,
    pub(crate) rpc_path: String,
    pub(crate) max_body_bytes: usize,
    pub(crate) body_read_timeout: Duration,
}

/// Connection limits.
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    pub(crate) header_read_timeout: Duration,
}

/// Accepts connections until the task is dropped; at most `max_connections` at once (further
/// ones wait in the listen queue). An `accept()` error is logged and retried after a pause.
pub(crate) async fn accept_forever(listener: TcpListener, endpoint: Arc<Endpoint>, limits: Limits) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let mut pause = Duration::from_millis(10);
    loop {
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                pause = Duration::from_millis(10);
                stream
            }
            Err(error) => {
                tracing::warn!(%error, "agent-a2a: accept() failed; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let endpoint = endpoint.clone();
        let header_read_timeout = limits.header_read_timeout;
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |request| {
                let endpoint = endpoint.clone();
                async move { Ok::<_, Infallible>(endpoint.handle(request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                .max_buf_size(MAX_HEADER_BYTES)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            if let Err(error) = connection.await {
                tracing::debug!(%error, "agent-a2a: connection ended with an error");
            }
        });
    }
}

impl Endpoint {
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let path = request.uri().path();
        if path == AGENT_CARD_PATH {
            if request.method() != Method::GET && request.method() != Method::HEAD {
                return plain(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "the agent card is read with GET",
                );
            }
            let mut response = Response::new(full(self.card.clone()));
            set(&mut response, CONTENT_TYPE, "application/json");
            set(&mut response, CACHE_CONTROL, "public, max-age=300");
            return response;
        }
        if path != self.rpc_path {
            return plain(
                StatusCode::NOT_FOUND,
                "not found: the agent card is at /.well-known/agent-card.json",
            );
        }
        if request.method() != Method::POST {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the JSON-RPC endpoint takes POST requests",
            );
        }
        if let Err(token_sent) = crate::auth::check(request.headers(), &self.token) {
            return unauthorized(token_sent);
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
