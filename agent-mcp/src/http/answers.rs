//! The HTTP server's own plain-text answers (the `404` of another path, the body's `408`,
//! `413` and `400`), and the response type rmcp's service answers with.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};

use crate::server::HTTP_PATH;

/// A response of the HTTP server.
pub(crate) type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// A `text/plain` answer.
pub(crate) fn plain(status: StatusCode, text: String) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The answer to a path other than the endpoint's.
pub(crate) fn not_found() -> HttpResponse {
    plain(
        StatusCode::NOT_FOUND,
        format!("not found: the MCP endpoint is {HTTP_PATH}"),
    )
}
