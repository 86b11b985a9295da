//! Bearer tokens: making one ([`generate_token`]), checking that one can be required
//! ([`validate_token`]), and checking a request's `Authorization` header against it in constant
//! time (the [`Guard`](crate::Guard)'s first step after CORS).
//!
//! Ours rather than tower-http's `ValidateRequestHeaderLayer::bearer`: that layer compares the
//! header with `==`, whose time tells an attacker how much of a guess was right, and answers
//! `401` without the `WWW-Authenticate` challenge RFC 6750 asks for.

use http::header::{AUTHORIZATION, HeaderMap};
use subtle::ConstantTimeEq;

use crate::error::EdgeError;

/// The shortest token the edge accepts, in characters.
pub const MIN_TOKEN_LEN: usize = 16;

/// How many random bytes a generated token has (64 hex digits): 256 bits.
pub const TOKEN_BYTES: usize = 32;

/// A new bearer token: [`TOKEN_BYTES`] bytes from the operating system's random number
/// generator, as 64 lowercase hex digits. `Err` ([`EdgeError::NoRandomness`]) when the
/// operating system gave no random bytes.
///
/// ```
/// let token = agent_serve::generate_token()?;
/// assert_eq!(token.len(), 64);
/// assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
/// assert_ne!(token, agent_serve::generate_token()?);
/// # Ok::<(), agent_serve::EdgeError>(())
/// ```
pub fn generate_token() -> Result<String, EdgeError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| EdgeError::NoRandomness(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `token` can be required: at least [`MIN_TOKEN_LEN`] characters of RFC 6750's
/// `b64token` alphabet (letters, digits, `-._~+/`, then any `=`), so that it fits in a header as
/// it is. `Err` is [`EdgeError::WeakToken`] saying which rule it breaks.
pub fn validate_token(token: &str) -> Result<(), EdgeError> {
    let body = token.trim_end_matches('=');
    let well_formed = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if !well_formed {
        return Err(EdgeError::WeakToken(
            "it may contain only letters, digits and `-._~+/` (then `=` padding)".into(),
        ));
    }
    if token.len() < MIN_TOKEN_LEN {
        return Err(EdgeError::WeakToken(format!(
            "it has {} characters, fewer than {MIN_TOKEN_LEN}",
            token.len()
        )));
    }
    Ok(())
}

/// Why a request's token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// It carried no token (no header, or more than one).
    Missing,
    /// It carried a token, and not this one (or not as `Bearer`).
    Wrong,
}

/// Whether the request carries exactly one `Authorization: Bearer <token>` (the scheme in any
/// case) with this token, compared in constant time.
pub(crate) fn check(headers: &HeaderMap, token: &str) -> Result<(), Refused> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(Refused::Missing);
    };
    let presented = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, presented)| presented.trim());
    match presented {
        Some(presented) if bool::from(presented.as_bytes().ct_eq(token.as_bytes())) => Ok(()),
        _ => Err(Refused::Wrong),
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
    fn only_the_exact_token_with_the_bearer_scheme_passes() {
        let token = "0123456789abcdef0123";
        assert!(check(&headers(&["Bearer 0123456789abcdef0123"]), token).is_ok());
        assert!(check(&headers(&["bearer  0123456789abcdef0123 "]), token).is_ok());
        assert_eq!(check(&headers(&[]), token), Err(Refused::Missing));
        assert_eq!(
            check(
                &headers(&["Bearer 0123456789abcdef0123", "Bearer 0123456789abcdef0123"]),
                token
            ),
            Err(Refused::Missing)
        );
        for bad in [
            "Bearer 0123456789abcdef012",
            "Bearer 0123456789abcdef01234",
            "Basic 0123456789abcdef0123",
            "0123456789abcdef0123",
            "Bearer",
        ] {
            assert_eq!(
                check(&headers(&[bad]), token),
                Err(Refused::Wrong),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_token_is_long_enough_and_fits_in_a_header() {
        assert!(validate_token(&generate_token().unwrap()).is_ok());
        assert!(validate_token("abcdefghijklmnop").is_ok());
        assert!(validate_token("0123456789abcdef0123==").is_ok());
        for (weak, why) in [
            ("abc", "fewer than 16"),
            ("", "may contain only"),
            ("0123456789abcdef 0123", "may contain only"),
            ("line\r\nbreak-long-enough-xx", "may contain only"),
            ("=abcdefghijklmnopqr", "may contain only"),
            ("====", "may contain only"),
        ] {
            let error = validate_token(weak).expect_err(weak);
            assert!(
                matches!(&error, EdgeError::WeakToken(m) if m.contains(why)),
                "{error}"
            );
        }
    }
}
