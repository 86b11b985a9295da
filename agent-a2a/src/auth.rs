//! Bearer tokens: making one ([`generate_token`]) and checking a request's `Authorization`
//! header against the server's, in constant time.

use hyper::header::{AUTHORIZATION, HeaderMap};
use subtle::ConstantTimeEq;

use crate::error::A2aError;

/// The shortest token [`A2aServer::bearer_token`](crate::A2aServer::bearer_token) accepts, in
/// characters.
pub const MIN_TOKEN_LEN: usize = 16;

/// A new bearer token: 32 bytes from the operating system's random number generator, as 64
/// lowercase hex digits.
///
/// ```
/// let token = agent_a2a::generate_token()?;
/// assert_eq!(token.len(), 64);
/// # Ok::<(), agent_a2a::A2aError>(())
/// ```
pub fn generate_token() -> Result<String, A2aError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| A2aError::Config(format!("no random bytes for a bearer token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `token` can be required: at least [`MIN_TOKEN_LEN`] characters of RFC 6750's
/// `b64token` alphabet, so that it fits in a header as it is.
pub(crate) fn validate_token(token: &str) -> Result<(), A2aError> {
    let body = token.trim_end_matches('=');
    let well_formed = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if !well_formed {
        return Err(A2aError::Config(
            "the bearer token may contain only letters, digits and `-._~+/` (then `=` padding); \
             use agent_a2a::generate_token()"
                .into(),
        ));
    }
    if token.len() < MIN_TOKEN_LEN {
        return Err(A2aError::Config(format!(
            "the bearer token has {} characters, fewer than {MIN_TOKEN_LEN}; use \
             agent_a2a::generate_token()",
            token.len()
        )));
    }
    Ok(())
}

/// Whether the request carries exactly one `Authorization: Bearer <token>` with this token.
/// `Err(true)` when a token was sent and was wrong, `Err(false)` when none was sent.
pub(crate) fn check(headers: &HeaderMap, token: &str) -> Result<(), bool> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(false);
    };
    let presented = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, presented)| presented.trim());
    match presented {
        Some(presented) if bool::from(presented.as_bytes().ct_eq(token.as_bytes())) => Ok(()),
        _ => Err(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
