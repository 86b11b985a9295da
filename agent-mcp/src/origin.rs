//! The `Origin` check MCP's streamable HTTP transport requires ("servers MUST validate the
//! Origin header"): a request whose `Origin` is present and not allowed is answered
//! `403 Forbidden` before it reaches rmcp. The check is agent-serve's `Origins`, which
//! agent-a2a's server shares.
//!
//! The rule:
//! - no `Origin` header (every non-browser client): allowed;
//! - an origin listed with [`McpServer::allowed_origins`](crate::McpServer::allowed_origins):
//!   allowed;
//! - on a loopback bind, the server's own origins `http://localhost:PORT`,
//!   `http://127.0.0.1:PORT` and `http://[::1]:PORT` (PORT the port bound): allowed — no page
//!   can come from them, since the server serves none;
//! - anything else, `null` and a malformed or repeated header included: `403`.
//!
//! Origins are compared as RFC 6454 tuples: scheme and host in any case, the default port
//! (80 for `http`, 443 for `https`) written or not.
//!
//! The check is a tower layer of the HTTP server (see [`crate::http`]), the first one a request
//! to the endpoint meets, ours rather than tower-http's `CorsLayer`: that layer answers preflights and
//! adds CORS headers to answers (so a browser hides the answer from the page), but passes every
//! request to the service whatever its origin, and a browser sends some cross-origin requests
//! without a preflight (a form's `POST`, a `no-cors` fetch), so the request would already have
//! run. Refusing it before anything runs is what MCP's specification asks.
//!
//! Behind the refusal, tower-http's `CorsLayer` answers the CORS preflights of
//! the origins that passed it, before the bearer check (a preflight carries no token), so a
//! page of an allowed origin can send the token: methods `GET`, `POST` and `DELETE`, the
//! headers MCP's transport uses, and `Mcp-Session-Id` and `WWW-Authenticate` readable by the
//! page. A preflight runs nothing and admits no connection; its answer carries
//! `Connection: close`. From an origin not allowed it is refused `403` like any request.

use std::convert::Infallible;
use std::time::Duration;

use agent_serve::Origins;
use axum::body::Body;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::Method;
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderName, WWW_AUTHENTICATE};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::head_check::CheckLayer;

/// The `Origin` check as a layer of the HTTP server's router (see [`crate::http`]).
pub(crate) fn layer(origins: Origins) -> CheckLayer {
    CheckLayer::new(move |headers| {
        origins
            .check::<BoxBody<Bytes, Infallible>>(headers)
            .map_err(|refused| Box::new(refused.map(Body::new)))
    })
}

/// The answers to CORS preflights, and the CORS headers of answers, for requests whose origin
/// the [`layer`] in front of it let through (so the origin is mirrored: it is one allowed).
pub(crate) fn cors_layer() -> CorsLayer {
    let session = HeaderName::from_static("mcp-session-id");
    CorsLayer::new()
        .allow_origin(AllowOrigin::mirror_request())
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([
            AUTHORIZATION,
            CONTENT_TYPE,
            ACCEPT,
            session.clone(),
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([session, WWW_AUTHENTICATE])
        .max_age(Duration::from_secs(600))
}
