//! [`RecordingProxy`]: a loopback HTTP proxy to the real API that passes every request and
//! answer through unchanged (a streamed answer as it arrives) while keeping a redacted copy, and
//! writes the copies as a cassette when finished, whole or not at all.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, StatusCode};

use crate::llm::error_chain;

use super::error::CassetteError;
use super::format::{Body, Interaction, Response};
use super::limits::{MAX_BODY_BYTES, MAX_CASSETTE_BYTES, MAX_INTERACTIONS};
use super::redact::{
    Secrets, redact_body, redact_form, redact_headers, redact_request_headers, redact_url,
};
use super::serve::{self, BoxError, ServerBody};
use super::write::{to_yaml, write_atomic};

/// How long the upstream may take to begin its answer.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(300);
/// How long an answer the client stopped reading may stay silent while the rest is read for the
/// cassette.
const DRAIN_IDLE: Duration = Duration::from_secs(60);
/// How long [`RecordingProxy::finish`] waits for exchanges still under way.
const FINISH_WAIT: Duration = Duration::from_secs(60);

/// A recording proxy on a loopback port, in front of the real API: point a provider's base URL
/// at [`RecordingProxy::base_url`] (the upstream's path, e.g. `/v1`, is kept in it), make the
/// calls, then [`RecordingProxy::finish`] to write the cassette. Started by
/// [`Cassette::record`](super::Cassette::record).
///
/// - Requests reach the upstream with their headers as sent, the key included, except those of
///   the connection and `accept-encoding` (so the answer comes uncompressed and is kept as
///   text). Answers come back unchanged, a stream chunk by chunk as the upstream sends it; one
///   that breaks off breaks off for the client too.
/// - What is kept is redacted at once. Of a request's headers only those known to be safe
///   ([`SAFE_REQUEST_HEADERS`](super::SAFE_REQUEST_HEADERS): `content-type`, `accept`,
///   `user-agent`, `anthropic-version`, ...) keep their values; every other one becomes
///   `[redacted]`, since a client may send a credential under any name. Of a response's
///   headers: `set-cookie`, the account headers (`openai-organization`, `openai-project`,
///   `anthropic-organization-id`) and every header with `key`, `token`, `secret`,
///   `password`, `auth`, `credential(s)`, `sig(nature)`, `session`, `code`, ... among its
///   name's words. The same words redact query parameters, and the string or number values of
///   JSON body fields at any depth (`client_secret`, `password`; not `max_tokens` or
///   `prompt_cache_key`), which then match any value on replay. The `host` header is not kept.
/// - Before writing, every value so redacted (8 characters or more), and each one given to
///   [`RecordingProxy::secret`], is searched for in everything that would be written: found
///   (the API echoed the key in a body, say), the cassette is refused with
///   [`CassetteError::Secret`], naming the secret by where it came from and where it was found
///   (never showing it), and nothing is written.
/// - Interactions are written in the order their requests arrived. A request the upstream
///   never answered (it could not be reached: the client got `502`) is left out, and listed in
///   [`Recorded::skipped`]. An answer the client stopped reading early is still read to its end
///   for the cassette.
/// - Nothing is written unless [`RecordingProxy::finish`] is called; dropping the proxy stops
///   it and writes nothing.
pub struct RecordingProxy {
    path: PathBuf,
    base_url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

/// What [`RecordingProxy::finish`] wrote.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The cassette.
    pub path: PathBuf,
    /// How many interactions it holds.
    pub interactions: usize,
    /// The requests left out because no answer came (each with why).
    pub skipped: Vec<String>,
}

struct Shared {
    upstream: String,
    client: reqwest::Client,
    book: Mutex<Book>,
    in_flight: tokio::sync::watch::Sender<usize>,
}

#[derive(Default)]
struct Book {
    slots: Vec<Slot>,
    secrets: Secrets,
}

enum Slot {
    Pending(String),
    Done(Box<Interaction>),
    /// No answer came: left out of the cassette.
    Skipped(String),
    /// An answer came that cannot be kept: the recording fails.
    Failed(String),
}

