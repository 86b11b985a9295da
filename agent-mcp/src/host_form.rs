//! The `Host` a request is checked under, made unambiguous before rmcp's allowlist sees it
//! (against DNS rebinding, see [`crate::http`]): a request with two `Host` headers is refused
//! (`400`), and one whose target is in absolute form (`POST http://name/mcp`) is checked under
//! the target's host, as RFC 9112 §3.2.2 says a server takes it, its `Host` headers replaced. So
//! a foreign name cannot hide behind a loopback one, first or second.

use axum::body::Body;
use axum::middleware::Next;
use axum::response::Response;
use hyper::header::{HOST, HeaderValue};
use hyper::{Request, StatusCode};

/// The check, as a middleware function for `axum::middleware::from_fn`.
pub(crate) async fn check(mut request: Request<Body>, next: Next) -> Response {
    if let Some(authority) = request.uri().authority().map(|a| a.as_str().to_owned()) {
        let Ok(host) = HeaderValue::from_str(&authority) else {
            return refuse("the request target's host is not a valid header value");
        };
        let headers = request.headers_mut();
        headers.remove(HOST);
        headers.insert(HOST, host);
    } else if request.headers().get_all(HOST).iter().count() > 1 {
        return refuse("a request has one Host header, not several");
    }
    next.run(request).await
}

fn refuse(why: &'static str) -> Response {
    let mut response = Response::new(Body::from(why));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
        .headers_mut()
        .insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    response
}
