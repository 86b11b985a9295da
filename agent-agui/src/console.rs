//! The console: a page for people ([`CONSOLE_PATH`]) to start runs on a thread, watch them, and
//! decide on the calls a run paused on; and the guarded listing it reads ([`THREADS_PATH`]).
//!
//! The page is static — HTML, two scripts, one stylesheet, written for this crate and embedded in
//! it (`src/console/`), nothing fetched from elsewhere, no data in it — so it is served without
//! the token, with a strict `Content-Security-Policy` (scripts, styles and fetches from the
//! server itself only, no inline script, no frames) and `X-Content-Type-Options: nosniff`.
//! Everything it shows it fetches with the token: the person types it, or opens
//! `/console#token=…` (a fragment never reaches a server or a log); it is kept in the tab's
//! `sessionStorage` and sent as `Authorization: Bearer` on every request. Without it, every
//! request is `401` and the page shows that and nothing else.
//!
//! `GET` [`THREADS_PATH`], behind the same [`Guard`] as [`AGUI_PATH`](crate::AGUI_PATH), answers
//! the threads this server ran since it started, most recent first (at most `max_threads` are
//! remembered; older threads of a store given with [`AguiServer::threads`](crate::AguiServer::threads)
//! are kept there but not listed):
//!
//! ```json
//! {"threads": [{"id": "t1", "state": "paused", "pending": [
//!   {"interruptId": "p1/c1#…", "path": "janitor › delete_branch", "skill": "delete_branch",
//!    "arguments": {"name": "old"}, "reason": "…", "digest": "…", "destructive": true,
//!    "inputSchema": {"type": "object", "required": ["name"], …}}]}]}
//! ```
//!
//! `state` is `running` (a run of the thread is going on), `idle` or `paused`; a pending call is described as its interrupt is
//! ([`crate::interrupt`]), with the skill's input JSON Schema when the server knows the skill
//! (the runtime's own skills, and those given with
//! [`AguiServer::skill_schemas`](crate::AguiServer::skill_schemas) — a nested agent's), so the
//! page can check an edit before sending it. The page decides by `POST`ing a `resume` to
//! [`AGUI_PATH`](crate::AGUI_PATH), bound to the interrupt's id as any client's decision is.
//!
//! An edit is checked in the page (`src/console/schema.js`, `/console/schema.js`) against that
//! schema, as far as skills' schemas go: `type` (one or a list; `integer` a whole number), `enum`,
//! `const`; `properties`, `required`, `patternProperties`, `additionalProperties` (`false` or a
//! schema); `items`, `prefixItems`, `minItems`, `maxItems`; `minLength`, `maxLength` (in code
//! points); `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`;
//! `pattern` (one that is not a valid regular expression is ignored); `$ref` to a JSON Pointer
//! in the same schema (`#/$defs/Name`, `#/definitions/Name`, `#`); `allOf`, `anyOf`, `oneOf`,
//! `not`; the schemas `true` and `false`; nested to any depth. Other keywords (`format`,
//! `description`, `default`, …) are ignored. Each error names its place in the value
//! (`` `keep[1].days` must be integer ``), an edit with errors is not sent, and a schema that
//! nests or refers to itself more than 64 deep is "too deep to check" rather than a hung page.
//! The check is the page's, for the person: the runtime gets whatever is sent, and the skill's
//! own input parsing, on the server, is what decides.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use agent_runtime::SessionStore;
use agent_serve::Guard;
use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HeaderName, HeaderValue, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::interrupt;

/// The console's page.
pub const CONSOLE_PATH: &str = "/console";
/// The threads the console lists, guarded.
pub const THREADS_PATH: &str = "/agui/threads";

/// One thread's trace, guarded: its conversation as the run kept it (`{id}` its id), each
/// message with its role, text, the calls it made (id, name, arguments) or the call it answers
/// (id, whether it failed). A paused thread's trace is its paused run's transcript.
pub const TRACE_PATH: &str = "/agui/threads/{id}";

/// Cancels the runs of thread `{id}` going on (`POST`, guarded): `202`, the run ends cancelled
/// (its stream says so) as soon as it reaches a point where it checks (a model call, a skill
/// that watches its context's cancellation); `404` when none is going on.
pub const CANCEL_PATH: &str = "/agui/threads/{id}/cancel";

/// What the page may load and reach: itself, nothing inline, nothing elsewhere.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

