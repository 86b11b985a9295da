//! [`Guard`]: the layer a route that needs the token puts on itself (with axum's
//! `Router::route_layer`), so that the checks are the edge's wherever the route is mounted.
//! What it does is on [`Guard`].

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use hyper::header::{HeaderName, WWW_AUTHENTICATE};
use hyper::{Method, Request, StatusCode};
use tower_http::cors::{AllowHeaders, AllowOrigin, Cors, CorsLayer};
use tower_layer::Layer;
use tower_service::Service;

use crate::admit::Admitter;
use crate::answers::{plain, unauthorized};
use crate::bearer::{self, Refused};
use crate::rules::Rules;

/// The edge's checks for one route. What it does to each request, in order:
///
/// 1. **CORS** (tower-http's `CorsLayer`): a preflight from an origin the edge let through is
///    answered here (a preflight carries no token), naming the methods `GET`, `POST` and
///    `DELETE`, the headers the page asked for, and `WWW-Authenticate` plus the route's own
///    ([`Guard::expose_headers`]) as readable by the page. It runs nothing and admits nothing.
/// 2. **Bearer token** (`src/bearer.rs`, constant time): missing or wrong → `401` with
///    `WWW-Authenticate: Bearer realm="<realm>"`. Skipped when the edge serves without auth
///    (loopback only).
/// 3. **Admission**: passing the token admits the connection (it takes an admitted slot,
///    waiting for one; the rules are in the [crate docs](crate)).
/// 4. **The body** (`src/body.rs`): read whole within [`Edge::max_body_bytes`](crate::Edge::max_body_bytes) and [`Edge::body_read_timeout`](crate::Edge::body_read_timeout).
///
/// A request that did not come through an [`Edge`](crate::Edge) (the router served by
/// `axum::serve`, say) carries none of the edge's rules: the guard answers it `500` and runs
/// nothing, so a guarded route is never open by mistake.
///
/// ```
/// use axum::Router;
/// use axum::routing::post;
/// use agent_serve::Guard;
///
/// let app: Router = Router::new()
///     .route("/jobs", post(|| async { "queued" }))
///     .route_layer(Guard::new("jobs"));
/// # let _ = app;
/// ```
#[derive(Debug, Clone)]
pub struct Guard {
    realm: &'static str,
    exposed: Vec<HeaderName>,
}

impl Guard {
    /// A guard whose `401` names `realm` (`mcp`, `a2a`) in its challenge and its text.
    pub fn new(realm: &'static str) -> Self {
        Guard {
            realm,
            exposed: vec![WWW_AUTHENTICATE],
        }
    }

    /// Response headers a page of an allowed origin may read besides `WWW-Authenticate` (MCP's
    /// `Mcp-Session-Id`).
    pub fn expose_headers(mut self, names: impl IntoIterator<Item = HeaderName>) -> Self {
        self.exposed.extend(names);
        self
    }

    fn cors(&self) -> CorsLayer {
        // Only origins the edge let through get here, so the request's own is mirrored.
        CorsLayer::new()
            .allow_origin(AllowOrigin::mirror_request())
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers(self.exposed.clone())
            .max_age(Duration::from_secs(600))
    }
}

impl<S> Layer<S> for Guard {
    type Service = Cors<Guarded<S>>;

    fn layer(&self, inner: S) -> Self::Service {
        self.cors().layer(Guarded {
            inner,
            realm: self.realm,
        })
    }
}

/// The service of a [`Guard`], behind its CORS layer.
#[derive(Debug, Clone)]
pub struct Guarded<S> {
    inner: S,
    realm: &'static str,
}

impl<S> Service<Request<Body>> for Guarded<S>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        // The service polled ready is the one called; a fresh clone stays for the next call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let realm = self.realm;
        Box::pin(async move {
            let request = match admit(request, realm).await {
                Ok(request) => request,
                Err(refused) => return Ok(*refused),
            };
            inner.call(request).await
        })
    }
}

/// Steps 2 to 4 of [`Guard`]'s docs: the request with its body whole, or the answer
/// that refuses it.
async fn admit(request: Request<Body>, realm: &str) -> Result<Request<Body>, Box<Response>> {
    let Some(rules) = request.extensions().get::<Arc<Rules>>().cloned() else {
        tracing::error!(
            realm,
            "a guarded route was served outside agent_serve::Edge"
        );
        return Err(Box::new(plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "this route is guarded by agent_serve and must be served by agent_serve::Edge",
        )));
    };
    if let Some(token) = &rules.token {
        bearer::check(request.headers(), token)
            .map_err(|refused| Box::new(unauthorized(realm, refused == Refused::Wrong)))?;
    }
    if let Some(admitter) = request.extensions().get::<Admitter>() {
        admitter.admit().await;
    }
    let (parts, body) = request.into_parts();
    let body = crate::body::read(
        &parts.headers,
        body,
        rules.max_body_bytes,
        rules.body_read_timeout,
    )
    .await?;
    Ok(Request::from_parts(parts, body))
}
