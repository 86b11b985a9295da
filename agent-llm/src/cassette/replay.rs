//! [`ReplayServer`]: a cassette served on a loopback port. Each request is answered by the
//! first recorded interaction that matches it and has not answered one yet; a request nothing
//! matches gets `409` with the differences from the closest recorded one, and is kept for
//! [`ReplayServer::verify`].

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use hyper::{Request, StatusCode};
use serde_json::Value;

use super::error::CassetteError;
use super::format::{Body, Cassette, Interaction, Response};
use super::matching::{Differences, Matcher, Shape};
use super::serve::{self, ServerBody};

/// At most this many requests are kept for [`ReplayServer::requests`]…
const MAX_LOGGED: usize = 1000;
/// …with at most this many bytes of bodies among them.
const MAX_LOGGED_BYTES: usize = 64 * 1024 * 1024;
/// At most this many mismatches are kept (all are counted).
const MAX_MISMATCHES: usize = 100;

/// A cassette served on a loopback port: point a provider's base URL at
/// [`ReplayServer::base_url`] (with the API's path, e.g. `/v1`, where the provider expects one:
/// [`ReplayServer::url`]). Started by [`Cassette::replay`] or [`Cassette::serve`].
///
/// Each recorded interaction answers one request: the first unused one that matches (as the
/// [`Matcher`] says), so requests that match alike are answered in the recorded order, and
/// concurrent requests that differ get their own answers whatever order they arrive in. A
/// request that matches none is answered `409` with a body whose `error.type` is
/// `cassette_mismatch` and whose `error.message` shows what differs from the closest recorded
/// request, so the provider's error shows it too; it is also kept, and
/// [`ReplayServer::verify`] (or [`ReplayServer::assert_all_used`], at the end of a test) reports
/// it with the interactions no request used. Dropping the server stops it and its connections;
/// it never panics on drop.
pub struct ReplayServer {
    base_url: String,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

struct State {
    path: PathBuf,
    interactions: Vec<Interaction>,
    shapes: Vec<Shape>,
    matcher: Matcher,
    used: Vec<bool>,
    requests: Vec<ReplayedRequest>,
    logged_bytes: usize,
    mismatches: Vec<Mismatch>,
    mismatch_count: usize,
}

/// A request the replay server received.
#[derive(Debug, Clone)]
pub struct ReplayedRequest {
    /// Its method.
    pub method: String,
    /// Its path and query.
    pub target: String,
    /// Its headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: Vec<u8>,
    /// The index of the interaction that answered it; `None` if none matched.
    pub answered_by: Option<usize>,
}

impl ReplayedRequest {
    /// The body as JSON, if it is.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A request no recorded interaction matched, and how it differs from the closest one.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// Its method.
    pub method: String,
    /// Its path and query.
    pub target: String,
    /// The index of the closest recorded interaction, if the cassette has any.
    pub closest: Option<usize>,
    report: String,
}

impl Mismatch {
    /// What was asked, the closest recorded interaction, and what differs (one line per
    /// difference: the method, the path, a query parameter, a header, or the JSON pointer of a
    /// body's value with both values).
    pub fn report(&self) -> &str {
        &self.report
    }
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.report)
    }
}

impl ReplayServer {
    pub(crate) async fn start(
        cassette: Cassette,
        matcher: Matcher,
    ) -> Result<ReplayServer, CassetteError> {
        let (listener, base_url) = serve::bind().await?;
        let path = cassette.path().to_owned();
        let interactions = cassette.interactions().to_vec();
        let shapes = interactions
            .iter()
            .map(|i| Shape::of_recorded(&i.request))
            .collect();
        let state = Arc::new(Mutex::new(State {
            path,
            used: vec![false; interactions.len()],
            interactions,
            shapes,
            matcher,
            requests: Vec::new(),
            logged_bytes: 0,
            mismatches: Vec::new(),
            mismatch_count: 0,
        }));
        let task = serve::spawn(listener, {
            let state = state.clone();
            move |request| answer(state.clone(), request)
        });
        Ok(ReplayServer {
            base_url,
            state,
            task,
        })
    }

    /// The server's URL, `http://127.0.0.1:PORT` (no trailing `/`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The server's URL with `path` after it (`server.url("/v1")` for OpenAI's base URL).
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path.trim_start_matches('/'))
    }

    /// The requests received so far, in order (the first 1,000, with up to 64 MiB of bodies).
    pub fn requests(&self) -> Vec<ReplayedRequest> {
        self.lock().requests.clone()
    }

    /// The requests no recorded interaction matched (the first 100).
    pub fn mismatches(&self) -> Vec<Mismatch> {
        self.lock().mismatches.clone()
    }

    /// The indexes of the recorded interactions no request has used yet.
    pub fn unused(&self) -> Vec<usize> {
        let state = self.lock();
        (0..state.used.len()).filter(|i| !state.used[*i]).collect()
    }

    /// `Ok` if every request matched a recorded interaction and every recorded interaction was
    /// used; otherwise [`CassetteError::Replay`] with the mismatches (and their diffs) and the
    /// unused interactions.
    pub fn verify(&self) -> Result<(), CassetteError> {
        let state = self.lock();
        let mut message = String::new();
        if state.mismatch_count > 0 {
            message.push_str(&format!(
                "{} request(s) matched no recorded interaction:\n",
                state.mismatch_count
            ));
            for mismatch in &state.mismatches {
                message.push_str(&mismatch.report);
            }
        }
        let unused: Vec<usize> = (0..state.used.len()).filter(|i| !state.used[*i]).collect();
        if !unused.is_empty() {
            message.push_str(&format!(
                "{} of {} recorded interaction(s) were not used (the code made fewer requests \
                 than were recorded; record again if that is intended):\n",
                unused.len(),
                state.used.len()
            ));
            for i in unused {
                let request = &state.interactions[i].request;
                message.push_str(&format!(
                    "  interactions[{i}]: {} {}\n",
                    request.method, request.uri
                ));
            }
        }
        if message.is_empty() {
            return Ok(());
        }
        Err(CassetteError::Replay {
            path: state.path.clone(),
            message: message.trim_end().to_owned(),
        })
    }

    /// Panics with [`ReplayServer::verify`]'s report unless every request matched and every
    /// recorded interaction was used: for the end of a test.
    pub fn assert_all_used(&self) {
        if let Err(error) = self.verify() {
            panic!("{error}");
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for ReplayServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayServer")
            .field("base_url", &self.base_url)
            .field("cassette", &self.lock().path)
            .finish_non_exhaustive()
    }
}

