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
//! run. Refusing it before anything runs is what MCP's specification asks. The server answers
//! no preflight (an `OPTIONS` carries no token, and is refused `401`); see [`crate::http`].

use std::convert::Infallible;

use agent_serve::Origins;
use axum::body::Body;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;

use crate::http::CheckLayer;

/// The `Origin` check as a layer of the HTTP server's router (see [`crate::http`]).
pub(crate) fn layer(origins: Origins) -> CheckLayer {
    CheckLayer::new(move |headers| {
        origins
            .check::<BoxBody<Bytes, Infallible>>(headers)
            .map_err(|refused| Box::new(refused.map(Body::new)))
    })
}
