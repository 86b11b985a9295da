//! The `Host` a request is served under, made unambiguous before anything checks it (rmcp's
//! allowlist against DNS rebinding, a card's URL): a request with two `Host` headers is refused
//! (`400`), and one whose target is in absolute form (`POST http://name/mcp`) is taken under the
//! target's host, as RFC 9112 §3.2.2 says a server takes it, its `Host` headers replaced. So a
//! foreign name cannot hide behind a loopback one, first or second.

use axum::response::Response;
use hyper::header::{CONNECTION, HOST, HeaderValue};
use hyper::{Request, StatusCode};

use crate::answers::plain;

/// Settles the request's `Host` as above, or the `400` that refuses it.
pub(crate) fn settle<B>(request: &mut Request<B>) -> Result<(), Box<Response>> {
    if let Some(authority) = request.uri().authority().map(|a| a.as_str().to_owned()) {
        let Ok(host) = HeaderValue::from_str(&authority) else {
            return Err(refuse(
                "the request target's host is not a valid header value",
            ));
        };
        let headers = request.headers_mut();
        headers.remove(HOST);
        headers.insert(HOST, host);
    } else if request.headers().get_all(HOST).iter().count() > 1 {
        return Err(refuse("a request has one Host header, not several"));
    }
    Ok(())
}

fn refuse(why: &'static str) -> Box<Response> {
    let mut response = plain(StatusCode::BAD_REQUEST, why);
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    Box::new(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_target_names_the_host_and_two_hosts_are_refused() {
        let mut absolute = Request::post("http://evil.example/mcp")
            .header(HOST, "127.0.0.1")
            .body(())
            .unwrap();
        settle(&mut absolute).unwrap();
        assert_eq!(absolute.headers().get_all(HOST).iter().count(), 1);
        assert_eq!(absolute.headers()[HOST], "evil.example");
        let mut two = Request::post("/mcp")
            .header(HOST, "127.0.0.1")
            .header(HOST, "evil.example")
            .body(())
            .unwrap();
        assert_eq!(settle(&mut two).unwrap_err().status(), 400);
        let mut one = Request::post("/mcp")
            .header(HOST, "127.0.0.1")
            .body(())
            .unwrap();
        settle(&mut one).unwrap();
    }
}