const PAGE: &str = include_str!("console/index.html");
const SCRIPT: &str = include_str!("console/console.js");
const SCHEMA_CHECK: &str = include_str!("console/schema.js");
const STYLE: &str = include_str!("console/console.css");

/// The ids of the threads the server ran, most recent first, at most `max`; and the runs of
/// each going on now, by the token that cancels each.
#[derive(Debug)]
pub(crate) struct Known {
    max: usize,
    ids: Mutex<VecDeque<String>>,
    running: Mutex<HashMap<String, Vec<(u64, CancellationToken)>>>,
    next: std::sync::atomic::AtomicU64,
}

/// A run going on in a thread: the thread counts as running until this is dropped.
pub(crate) struct Running {
    known: Arc<Known>,
    id: String,
    run: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = self.known.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(runs) = running.get_mut(&self.id) {
            runs.retain(|(run, _)| *run != self.run);
            if runs.is_empty() {
                running.remove(&self.id);
            }
        }
    }
}

impl Known {
    pub(crate) fn new(max: usize) -> Self {
        Known {
            max: max.max(1),
            ids: Mutex::new(VecDeque::new()),
            running: Mutex::new(HashMap::new()),
            next: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Notes that a run of `id`, stopped by `cancel`, started; it counts as running until the
    /// guard is dropped.
    pub(crate) fn begin(self: &Arc<Self>, id: &str, cancel: CancellationToken) -> Running {
        let run = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running
            .entry(id.to_owned())
            .or_default()
            .push((run, cancel));
        Running {
            known: self.clone(),
            id: id.to_owned(),
            run,
        }
    }

    /// As [`Known::begin`], only when no run of `id` is going on: a run that answers the thread's
    /// pause runs alone (`None`: another run of the thread is going on).
    pub(crate) fn begin_alone(
        self: &Arc<Self>,
        id: &str,
        cancel: CancellationToken,
    ) -> Option<Running> {
        let run = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        let runs = running.entry(id.to_owned()).or_default();
        if !runs.is_empty() {
            return None;
        }
        runs.push((run, cancel));
        Some(Running {
            known: self.clone(),
            id: id.to_owned(),
            run,
        })
    }

    /// Cancels every run of `id` going on; whether there was one.
    fn cancel(&self, id: &str) -> bool {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        let runs = running.get(id).map(Vec::as_slice).unwrap_or_default();
        runs.iter().for_each(|(_, cancel)| cancel.cancel());
        !runs.is_empty()
    }

    fn is_running(&self, id: &str) -> bool {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running.contains_key(id)
    }

    /// Notes that `id` ran now.
    pub(crate) fn record(&self, id: &str) {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        ids.retain(|known| known != id);
        ids.push_front(id.to_owned());
        ids.truncate(self.max);
    }

    fn list(&self) -> Vec<String> {
        let ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        ids.iter().cloned().collect()
    }
}

/// What the listing reads.
pub(crate) struct Listing {
    pub(crate) threads: Arc<dyn SessionStore>,
    pub(crate) known: Arc<Known>,
    /// Input schemas by skill name.
    pub(crate) schemas: HashMap<String, Value>,
}

/// The page and its files (public), and [`THREADS_PATH`] behind the guard.
pub(crate) fn router(listing: Listing) -> Router {
    let listing = Arc::new(listing);
    let one = listing.clone();
    let known = listing.known.clone();
    let guarded = Router::new()
        .route(
            THREADS_PATH,
            get(move || {
                let listing = listing.clone();
                async move { listing.answer().await }
            }),
        )
        .route(
            TRACE_PATH,
            get(move |Path(id): Path<String>| {
                let listing = one.clone();
                async move { listing.trace(&id).await }
            }),
        )
        .route(
            CANCEL_PATH,
            post(move |Path(id): Path<String>| {
                let known = known.clone();
                async move {
                    match known.cancel(&id) {
                        true => reply(
                            StatusCode::ACCEPTED,
                            "text/plain",
                            format!("cancelling `{id}`"),
                        ),
                        false => reply(
                            StatusCode::NOT_FOUND,
                            "text/plain",
                            format!("no run of `{id}` is going on"),
                        ),
                    }
                }
            }),
        )
        .route_layer(Guard::new("agui"));
    Router::new()
        .route(CONSOLE_PATH, get(|| async { asset(PAGE, "text/html") }))
        .route(
            "/console/console.js",
            get(|| async { asset(SCRIPT, "text/javascript") }),
        )
        .route(
            "/console/schema.js",
            get(|| async { asset(SCHEMA_CHECK, "text/javascript") }),
        )
        .route(
            "/console/console.css",
            get(|| async { asset(STYLE, "text/css") }),
        )
        .merge(guarded)
}

impl Listing {
    async fn answer(&self) -> Response {
        let mut threads = Vec::new();
        for id in self.known.list() {
            let running = self.known.is_running(&id);
            let loaded = match self.threads.load(&id).await {
                Ok(Some(loaded)) => loaded,
                // A thread's first run is saved when it ends: until then it is only running.
                Ok(None) if running => {
                    threads.push(json!({"id": id, "state": "running", "pending": []}));
                    continue;
                }
                Ok(None) => continue,
                Err(error) => {
                    let text = format!("the thread `{id}` could not be read: {error}");
                    return reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", text);
                }
            };
            let pending: Vec<Value> = loaded
                .data
                .paused
                .as_ref()
                .map(|run| {
                    let pause = run.pause_id().unwrap_or_default();
                    run.pending()
                        .iter()
                        .map(|p| self.describe(p, pause))
                        .collect()
                })
                .unwrap_or_default();
            let state = match (running, pending.is_empty()) {
                (true, _) => "running",
                (false, true) => "idle",
                (false, false) => "paused",
            };
            threads.push(json!({"id": id, "state": state, "pending": pending}));
        }
        let body = json!({ "threads": threads }).to_string();
        let mut response = reply(StatusCode::OK, "application/json", body);
        set(&mut response, CACHE_CONTROL, "no-store");
        response
    }

    /// [`TRACE_PATH`]'s answer for thread `id`: `404` for a thread the store does not hold.
    async fn trace(&self, id: &str) -> Response {
        let loaded = match self.threads.load(id).await {
            Ok(Some(loaded)) => loaded,
            Ok(None) => {
                return reply(
                    StatusCode::NOT_FOUND,
                    "text/plain",
                    format!("no thread `{id}`"),
                );
            }
            Err(error) => {
                let text = format!("the thread `{id}` could not be read: {error}");
                return reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", text);
            }
        };
        let transcript = match &loaded.data.paused {
            Some(run) => &run.transcript,
            None => &loaded.data.transcript,
        };
        let messages: Vec<Value> = transcript
            .iter()
            .map(|message| {
                json!({
                    "role": message.role,
                    "text": message.content,
                    "calls": message.tool_calls.iter().map(|call| json!({
                        "id": call.id.to_string(), "name": call.name, "arguments": call.arguments,
                    })).collect::<Vec<_>>(),
                    "answers": message.tool_call_id.as_ref().map(|id| id.to_string()),
                    "isError": message.is_error,
                })
            })
            .collect();
        let body = json!({ "id": id, "transcript": messages }).to_string();
        let mut response = reply(StatusCode::OK, "application/json", body);
        set(&mut response, CACHE_CONTROL, "no-store");
        response
    }

    fn describe(&self, pending: &agent_core::pending::PendingCall, pause: &str) -> Value {
        let shown = interrupt::interrupt(pending, pause);
        let eugene = &shown["metadata"]["eugene"];
        json!({
            "interruptId": shown["id"],
            "path": eugene["path"],
            "skill": eugene["skill"],
            "arguments": eugene["arguments"],
            "reason": eugene["reason"],
            "digest": eugene["digest"],
            "destructive": eugene["destructive"],
            "inputSchema": self.schemas.get(&pending.skill).cloned().unwrap_or(Value::Null),
        })
    }
}

/// One of the page's files, with the headers every one carries.
fn asset(text: &'static str, kind: &'static str) -> Response {
    let mut response = reply(StatusCode::OK, kind, text.to_owned());
    set(&mut response, CONTENT_SECURITY_POLICY, POLICY);
    set(&mut response, X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(&mut response, X_FRAME_OPTIONS, "DENY");
    set(&mut response, REFERRER_POLICY, "no-referrer");
    set(&mut response, CACHE_CONTROL, "no-cache");
    response
}

fn reply(status: StatusCode, kind: &str, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let kind = format!("{kind}; charset=utf-8");
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_str(&kind).expect("a content type is a header value"),
    );
    response
}

fn set(response: &mut Response, name: HeaderName, value: &'static str) {
    response
        .headers_mut()
        .insert(name, HeaderValue::from_static(value));
}
