//! The request body, read whole before anything of it is looked at: at most the edge's
//! [`max_body_bytes`](crate::Edge::max_body_bytes) (`413`, at once for a `Content-Length` past
//! it, when the limit is reached for a chunked body) and within its
//! [`body_read_timeout`](crate::Edge::body_read_timeout) for the whole body (`408` and
//! `Connection: close` past it).
//!
//! Why this is ours: tower-http's `RequestBodyTimeoutLayer` times each frame and starts again
//! after every one, so a client that drips a byte just inside the timeout holds the request
//! (and its admitted slot) for as long as it likes; and its `TimeoutLayer` times the whole
//! response, which would end a long tool call or an event stream. The deadline here is for the
//! body alone, counted once from when the body is first read. The size limit is
//! `http-body-util`'s `Limited`, as tower-http's `RequestBodyLimitLayer` uses it; being here
//! lets one limit, set on the edge, serve every route it guards.

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::StatusCode;
use hyper::header::{CONNECTION, CONTENT_LENGTH, HeaderMap, HeaderValue};

use crate::answers::plain;

/// The whole body, or the answer that refuses it.
pub(crate) async fn read(
    headers: &HeaderMap,
    body: Body,
    max_bytes: usize,
    deadline: Duration,
) -> Result<Body, Box<Response>> {
    let too_large = || {
        Box::new(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("payload too large: a request body may have at most {max_bytes} bytes"),
        ))
    };
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > max_bytes as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(deadline, Limited::new(body, max_bytes).collect()).await {
        Ok(Ok(collected)) => Ok(Body::from(collected.to_bytes())),
        Ok(Err(error)) if is_too_large(error.as_ref()) => Err(too_large()),
        Ok(Err(error)) => Err(Box::new(plain(
            StatusCode::BAD_REQUEST,
            format!("the request body could not be read: {error}"),
        ))),
        Err(_elapsed) => {
            let mut response = plain(
                StatusCode::REQUEST_TIMEOUT,
                format!("request timeout: the body did not arrive within {deadline:?}"),
            );
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            Err(Box::new(response))
        }
    }
}

/// Whether the body's error is the size limit's (somewhere in its chain of sources).
fn is_too_large(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(error) = source {
        if error.is::<LengthLimitError>() {
            return true;
        }
        source = error.source();
    }
    false
}