async fn answer(
    state: Arc<Mutex<State>>,
    request: Request<Incoming>,
) -> hyper::Response<ServerBody> {
    let (parts, body) = request.into_parts();
    let bytes = match serve::read_body(body).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let target = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let method = parts.method.as_str().to_owned();
    let sent = Shape::of_wire(&method, &target, headers.clone(), &bytes);
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    let chosen = state.choose(&sent, &method, &target);
    if state.requests.len() < MAX_LOGGED && state.logged_bytes + bytes.len() <= MAX_LOGGED_BYTES {
        state.logged_bytes += bytes.len();
        state.requests.push(ReplayedRequest {
            method,
            target,
            headers,
            body: bytes.to_vec(),
            answered_by: chosen.as_ref().ok().copied(),
        });
    }
    match chosen {
        Ok(index) => respond(&state.interactions[index].response),
        Err(mismatch) => {
            let report = mismatch.report.clone();
            state.mismatch_count += 1;
            if state.mismatches.len() < MAX_MISMATCHES {
                state.mismatches.push(mismatch);
            }
            tracing::warn!(cassette = %state.path.display(), "{report}");
            serve::error_response(StatusCode::CONFLICT, "cassette_mismatch", &report)
        }
    }
}

impl State {
    /// The first unused interaction that matches `sent` (marked used), or the mismatch report
    /// against the closest one: the fewest differences, unused ones first.
    fn choose(&mut self, sent: &Shape, method: &str, target: &str) -> Result<usize, Mismatch> {
        let mut closest: Option<(usize, Differences)> = None;
        for (i, recorded) in self.shapes.iter().enumerate() {
            let differences = self.matcher.compare(sent, recorded);
            if differences.is_empty() && !self.used[i] {
                self.used[i] = true;
                return Ok(i);
            }
            let closer = match &closest {
                None => true,
                Some((j, best)) => {
                    (differences.weight, self.used[i]) < (best.weight, self.used[*j])
                }
            };
            if closer {
                closest = Some((i, differences));
            }
        }
        let unused = self.used.iter().filter(|u| !**u).count();
        let mut report = format!(
            "no recorded interaction matches {method} {target} (cassette {}: {} interaction(s), \
             {unused} unused)\n",
            self.path.display(),
            self.used.len()
        );
        match &closest {
            None => report.push_str("  the cassette has no interactions\n"),
            Some((i, differences)) => {
                let recorded = &self.interactions[*i].request;
                if differences.is_empty() {
                    report.push_str(&format!(
                        "  interactions[{i}] ({} {}) matches, but it answered an earlier request \
                         already: each recorded interaction answers one request (record again if \
                         the code now makes more requests)\n",
                        recorded.method, recorded.uri
                    ));
                } else {
                    report.push_str(&format!(
                        "closest: interactions[{i}] ({} {}{}); {} difference(s), request against \
                         recording:\n",
                        recorded.method,
                        recorded.uri,
                        if self.used[*i] { ", already used" } else { "" },
                        differences.count
                    ));
                    report.push_str(&differences.lines());
                }
            }
        }
        Err(Mismatch {
            method: method.to_owned(),
            target: target.to_owned(),
            closest: closest.map(|(i, _)| i),
            report,
        })
    }
}

/// The recorded answer: its status and headers (without those of the recorded connection, and
/// without `content-encoding`, the body being kept decoded), its body whole, or event by event
/// for server-sent events.
fn respond(recorded: &Response) -> hyper::Response<ServerBody> {
    let bytes = Bytes::from(recorded.body.to_bytes());
    let streamed = recorded
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().contains("text/event-stream"));
    let body = if streamed {
        let frames = events(&bytes)
            .into_iter()
            .map(|chunk| Ok::<_, serve::BoxError>(Frame::data(chunk)));
        StreamBody::new(futures::stream::iter(frames)).boxed_unsync()
    } else {
        serve::full(bytes)
    };
    let mut response = hyper::Response::new(body);
    // The status and the headers were checked when the cassette was read.
    *response.status_mut() = StatusCode::from_u16(recorded.status).unwrap_or(StatusCode::OK);
    for (name, value) in &recorded.headers {
        if serve::is_per_hop(name) || name == "content-encoding" {
            continue;
        }
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    if !response.headers().contains_key(CONTENT_TYPE) && matches!(recorded.body, Body::Json(_)) {
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    response
}

/// A server-sent-events body cut after each event (a blank line, `\n\n` or `\r\n\r\n`), as a
/// server sends them.
fn events(bytes: &Bytes) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let end = if bytes[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if bytes[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else {
            None
        };
        match end {
            Some(end) => {
                chunks.push(bytes.slice(start..end));
                start = end;
                i = end;
            }
            None => i += 1,
        }
    }
    if start < bytes.len() {
        chunks.push(bytes.slice(start..));
    }
    chunks
}
