//! Bearer tokens for the HTTP server: making one ([`generate_token`]) and checking the
//! `Authorization` header of a request against it.
//!
//! Every request to the MCP endpoint must carry `Authorization: Bearer <token>` unless the
//! server was told [`McpServer::without_auth`](crate::McpServer::without_auth) *and* is bound
//! to a loopback address. A missing or wrong token is answered `401 Unauthorized` with
//! `WWW-Authenticate: Bearer realm="mcp"` before the request reaches rmcp, so no session is made
//! and no tool runs. Tokens are compared in constant time.
//!
//! The check is a tower layer of the HTTP server (see [`crate::http`]), ours rather than
//! tower-http's `ValidateRequestHeaderLayer::bearer`, which compares the header with `==` (the
//! time it takes tells how much of a guess was right) and answers `401` without the
//! `WWW-Authenticate` challenge RFC 6750 asks for.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{CONTENT_TYPE, HeaderMap, WWW_AUTHENTICATE};
use hyper::{Response, StatusCode};

use crate::error::McpError;
use crate::head_check::CheckLayer;

/// How many random bytes [`generate_token`] draws from the operating system: 256 bits.
pub const TOKEN_BYTES: usize = agent_bearer::TOKEN_BYTES;

/// The shortest token [`McpServer::bearer_token`](crate::McpServer::bearer_token) accepts, in
/// characters.
pub const MIN_TOKEN_LEN: usize = agent_bearer::MIN_TOKEN_LEN;

/// A new bearer token: [`TOKEN_BYTES`] bytes from the operating system's random number
/// generator, as 64 lowercase hex digits.
///
/// ```
/// let token = agent_mcp::generate_token()?;
/// assert_eq!(token.len(), 64);
/// assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
/// assert_ne!(token, agent_mcp::generate_token()?);
/// # Ok::<(), agent_mcp::McpError>(())
/// ```
pub fn generate_token() -> Result<String, McpError> {
    agent_bearer::generate().map_err(|error| {
        McpError::io(
            "reading random bytes for a bearer token",
            std::io::Error::other(error),
        )
    })
}

/// Who may use the HTTP server.
#[derive(Clone, Default)]
pub(crate) enum Auth {
    /// No choice made: a token is generated when serving starts and printed on stderr.
    #[default]
    Generate,
    /// Requests must carry this token.
    Token(Arc<str>),
    /// No token, allowed on a loopback address only.
    Disabled,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Generate => f.write_str("Generate"),
            Auth::Token(_) => f.write_str("Token(<redacted>)"),
            Auth::Disabled => f.write_str("Disabled"),
        }
    }
}

/// Whether `token` can be required: at least [`MIN_TOKEN_LEN`] characters of RFC 6750's
/// `b64token` alphabet (letters, digits, `-._~+/`, then any `=`), so it fits in a header as is.
pub(crate) fn validate_token(token: &str) -> Result<(), McpError> {
    agent_bearer::validate(token)
        .map_err(|why| McpError::HttpConfig(format!("{why}; use agent_mcp::generate_token()")))
}

/// Checks the request's `Authorization` header against `token`: exactly one header, the scheme
/// `Bearer` (any case), the token equal in constant time.
pub(crate) fn check(
    headers: &HeaderMap,
    token: &str,
) -> Result<(), Box<Response<BoxBody<Bytes, Infallible>>>> {
    agent_bearer::check(headers, token)
        .map_err(|refused| Box::new(unauthorized(refused == agent_bearer::Refused::Wrong)))
}

/// The bearer check as a layer of the HTTP server's router (see [`crate::http`]).
pub(crate) fn layer(token: Arc<str>) -> CheckLayer {
    CheckLayer::new(move |headers| {
        check(headers, &token).map_err(|refused| Box::new(refused.map(Body::new)))
    })
}

/// `401 Unauthorized` with the challenge RFC 6750 describes; `invalid_token` when a token was
/// sent and was wrong.
fn unauthorized(token_sent: bool) -> Response<BoxBody<Bytes, Infallible>> {
    let challenge = if token_sent {
        r#"Bearer realm="mcp", error="invalid_token""#
    } else {
        r#"Bearer realm="mcp""#
    };
    let mut response = Response::new(
        Full::new(Bytes::from_static(
            b"unauthorized: this MCP server requires the header `Authorization: Bearer <token>`",
        ))
        .boxed(),
    );
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(
        WWW_AUTHENTICATE,
        hyper::header::HeaderValue::from_static(challenge),
    );
    headers.insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::AUTHORIZATION;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(AUTHORIZATION, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn only_the_exact_token_with_the_bearer_scheme_passes() {
        let token = "0123456789abcdef0123";
        assert!(check(&headers(&["Bearer 0123456789abcdef0123"]), token).is_ok());
        assert!(check(&headers(&["bearer  0123456789abcdef0123 "]), token).is_ok());
        for bad in [
            &[][..],
            &["Bearer 0123456789abcdef012"],
            &["Bearer 0123456789abcdef01234"],
            &["Basic 0123456789abcdef0123"],
            &["0123456789abcdef0123"],
            &["Bearer"],
            &["Bearer 0123456789abcdef0123", "Bearer 0123456789abcdef0123"],
        ] {
            let refused = check(&headers(bad), token).expect_err("refused");
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{bad:?}");
            let challenge = refused.headers()[WWW_AUTHENTICATE].to_str().unwrap();
            assert!(challenge.starts_with("Bearer"), "{challenge}");
        }
    }

    #[test]
    fn tokens_must_be_long_and_header_safe() {
        assert!(validate_token(&generate_token().unwrap()).is_ok());
        assert!(validate_token("abcdefghijklmnop").is_ok());
        assert!(validate_token("abcdefghijklmnop==").is_ok());
        assert!(validate_token("short").is_err());
        assert!(validate_token("").is_err());
        assert!(validate_token("has a space in it, long enough").is_err());
        assert!(validate_token("line\r\nbreak-long-enough-xx").is_err());
        assert!(validate_token("=abcdefghijklmnopqr").is_err());
    }
}
