//! Bearer tokens for eugene's HTTP servers (agent-mcp's and agent-a2a's), written once: making a
//! token ([`generate`]), checking that one can be required ([`validate`]), and checking a
//! request's `Authorization` header against it in constant time ([`check`]). Each server maps
//! these to its own errors and its own `401` answer.

#![warn(missing_docs)]

use http::header::{AUTHORIZATION, HeaderMap};
use subtle::ConstantTimeEq;

/// The shortest token a server accepts, in characters.
pub const MIN_TOKEN_LEN: usize = 16;

/// How many random bytes a generated token has (64 hex digits).
pub const TOKEN_BYTES: usize = 32;

/// A new token: [`TOKEN_BYTES`] bytes from the operating system's random number generator, as
/// lowercase hex digits; `Err` says why there were no random bytes.
///
/// ```
/// let token = agent_bearer::generate().unwrap();
/// assert_eq!(token.len(), 64);
/// assert_ne!(token, agent_bearer::generate().unwrap());
/// ```
pub fn generate() -> Result<String, String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes for a bearer token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `token` can be required: at least [`MIN_TOKEN_LEN`] characters of RFC 6750's
/// `b64token` alphabet (letters, digits, `-._~+/`, then any `=`), so that it fits in a header as
/// it is. `Err` is the reason, without advice (the caller names its own way to make one).
pub fn validate(token: &str) -> Result<(), String> {
    let body = token.trim_end_matches('=');
    let well_formed = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if !well_formed {
        return Err(
            "the bearer token may contain only letters, digits and `-._~+/` (then `=` padding)"
                .into(),
        );
    }
    if token.len() < MIN_TOKEN_LEN {
        return Err(format!(
            "the bearer token has {} characters, fewer than {MIN_TOKEN_LEN}",
            token.len()
        ));
    }
    Ok(())
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// It carried no token (no header, or more than one).
    Missing,
    /// It carried a token, and not this one (or not as `Bearer`).
    Wrong,
}

/// Whether the request carries exactly one `Authorization: Bearer <token>` (the scheme in any
/// case) with this token, compared in constant time.
pub fn check(headers: &HeaderMap, token: &str) -> Result<(), Refused> {
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
        assert!(validate(&generate().unwrap()).is_ok());
        assert!(validate("abc").unwrap_err().contains("fewer than 16"));
        assert!(
            validate("0123456789abcdef 0123")
                .unwrap_err()
                .contains("may contain only")
        );
        assert!(validate("0123456789abcdef0123==").is_ok());
        assert!(validate("====").is_err());
    }
}
