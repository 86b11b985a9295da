//! Bearer tokens: making one ([`generate_token`]) and checking a request's `Authorization`
//! header against the server's, in constant time.

use hyper::header::HeaderMap;

use crate::error::A2aError;

/// The shortest token [`A2aServer::bearer_token`](crate::A2aServer::bearer_token) accepts, in
/// characters.
pub const MIN_TOKEN_LEN: usize = agent_bearer::MIN_TOKEN_LEN;

/// A new bearer token: 32 bytes from the operating system's random number generator, as 64
/// lowercase hex digits.
///
/// ```
/// let token = agent_a2a::generate_token()?;
/// assert_eq!(token.len(), 64);
/// # Ok::<(), agent_a2a::A2aError>(())
/// ```
pub fn generate_token() -> Result<String, A2aError> {
    agent_bearer::generate().map_err(A2aError::Config)
}

/// Whether `token` can be required: at least [`MIN_TOKEN_LEN`] characters of RFC 6750's
/// `b64token` alphabet, so that it fits in a header as it is.
pub(crate) fn validate_token(token: &str) -> Result<(), A2aError> {
    agent_bearer::validate(token)
        .map_err(|why| A2aError::Config(format!("{why}; use agent_a2a::generate_token()")))
}

/// Whether the request carries exactly one `Authorization: Bearer <token>` with this token.
/// `Err(true)` when a token was sent and was wrong, `Err(false)` when none was sent.
pub(crate) fn check(headers: &HeaderMap, token: &str) -> Result<(), bool> {
    agent_bearer::check(headers, token).map_err(|refused| refused == agent_bearer::Refused::Wrong)
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
    fn only_the_exact_token_passes() {
        let token = "0123456789abcdef0123";
        assert!(check(&headers(&["Bearer 0123456789abcdef0123"]), token).is_ok());
        assert!(check(&headers(&["bearer 0123456789abcdef0123 "]), token).is_ok());
        assert_eq!(check(&headers(&[]), token), Err(false));
        for bad in [
            &["Bearer 0123456789abcdef012"][..],
            &["Basic 0123456789abcdef0123"],
            &["Bearer 0123456789abcdef0123", "Bearer 0123456789abcdef0123"],
        ] {
            assert!(check(&headers(bad), token).is_err(), "{bad:?}");
        }
        assert!(validate_token(&generate_token().unwrap()).is_ok());
        assert!(validate_token("short").is_err());
        assert!(validate_token("has a space in it, long enough").is_err());
    }
}
