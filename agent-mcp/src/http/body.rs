//! The request body, read whole before anything of it is looked at: within a deadline for the
//! whole body (`408` and `Connection: close` past it) and within the size limit that
//! tower-http's `RequestBodyLimitLayer`, the layer before this one, puts on it (`413`).
//!
//! Why the deadline is ours: tower-http's `RequestBodyTimeoutLayer` times each frame and starts
//! again after every one, so a client that drips a byte just inside the timeout holds the
//! request (and its admitted slot) for as long as it likes; and its `TimeoutLayer` times the
//! whole response, which would end a long tool call or an event stream. The deadline here is
//! for the body alone, counted once from when the body is first read.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError};
use hyper::header::{CONNECTION, HeaderValue};
use hyper::{Request, StatusCode};
use tower_layer::Layer;
use tower_service::Service;

use super::answers::plain;

/// Reads each request's body whole, within `deadline`, before the service it wraps sees the
/// request; `max_bytes` is only named in the `413` (the limit is the layer before's).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadBodyLayer {
    pub(crate) deadline: Duration,
    pub(crate) max_bytes: usize,
}

impl<S> Layer<S> for ReadBodyLayer {
    type Service = ReadBody<S>;

    fn layer(&self, inner: S) -> ReadBody<S> {
        ReadBody {
            inner,
            settings: *self,
        }
    }
}

/// The service of a [`ReadBodyLayer`].
#[derive(Debug, Clone)]
pub(crate) struct ReadBody<S> {
    inner: S,
    settings: ReadBodyLayer,
}

impl<S> Service<Request<Body>> for ReadBody<S>
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
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let settings = self.settings;
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            match read(body, settings).await {
                Ok(whole) => inner.call(Request::from_parts(parts, whole)).await,
                Err(refused) => Ok(refused),
            }
        })
    }
}

/// The whole body, or the answer that refuses it.
async fn read(body: Body, settings: ReadBodyLayer) -> Result<Body, Response> {
    match tokio::time::timeout(settings.deadline, body.collect()).await {
        Ok(Ok(collected)) => Ok(Body::from(collected.to_bytes())),
        Ok(Err(error)) if is_too_large(&error) => Err(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "payload too large: a request body may have at most {} bytes",
                settings.max_bytes
            ),
        )
        .into_response()),
        Ok(Err(error)) => Err(plain(
            StatusCode::BAD_REQUEST,
            format!("the request body could not be read: {error}"),
        )
        .into_response()),
        Err(_elapsed) => {
            let mut response = plain(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "request timeout: the body did not arrive within {:?}",
                    settings.deadline
                ),
            )
            .into_response();
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            Err(response)
        }
    }
}

/// Whether the body's error is the size limit's (somewhere in its chain of sources).
fn is_too_large(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = source {
        if error.is::<LengthLimitError>() {
            return true;
        }
        source = error.source();
    }
    false
}