impl Shared {
    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl RecordingProxy {
    pub(crate) async fn start(
        path: &Path,
        upstream: &str,
    ) -> Result<RecordingProxy, CassetteError> {
        let bad = |why: &str| {
            CassetteError::Start(format!(
                "the upstream `{upstream}` {why}; give the API's base URL, e.g. \
                 `https://api.anthropic.com` or `https://api.openai.com/v1`"
            ))
        };
        let url = reqwest::Url::parse(upstream).map_err(|_| bad("is not a URL"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(bad("is not an http:// or https:// URL with a host"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("has credentials in it (send them as headers)"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad("has a query or a fragment"));
        }
        let tls = agent_tls::tls_config().map_err(CassetteError::Start)?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .tls_backend_preconfigured(tls)
            .build()
            .map_err(|e| CassetteError::Start(format!("cannot build the HTTP client: {e}")))?;
        let (listener, origin) = serve::bind().await?;
        let shared = Arc::new(Shared {
            upstream: url.origin().ascii_serialization(),
            client,
            book: Mutex::default(),
            in_flight: tokio::sync::watch::Sender::new(0),
        });
        let task = serve::spawn(listener, {
            let shared = shared.clone();
            move |request| forward(shared.clone(), request)
        });
        Ok(RecordingProxy {
            path: path.to_owned(),
            base_url: format!("{origin}{}", url.path().trim_end_matches('/')),
            shared,
            task,
        })
    }

    /// The proxy's URL with the upstream's path (`http://127.0.0.1:PORT/v1` in front of
    /// `https://api.openai.com/v1`), no trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The cassette this proxy writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds `value` to the secrets that must not appear in the cassette (one that the requests
    /// carry where no header or query parameter name says so). Values under 8 characters are
    /// not searched for.
    pub fn secret(&self, value: &str) -> &Self {
        self.shared
            .book()
            .secrets
            .add(value, "a secret given to the recording");
        self
    }

    /// Waits for the exchanges under way (at most 60 s), then writes the cassette: to a
    /// temporary file beside it, renamed into place, so a reader sees the old file or the new
    /// one, never part of one. Nothing is written, and the error says why, when an answer broke
    /// off or cannot be kept as text, a secret appears in it, no exchange went through the
    /// proxy, or the cassette would pass [`MAX_CASSETTE_BYTES`](super::MAX_CASSETTE_BYTES).
    pub async fn finish(self) -> Result<Recorded, CassetteError> {
        let recording = |message: String| CassetteError::Recording {
            path: self.path.clone(),
            message,
        };
        let mut in_flight = self.shared.in_flight.subscribe();
        if tokio::time::timeout(FINISH_WAIT, in_flight.wait_for(|n| *n == 0))
            .await
            .is_err()
        {
            let book = self.shared.book();
            let pending: Vec<&str> = book
                .slots
                .iter()
                .filter_map(|s| match s {
                    Slot::Pending(what) => Some(what.as_str()),
                    _ => None,
                })
                .collect();
            return Err(recording(format!(
                "{} exchange(s) still under way after {FINISH_WAIT:?}: {}; read every answer \
                 before finishing",
                pending.len(),
                pending.join(", ")
            )));
        }
        let book = self.shared.book();
        let (mut interactions, mut skipped, mut failed) = (Vec::new(), Vec::new(), Vec::new());
        for (i, slot) in book.slots.iter().enumerate() {
            match slot {
                Slot::Done(interaction) => interactions.push((**interaction).clone()),
                Slot::Skipped(why) => skipped.push(why.clone()),
                Slot::Failed(why) => failed.push(format!("exchange {i}: {why}")),
                Slot::Pending(what) => failed.push(format!("exchange {i} ({what}) is unfinished")),
            }
        }
        if !failed.is_empty() {
            return Err(recording(format!("{}; record again", failed.join("; "))));
        }
        if interactions.is_empty() {
            return Err(recording(
                "no exchange went through the proxy: point the provider's base URL at \
                 `RecordingProxy::base_url()`"
                    .into(),
            ));
        }
        let text = to_yaml(&interactions).map_err(recording)?;
        book.secrets
            .scan(&interactions, &text)
            .map_err(|what| CassetteError::Secret {
                path: self.path.clone(),
                what,
            })?;
        if text.len() as u64 > MAX_CASSETTE_BYTES {
            return Err(recording(format!(
                "the cassette would have {} bytes, more than the {MAX_CASSETTE_BYTES} a cassette \
                 may have",
                text.len()
            )));
        }
        write_atomic(&self.path, &text)?;
        Ok(Recorded {
            path: self.path.clone(),
            interactions: interactions.len(),
            skipped,
        })
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for RecordingProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingProxy")
            .field("base_url", &self.base_url)
            .field("upstream", &self.shared.upstream)
            .field("cassette", &self.path)
            .finish_non_exhaustive()
    }
}

/// One exchange's place in the book. Dropped without being settled (the client went away
/// before the answer began), it is skipped; either way it is no longer under way.
struct Exchange {
    shared: Arc<Shared>,
    index: usize,
    settled: bool,
}

impl Exchange {
    /// Settles the exchange as `slot`, unless it failed already (its request could not be kept).
    fn settle(mut self, slot: Slot) {
        self.settled = true;
        let mut book = self.shared.book();
        if let Slot::Pending(_) = book.slots[self.index] {
            book.slots[self.index] = slot;
        }
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if !self.settled {
            let mut book = self.shared.book();
            if let Slot::Pending(what) = &book.slots[self.index] {
                let why = format!("{what}: the client went away before the answer began");
                book.slots[self.index] = Slot::Skipped(why);
            }
        }
        self.shared
            .in_flight
            .send_modify(|n| *n = n.saturating_sub(1));
    }
}

async fn forward(shared: Arc<Shared>, request: Request<Incoming>) -> hyper::Response<ServerBody> {
    let (parts, body) = request.into_parts();
    let bytes = match serve::read_body(body).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Ok(url) = reqwest::Url::parse(&format!("{}{target}", shared.upstream)) else {
        return serve::error_response(
            StatusCode::BAD_REQUEST,
            "cassette_bad_request",
            &format!("`{target}` cannot be sent upstream"),
        );
    };
    let what = format!("{} {target}", parts.method);
    let (exchange, request) = {
        let mut book = shared.book();
        if book.slots.len() >= MAX_INTERACTIONS {
            return serve::error_response(
                StatusCode::INSUFFICIENT_STORAGE,
                "cassette_full",
                &format!("a cassette holds at most {MAX_INTERACTIONS} interactions"),
            );
        }
        let uri = redact_url(&url, &mut book.secrets);
        let headers =
            redact_request_headers(&parts.headers, &mut book.secrets, |n| !serve::is_per_hop(n));
        let json = is_json(
            parts
                .headers
                .get(hyper::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
        );
        let form = parts
            .headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
        let body = keep_body(&bytes, json).map(|body| match body {
            Body::Json(mut value) => {
                redact_body(&mut value, &mut book.secrets);
                Body::Json(value)
            }
            Body::Text(text) if form => Body::Text(redact_form(&text, &mut book.secrets)),
            other => other,
        });
        let recorded = super::format::Request {
            method: parts.method.as_str().to_owned(),
            uri,
            headers,
            body: body.clone().unwrap_or(Body::Empty),
        };
        book.slots.push(match body {
            Ok(_) => Slot::Pending(what.clone()),
            Err(why) => Slot::Failed(format!("{what}: the request {why}")),
        });
        shared.in_flight.send_modify(|n| *n += 1);
        let exchange = Exchange {
            shared: shared.clone(),
            index: book.slots.len() - 1,
            settled: false,
        };
        (exchange, recorded)
    };
    let mut upstream = shared.client.request(parts.method.clone(), url).body(bytes);
    for (name, value) in &parts.headers {
        if !serve::is_per_hop(name.as_str()) && name != "accept-encoding" {
            upstream = upstream.header(name, value);
        }
    }
    let failed = |why: String, exchange: Exchange| {
        exchange.settle(Slot::Skipped(format!("{what}: {why}")));
        serve::error_response(StatusCode::BAD_GATEWAY, "cassette_upstream", &why)
    };
    let answer = match tokio::time::timeout(UPSTREAM_TIMEOUT, upstream.send()).await {
        Err(_) => {
            return failed(
                format!("the upstream did not answer within {UPSTREAM_TIMEOUT:?}"),
                exchange,
            );
        }
        Ok(Err(error)) => {
            return failed(
                format!("the upstream could not be reached: {}", error_chain(&error)),
                exchange,
            );
        }
        Ok(Ok(answer)) => answer,
    };
    let status = answer.status();
    let mut response = hyper::Response::builder().status(status);
    for (name, value) in answer.headers() {
        if !serve::is_per_hop(name.as_str()) {
            response = response.header(name, value);
        }
    }
    let kept_headers = redact_headers(answer.headers(), &mut shared.book().secrets, |n| {
        !serve::is_per_hop(n)
    });
    let compressed = answer
        .headers()
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.trim().eq_ignore_ascii_case("identity"))
        .map(|v| format!("the answer came compressed (content-encoding: {v})"));
    let tee = Tee {
        upstream: Some(answer.bytes_stream().boxed()),
        copy: Vec::new(),
        overflow: false,
        finish: Some(Finish {
            exchange,
            request,
            json: is_json(
                kept_headers
                    .iter()
                    .find(|(k, _)| k == "content-type")
                    .map(|(_, v)| v.as_str()),
            ),
            response: Response {
                status: status.as_u16(),
                reason: status.canonical_reason().map(str::to_owned),
                headers: kept_headers,
                body: Body::Empty,
            },
            unrecordable: compressed,
        }),
    };
    let body = StreamBody::new(tee).boxed_unsync();
    response.body(body).unwrap_or_else(|error| {
        serve::error_response(
            StatusCode::BAD_GATEWAY,
            "cassette_upstream",
            &format!("the upstream's answer cannot be passed on: {error}"),
        )
    })
}

/// Whether a `content-type` says JSON (`application/json`, `application/problem+json`).
fn is_json(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|v| v.to_ascii_lowercase().contains("json"))
}

/// A body as kept: JSON (when it says it is and parses) as such, text as text; `Err` says why
/// it cannot be kept.
fn keep_body(bytes: &[u8], json: bool) -> Result<Body, String> {
    if bytes.is_empty() {
        return Ok(Body::Empty);
    }
    if json && let Ok(value) = serde_json::from_slice(bytes) {
        return Ok(Body::Json(value));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Body::Text(text.to_owned())),
        Err(_) => Err("body is not text (binary bodies cannot be kept)".into()),
    }
}

/// What settles an exchange once its answer is read.
struct Finish {
    exchange: Exchange,
    request: super::format::Request,
    json: bool,
    response: Response,
    unrecordable: Option<String>,
}

impl Finish {
    fn complete(self, copy: Vec<u8>, overflow: bool) {
        let what = format!("{} {}", self.request.method, self.request.uri);
        let body = if overflow {
            Err(format!(
                "body is larger than the {MAX_BODY_BYTES} bytes a cassette keeps"
            ))
        } else if let Some(why) = self.unrecordable {
            Err(why)
        } else {
            keep_body(&copy, self.json)
        };
        let slot = match body {
            Ok(body) => Slot::Done(Box::new(Interaction {
                request: self.request,
                response: Response {
                    body,
                    ..self.response
                },
            })),
            Err(why) => Slot::Failed(format!("{what}: the answer's {why}")),
        };
        self.exchange.settle(slot);
    }

    fn fail(self, why: String) {
        let what = format!("{} {}", self.request.method, self.request.uri);
        self.exchange.settle(Slot::Failed(format!("{what}: {why}")));
    }
}

/// The upstream's answer on its way to the client, with a copy kept (up to
/// [`MAX_BODY_BYTES`]); when it ends, the exchange is settled. Dropped before the end (the
/// client stopped reading), the rest is read on a task of its own.
struct Tee {
    upstream: Option<BoxStream<'static, reqwest::Result<Bytes>>>,
    copy: Vec<u8>,
    overflow: bool,
    finish: Option<Finish>,
}

impl Tee {
    fn keep(copy: &mut Vec<u8>, overflow: &mut bool, chunk: &[u8]) {
        if copy.len() + chunk.len() > MAX_BODY_BYTES {
            *overflow = true;
        } else if !*overflow {
            copy.extend_from_slice(chunk);
        }
    }
}

impl Stream for Tee {
    type Item = Result<Frame<Bytes>, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(upstream) = this.upstream.as_mut() else {
            return Poll::Ready(None);
        };
        match upstream.poll_next_unpin(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                Tee::keep(&mut this.copy, &mut this.overflow, &chunk);
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            Poll::Ready(Some(Err(error))) => {
                this.upstream = None;
                if let Some(finish) = this.finish.take() {
                    finish.fail(format!(
                        "the answer broke off after {} bytes: {}",
                        this.copy.len(),
                        error_chain(&error)
                    ));
                }
                Poll::Ready(Some(Err(Box::new(error))))
            }
            Poll::Ready(None) => {
                this.upstream = None;
                if let Some(finish) = this.finish.take() {
                    finish.complete(std::mem::take(&mut this.copy), this.overflow);
                }
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        let (Some(mut upstream), Some(finish)) = (self.upstream.take(), self.finish.take()) else {
            return;
        };
        let (mut copy, mut overflow) = (std::mem::take(&mut self.copy), self.overflow);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            finish.fail("the client stopped reading, and the rest could not be read".into());
            return;
        };
        runtime.spawn(async move {
            loop {
                match tokio::time::timeout(DRAIN_IDLE, upstream.next()).await {
                    Ok(Some(Ok(chunk))) => Tee::keep(&mut copy, &mut overflow, &chunk),
                    Ok(None) => return finish.complete(copy, overflow),
                    Ok(Some(Err(error))) => {
                        return finish.fail(format!(
                            "the answer broke off after {} bytes: {}",
                            copy.len(),
                            error_chain(&error)
                        ));
                    }
                    Err(_) => {
                        return finish.fail(format!(
                            "the client stopped reading and the rest of the answer stalled \
                             for {DRAIN_IDLE:?}"
                        ));
                    }
                }
            }
        });
    }
}
