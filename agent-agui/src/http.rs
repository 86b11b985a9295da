//! The HTTP side: the endpoint's route, and what a request goes through before its run starts.
//! (The console's page and listing are [`crate::console`]'s.)
//!
//! Every request first meets agent-serve's edge (its crate docs say each step and limit): its
//! `Host` settled, its `Origin` checked (present and not allowed: `403`, nothing read or run).
//! Then [`AGUI_PATH`], behind the edge's [`Guard`] (realm `agui`), in this order:
//!
//! 1. `Authorization: Bearer <token>` — missing or wrong: `401`; passing it admits the connection
//!    (at most the edge's `max_connections` at once; an open event stream holds one);
//! 2. the body, read whole within the edge's body deadline (`408`) and size limit (`413`);
//! 3. not `POST`: `405`;
//! 4. not a `RunAgentInput` (or an id too long, [`MAX_ID_BYTES`](crate::MAX_ID_BYTES)): `400`;
//! 5. `200`, `text/event-stream`: the run's AG-UI events, one JSON object per `data:` line, the
//!    first `RUN_STARTED`, the last `RUN_FINISHED` or `RUN_ERROR` (a request that cannot start a
//!    run — no user message, decisions for no pause, a pause left unanswered — gets those two),
//!    with a `: keep-alive` comment every 15 s of silence. Decisions sent again get the outcome
//!    the first ones had, and nothing runs ([`crate::answered`]).

use std::sync::Arc;
use std::time::Duration;

use agent_serve::{Guard, plain};
use axum::Router;
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use http_body_util::BodyExt;

use crate::answered::{self, Answered, Seen};
use crate::console::Known;
use crate::outbox::{self, BufferLimits, Inbox};
use crate::run::RunContext;

/// The path of the AG-UI endpoint.
pub const AGUI_PATH: &str = "/agui";

/// How often a silent event stream gets a comment, so that proxies and clients see it alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Everything a request needs.
pub(crate) struct Endpoint {
    pub(crate) run: RunContext,
    pub(crate) buffer: BufferLimits,
    /// The threads requests name, for the console's listing.
    pub(crate) known: Arc<Known>,
    /// Each thread's last resume and its outcome, for a resume sent again.
    pub(crate) answered: Arc<Answered>,
}

impl Endpoint {
    /// The router: [`AGUI_PATH`] behind the edge's guard, no fallback.
    pub(crate) fn router(self) -> Router {
        let endpoint = Arc::new(self);
        let route = any(move |request: Request| {
            let endpoint = endpoint.clone();
            async move { endpoint.handle(request).await }
        });
        Router::new()
            .route(AGUI_PATH, route)
            .route_layer(Guard::new("agui"))
    }

    /// Steps 3 to 5 of the [module docs](self).
    async fn handle(&self, request: Request) -> Response {
        if request.method() != Method::POST {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the AG-UI endpoint takes POST",
            );
        }
        let body = match request.into_body().collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) => {
                let text = format!("the request body could not be read: {error}");
                return plain(StatusCode::BAD_REQUEST, text);
            }
        };
        let request = match crate::input::read(&body) {
            Ok(request) => request,
            Err(error) => return plain(StatusCode::BAD_REQUEST, error),
        };
        self.known.record(&request.thread_id);
        let (outbox, inbox) = outbox::buffer(self.buffer);
        let (thread, run_id) = (request.thread_id.clone(), request.run_id.clone());
        let cancel = tokio_util::sync::CancellationToken::new();
        // Answers to a pause: the same ones again get their outcome; new ones run alone in the
        // thread, so that its pause cannot change between their check and their claim.
        let (running, ticket) = match &request.answer {
            None => (self.known.begin(&thread, cancel.clone()), None),
            Some(key) => {
                let refused = match self.answered.take(&thread, key, &run_id) {
                    Seen::New(ticket) => match self.known.begin_alone(&thread, cancel.clone()) {
                        Some(running) => Ok((running, Some(ticket))),
                        None => {
                            let busy = answered::busy();
                            self.answered.ended(&thread, ticket, &busy);
                            Err(vec![busy])
                        }
                    },
                    seen => Err(answered::replay(&thread, &run_id, seen)),
                };
                match refused {
                    Ok(taken) => taken,
                    Err(events) => {
                        outbox.push(crate::run::run_started(&thread, &run_id));
                        events.into_iter().for_each(|event| outbox.push(event));
                        outbox.close();
                        return event_stream(inbox);
                    }
                }
            }
        };
        let answered = self.answered.clone();
        let ended = move |last: &serde_json::Value| {
            if let Some(ticket) = ticket {
                answered.ended(&thread, ticket, last);
            }
        };
        let run = crate::run::run(self.run.clone(), request, Arc::new(outbox), cancel, ended);
        tokio::spawn(async move {
            run.await;
            drop(running);
        });
        event_stream(inbox)
    }
}

/// The SSE response reading `inbox` (axum's [`Sse`]: each event one `data:` line of JSON, a
/// `: keep-alive` comment after 15 s of silence): ends with it, or with an error once it was cut.
fn event_stream(inbox: Inbox) -> Response {
    let events = futures::stream::unfold(Some(inbox), |inbox| async move {
        let mut inbox = inbox?;
        let event = tokio::select! {
            next = inbox.next() => match next {
                Ok(Some(json)) => Ok(Event::default().data(json)),
                Ok(None) => return None,
                Err(cut) => return Some((Err(cut), None)),
            },
            () = tokio::time::sleep(KEEP_ALIVE) => Ok(Event::default().comment("keep-alive")),
        };
        Some((event, Some(inbox)))
    });
    let mut response = Sse::new(events).into_response();
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
