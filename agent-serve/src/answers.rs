//! The edge's own plain-text answers: the refusals of its checks (`400`, `401`, `403`, `408`,
//! `413`, `500`), each `text/plain` with a sentence saying why; [`plain`] is the servers' behind
//! it too (agent-a2a's, agent-agui's), so every refusal reads alike.

use axum::body::Body;
use axum::response::Response;
use hyper::StatusCode;
use hyper::header::{CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};

/// A `text/plain; charset=utf-8` answer with this status and text.
pub fn plain(status: StatusCode, text: impl Into<String>) -> Response {
    let mut response = Response::new(Body::from(text.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `401 Unauthorized` with the challenge RFC 6750 describes for `realm`; `invalid_token` when a
/// token was sent and was wrong.
pub(crate) fn unauthorized(realm: &str, token_sent: bool) -> Response {
    let mut response = plain(
        StatusCode::UNAUTHORIZED,
        format!(
            "unauthorized: this {realm} endpoint requires the header `Authorization: Bearer <token>`"
        ),
    );
    let challenge = if token_sent {
        format!(r#"Bearer realm="{realm}", error="invalid_token""#)
    } else {
        format!(r#"Bearer realm="{realm}""#)
    };
    if let Ok(challenge) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, challenge);
    }
    response
}
