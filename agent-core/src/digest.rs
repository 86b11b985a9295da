//! Digests of JSON values that do not depend on how the value was written: SHA-256 over its
//! canonical form (object keys sorted by their UTF-8 bytes, no white space, strings and numbers
//! as `serde_json` writes them). Two values that compare equal have the same digest, whatever
//! order their keys arrived in.
//!
//! Used for the digest of a call a person decides on ([`PendingCall::digest`](
//! crate::pending::PendingCall::digest)) and for idempotency keys ([`SkillContext::
//! idempotency_key`](crate::SkillContext::idempotency_key)); a runtime seals its states over the
//! same canonical bytes.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes `value` in canonical form to `out`: keys sorted, no white space.
pub fn canonical_json(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(key, out);
                out.push(b':');
                canonical_json(value, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(item, out);
            }
            out.push(b']');
        }
        Value::String(s) => write_string(s, out),
        // Null, booleans and numbers: serde_json's own text, which is one form per value.
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    // serde_json escapes a string one way only; writing into a Vec cannot fail.
    serde_json::to_writer(&mut *out, s).unwrap_or_default();
}

/// SHA-256 of `parts`, each length-prefixed (so `("ab", "c")` and `("a", "bc")` differ), as 64
/// lowercase hex digits.
pub fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part);
    }
    hex(&hasher.finalize())
}

/// An idempotency key made from `parts` ([`sha256_hex`] of them, 128 bits of it): `ik-` and 32
/// hex digits. The same parts give the same key; the parts of a call (its run, its place in the
/// run, its path) make it the call's own.
pub fn idempotency_key(parts: &[&[u8]]) -> String {
    let mut key = String::with_capacity(35);
    key.push_str("ik-");
    key.push_str(&sha256_hex(parts)[..32]);
    key
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(DIGITS[usize::from(byte >> 4)] as char);
        text.push(DIGITS[usize::from(byte & 15)] as char);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canonical(value: &Value) -> String {
        let mut out = Vec::new();
        canonical_json(value, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn key_order_does_not_change_the_canonical_form() {
        let a: Value =
            serde_json::from_str(r#"{"b": 1, "a": {"y": [1, "x"], "x": null}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a": {"x": null, "y": [1, "x"]}, "b": 1}"#).unwrap();
        assert_eq!(canonical(&a), r#"{"a":{"x":null,"y":[1,"x"]},"b":1}"#);
        assert_eq!(canonical(&a), canonical(&b));
    }

    #[test]
    fn strings_are_escaped_and_parts_are_length_prefixed() {
        assert_eq!(canonical(&json!("a\"b\n")), r#""a\"b\n""#);
        assert_ne!(sha256_hex(&[b"ab", b"c"]), sha256_hex(&[b"a", b"bc"]));
        assert_eq!(sha256_hex(&[b"x"]).len(), 64);
    }
}
