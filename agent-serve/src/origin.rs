//! The `Origin` check, against web pages that a browser would let call a server on another
//! origin (MCP's streamable HTTP transport requires it: "servers MUST validate the Origin
//! header"): a request whose `Origin` is present and not allowed is answered `403 Forbidden`
//! before anything of it is served. [`Origins`] holds what a server allows.
//!
//! The rule:
//! - no `Origin` header (every non-browser client): allowed;
//! - an origin the server was configured with (`allowed_origins` of each server): allowed;
//! - on a loopback bind, the server's own origins `http://localhost:PORT`,
//!   `http://127.0.0.1:PORT` and `http://[::1]:PORT` (PORT the port bound): allowed — no page
//!   can come from them, since the server serves none;
//! - anything else, `null` and a malformed or repeated header included: `403`.
//!
//! Origins are compared as RFC 6454 tuples: scheme and host in any case, the default port
//! (80 for `http`, 443 for `https`) written or not.

use std::net::SocketAddr;

use axum::response::Response;
use hyper::header::{HeaderMap, ORIGIN};
use hyper::{StatusCode, Uri};

use crate::answers::plain;
use crate::error::EdgeError;
use crate::loopback::is_loopback;

/// The origins a server accepts, normalized.
#[derive(Debug, Clone)]
pub(crate) struct Origins {
    allowed: Vec<String>,
}

impl Origins {
    /// The configured origins plus, when `bound` (the address the server listens on) is a
    /// loopback address, the server's own. `Err` names the first configured origin that is not
    /// one (`scheme://host[:port]`, nothing more).
    pub(crate) fn new(configured: &[String], bound: SocketAddr) -> Result<Self, EdgeError> {
        let mut allowed = Vec::with_capacity(configured.len() + 3);
        for origin in configured {
            let normalized =
                normalize(origin).ok_or_else(|| EdgeError::BadOrigin(origin.clone()))?;
            allowed.push(normalized);
        }
        if is_loopback(bound.ip()) {
            let port = bound.port();
            for host in ["localhost", "127.0.0.1", "[::1]"] {
                allowed.extend(normalize(&format!("http://{host}:{port}")));
            }
        }
        Ok(Origins { allowed })
    }

    /// `Ok` when the request has no `Origin` or an allowed one; else the `403` to answer (a
    /// repeated or malformed header is refused too).
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), Box<Response>> {
        let mut values = headers.get_all(ORIGIN).iter();
        let Some(first) = values.next() else {
            return Ok(());
        };
        let allowed = values.next().is_none()
            && first
                .to_str()
                .ok()
                .and_then(normalize)
                .is_some_and(|origin| self.allowed.contains(&origin));
        if allowed {
            Ok(())
        } else {
            tracing::warn!(origin = ?first, "refused a request from an origin that is not allowed");
            Err(Box::new(forbidden()))
        }
    }
}

/// `scheme://host[:port]` in lowercase with the default port left out, or `null`; `None` for
/// anything that is not an origin (a path, a query, user info).
fn normalize(origin: &str) -> Option<String> {
    let origin = origin.trim();
    if origin == "null" {
        return Some("null".to_owned());
    }
    let uri: Uri = origin.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    if authority.as_str().contains('@')
        || uri.query().is_some()
        || !matches!(uri.path(), "" | "/")
        || origin.ends_with('/')
    {
        return None;
    }
    let host = authority.host().to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    Some(match authority.port_u16() {
        Some(port) if Some(port) != default_port => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    })
}

fn forbidden() -> Response {
    plain(
        StatusCode::FORBIDDEN,
        "forbidden: requests from this Origin are not allowed",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    type Checked = Result<(), Box<Response>>;

    impl Origins {
        fn test(&self, headers: &HeaderMap) -> Checked {
            self.check(headers)
        }
    }

    fn with_origin(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(ORIGIN, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn origins_normalize_as_tuples() {
        assert_eq!(
            normalize("HTTP://Example.COM:80").as_deref(),
            Some("http://example.com")
        );
        assert_eq!(
            normalize("https://a.example:443").as_deref(),
            Some("https://a.example")
        );
        assert_eq!(
            normalize("https://a.example:8443").as_deref(),
            Some("https://a.example:8443")
        );
        assert_eq!(
            normalize("http://[::1]:9").as_deref(),
            Some("http://[::1]:9")
        );
        assert_eq!(normalize("null").as_deref(), Some("null"));
        for bad in [
            "",
            "example.com",
            "http://a.example/path",
            "http://u@a.example",
            "http://a.example/",
            "http://a.example?q",
        ] {
            assert_eq!(normalize(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_loopback_bind_allows_its_own_origins_and_nothing_else_unless_listed() {
        let bound: SocketAddr = "127.0.0.1:4321".parse().unwrap();
        let origins = Origins::new(&["https://app.example".into()], bound).unwrap();
        for ok in [
            &[][..],
            &["http://localhost:4321"],
            &["http://127.0.0.1:4321"],
            &["http://[::1]:4321"],
            &["https://APP.example:443"],
        ] {
            assert!(origins.test(&with_origin(ok)).is_ok(), "{ok:?}");
        }
        for refused in [
            &["http://evil.example"][..],
            &["http://localhost:4322"],
            &["https://localhost:4321"],
            &["null"],
            &["not an origin"],
            &["http://localhost:4321", "http://localhost:4321"],
        ] {
            let response = origins.test(&with_origin(refused)).expect_err("refused");
            assert_eq!(response.status(), StatusCode::FORBIDDEN, "{refused:?}");
        }
    }

    #[test]
    fn other_binds_allow_only_listed_origins() {
        let bound: SocketAddr = "0.0.0.0:4321".parse().unwrap();
        let origins = Origins::new(&[], bound).unwrap();
        assert!(
            origins
                .test(&with_origin(&["http://localhost:4321"]))
                .is_err()
        );
        assert!(origins.test(&HeaderMap::new()).is_ok());
        assert!(Origins::new(&["example.com".into()], bound).is_err());
    }
}
