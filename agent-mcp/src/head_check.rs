//! A tower layer that checks a request's head and answers a refusal itself: what the `Origin`
//! check ([`crate::origin`]) and the bearer token ([`crate::auth`]) are, so that each composes
//! with tower-http's layers the same way. A refused request goes no further: not to the
//! admission of its connection, not to the body, not to rmcp.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::Response;
use hyper::Request;
use hyper::header::HeaderMap;
use tower_layer::Layer;
use tower_service::Service;

/// A check of a request's headers: `Ok` lets it through, `Err` is the answer.
pub(crate) type HeadCheck = dyn Fn(&HeaderMap) -> Result<(), Box<Response>> + Send + Sync;

/// Runs `check` on each request's headers before the service it wraps.
#[derive(Clone)]
pub(crate) struct CheckLayer {
    check: Arc<HeadCheck>,
}

impl CheckLayer {
    pub(crate) fn new(
        check: impl Fn(&HeaderMap) -> Result<(), Box<Response>> + Send + Sync + 'static,
    ) -> Self {
        CheckLayer {
            check: Arc::new(check),
        }
    }
}

impl<S> Layer<S> for CheckLayer {
    type Service = Check<S>;

    fn layer(&self, inner: S) -> Check<S> {
        Check {
            inner,
            check: self.check.clone(),
        }
    }
}

/// The service of a [`CheckLayer`].
#[derive(Clone)]
pub(crate) struct Check<S> {
    inner: S,
    check: Arc<HeadCheck>,
}

impl<S> Service<Request<Body>> for Check<S>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        match (self.check)(request.headers()) {
            Ok(()) => Box::pin(self.inner.call(request)),
            Err(refused) => Box::pin(std::future::ready(Ok(*refused))),
        }
    }
}
