//! What the edge decided when it started serving (the token, the origins, the body's limits,
//! the address bound), carried in the extensions of every request it serves, where each
//! route's [`Guard`](crate::Guard) reads them. A request without them was not served by an
//! [`Edge`](crate::Edge), and a guard refuses it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::origin::Origins;

/// The edge's checked settings, shared by every request.
#[derive(Debug)]
pub(crate) struct Rules {
    /// The token every guarded request must carry; `None` without auth (loopback only).
    pub(crate) token: Option<Arc<str>>,
    pub(crate) origins: Origins,
    pub(crate) max_body_bytes: usize,
    pub(crate) body_read_timeout: Duration,
}

/// The address the [`Edge`](crate::Edge) serving a request listens on, in the request's
/// extensions: what a route that announces its own URL (A2A's agent card) names by default.
///
/// ```
/// use agent_serve::Bound;
/// use axum::Extension;
///
/// async fn whoami(Extension(Bound(addr)): Extension<Bound>) -> String {
///     format!("http://{addr}/")
/// }
/// let app: axum::Router = axum::Router::new().route("/whoami", axum::routing::get(whoami));
/// # let _ = app;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound(pub SocketAddr);
