//! Keeping secrets out of a cassette: the headers, query parameters and body fields whose values
//! are replaced by `[redacted]` before anything is kept, the values so removed (and any the user
//! names) collected as [`Secrets`], and the scan that refuses a cassette in which one of them
//! still appears.
//!
//! A request's headers are kept only when they are known to be safe ([`SAFE_REQUEST_HEADERS`]):
//! every other one is redacted and its value searched for, since a client may send its
//! credentials under any name (`X-Access-Tok`, `Cookie2`). Query parameters and JSON body fields
//! are redacted when their name looks like a credential's; a response's headers when theirs
//! does.

use serde_json::Value;

use super::format::{Body, Interaction};
use super::limits::{MIN_SECRET_CHARS, REDACTED};

/// Headers that are always redacted, whatever their name's words.
const SECRET_HEADERS: [&str; 10] = [
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "cookie",
    "set-cookie",
    // Account identifiers: not keys, but they name whose account made the recording.
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
];

/// Words that make a header or query parameter secret when one of its name's words (split at
/// `-` and `_`) is one of them: `x-goog-api-key`, `access_token`, `x-amz-security-token`, `sig`,
/// an OAuth `code`, a `pwd`, a `session_id`.
const SECRET_WORDS: [&str; 19] = [
    "key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "auth",
    "credential",
    "credentials",
    "cred",
    "sig",
    "signature",
    "code",
    "session",
    "sessionid",
    "sid",
    "jwt",
];

/// The request headers a cassette keeps as they were: what the providers' APIs and their SDKs
/// send that names no one and grants nothing. Every other request header is redacted.
pub const SAFE_REQUEST_HEADERS: [&str; 14] = [
    "accept",
    "accept-encoding",
    "accept-language",
    "anthropic-beta",
    "anthropic-version",
    "content-type",
    "content-length",
    "openai-beta",
    "user-agent",
    "x-goog-api-client",
    "x-stainless-lang",
    "x-stainless-package-version",
    "x-stainless-runtime",
    "x-stainless-os",
];

/// JSON body fields that look like credentials by name but are not (a prompt cache's key, an
/// idempotency key, token counts).
const SAFE_BODY_FIELDS: [&str; 4] = [
    "prompt_cache_key",
    "idempotency_key",
    "max_tokens",
    "max_output_tokens",
];

/// Whether a header, query parameter or body field named `name` carries a secret: its words are
/// split at `-`, `_`, `.` and where a capital starts one (`clientSecret`, `accessToken`).
pub(crate) fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if SECRET_HEADERS.contains(&lower.as_str()) {
        return true;
    }
    let mut words = String::with_capacity(name.len() + 4);
    let mut previous_lower = false;
    for ch in name.chars() {
        if ch.is_ascii_uppercase() && previous_lower {
            words.push('_');
        }
        previous_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        words.push(ch.to_ascii_lowercase());
    }
    words
        .split(['-', '_', '.'])
        .any(|word| SECRET_WORDS.contains(&word))
}

/// The secrets a recording must not write: each value with where it came from (never the value
/// itself in a message).
#[derive(Debug, Default, Clone)]
pub(crate) struct Secrets {
    values: Vec<(String, String)>,
}

impl Secrets {
    /// Adds `value`, described as `source`, unless it is too short to search for or known.
    pub(crate) fn add(&mut self, value: &str, source: impl Into<String>) {
        let value = value.trim();
        if value.chars().count() < MIN_SECRET_CHARS || value == REDACTED {
            return;
        }
        if !self.values.iter().any(|(v, _)| v == value) {
            self.values.push((value.to_owned(), source.into()));
        }
    }

    /// The value of a secret header (and its parts: the credentials after `Bearer `, each
    /// cookie's value).
    pub(crate) fn add_header(&mut self, name: &str, value: &str) {
        let source = format!("the value of header `{name}`");
        self.add(value, source.clone());
        if let Some((_scheme, credentials)) = value.trim().split_once(' ') {
            self.add(credentials, source.clone());
        }
        if matches!(name, "cookie" | "set-cookie") {
            let pairs: Vec<&str> = if name == "cookie" {
                value.split(';').collect()
            } else {
                value.split(';').take(1).collect()
            };
            for pair in pairs {
                if let Some((_, cookie)) = pair.split_once('=') {
                    self.add(cookie, source.clone());
                }
            }
        }
    }

    /// Where the first secret appears in `text`, if one does: the secret's source.
    fn found_in(&self, text: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(value, _)| text.contains(value.as_str()))
            .map(|(_, source)| source.as_str())
    }

    /// `Err` names the first secret that appears anywhere in the interactions or in the text
    /// that would be written, and where.
    pub(crate) fn scan(&self, interactions: &[Interaction], written: &str) -> Result<(), String> {
        let refuse = |source: &str, place: String| {
            Err(format!(
                "{source} appears in {place}; a cassette must hold no secret (the key is \
                 redacted from the headers and the query, but the API sent it back, or the \
                 request carried it elsewhere)"
            ))
        };
        for (i, interaction) in interactions.iter().enumerate() {
            let sides = [
                (
                    "request",
                    &interaction.request.headers,
                    &interaction.request.body,
                ),
                (
                    "response",
                    &interaction.response.headers,
                    &interaction.response.body,
                ),
            ];
            if let Some(source) = self.found_in(&interaction.request.uri) {
                return refuse(source, format!("interactions[{i}].request.uri"));
            }
            for (side, headers, body) in sides {
                for (name, value) in headers {
                    if let Some(source) = self.found_in(value).or_else(|| self.found_in(name)) {
                        return refuse(source, format!("interactions[{i}].{side} header `{name}`"));
                    }
                }
                let found = match body {
                    Body::Empty => None,
                    Body::Text(text) => self.found_in(text),
                    Body::Json(value) => self.found_in_json(value),
                };
                if let Some(source) = found {
                    return refuse(source, format!("interactions[{i}].{side} body"));
                }
            }
        }
        if let Some(source) = self.found_in(written) {
            return refuse(source, "the cassette's text".into());
        }
        Ok(())
    }

    fn found_in_json(&self, value: &Value) -> Option<&str> {
        match value {
            Value::String(text) => self.found_in(text),
            Value::Array(items) => items.iter().find_map(|v| self.found_in_json(v)),
            Value::Object(map) => map
                .iter()
                .find_map(|(k, v)| self.found_in(k).or_else(|| self.found_in_json(v))),
            _ => None,
        }
    }
}

/// `url` as it is recorded: the value of each secret query parameter and any password
/// replaced by `[redacted]`, the values added to `secrets`.
pub(crate) fn redact_url(url: &reqwest::Url, secrets: &mut Secrets) -> String {
    let mut url = url.clone();
    if let Some(password) = url.password() {
        secrets.add(password, "the URL's password");
        let _ = url.set_password(Some(REDACTED));
    }
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let mut query = url.query_pairs_mut();
        query.clear();
        for (name, value) in pairs {
            if is_secret_name(&name) {
                secrets.add(&value, format!("the value of query parameter `{name}`"));
                query.append_pair(&name, REDACTED);
            } else {
                query.append_pair(&name, &value);
            }
        }
    }
    url.to_string()
}

/// A request's `headers` as they are recorded: names in lower case, the values of all but the
/// [`SAFE_REQUEST_HEADERS`] redacted and added to `secrets`, without those that belong to one
/// connection.
pub(crate) fn redact_request_headers(
    headers: &hyper::HeaderMap,
    secrets: &mut Secrets,
    keep: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    redact(headers, secrets, keep, |name| {
        !SAFE_REQUEST_HEADERS.contains(&name)
    })
}

/// A form-encoded request body (`a=1&password=…`) as it is recorded: the value of each field
/// whose name looks like a credential's redacted and added to `secrets` (raw and decoded).
pub(crate) fn redact_form(text: &str, secrets: &mut Secrets) -> String {
    text.split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value))
                if is_secret_name(name)
                    || percent_decode(&name.replace('+', " "))
                        .is_ok_and(|n| is_secret_name(&n)) =>
            {
                let source = format!("the value of form field `{name}`");
                secrets.add(value, source.clone());
                let decoded = value.replace('+', " ");
                if let Ok(decoded) = percent_decode(&decoded) {
                    secrets.add(&decoded, source);
                }
                format!(
                    "{name}={}",
                    REDACTED.replace('[', "%5B").replace(']', "%5D")
                )
            }
            _ => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `%XX` escapes decoded; `Err` when the result is not UTF-8 or an escape is malformed.
fn percent_decode(text: &str) -> Result<String, ()> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = text.get(at + 1..at + 3).ok_or(())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| ())?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ())
}

/// A JSON request body as it is recorded: the string or number value of every field whose name
/// looks like a credential's (`password`, `api_key`, `client_secret`) redacted and added to
/// `secrets`, at any depth.
pub(crate) fn redact_body(value: &mut Value, secrets: &mut Secrets) {
    match value {
        Value::Object(map) => {
            for (name, field) in map.iter_mut() {
                if is_secret_name(name) && !SAFE_BODY_FIELDS.contains(&name.as_str()) {
                    // A credential's field: every string and number under it, whatever shape.
                    redact_all(field, name, secrets);
                } else {
                    redact_body(field, secrets);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| redact_body(item, secrets)),
        _ => {}
    }
}

/// Redacts every string and number in `value`, under the credential field `name`.
fn redact_all(value: &mut Value, name: &str, secrets: &mut Secrets) {
    match value {
        Value::String(text) => {
            secrets.add(text, format!("the value of body field `{name}`"));
            *value = Value::String(REDACTED.to_owned());
        }
        Value::Number(number) => {
            secrets.add(
                &number.to_string(),
                format!("the value of body field `{name}`"),
            );
            *value = Value::String(REDACTED.to_owned());
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| redact_all(item, name, secrets)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|item| redact_all(item, name, secrets)),
        _ => {}
    }
}

/// `headers` as they are recorded (names in lower case, secret values redacted and added to
/// `secrets`), without those that belong to one connection.
pub(crate) fn redact_headers(
    headers: &hyper::HeaderMap,
    secrets: &mut Secrets,
    keep: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    redact(headers, secrets, keep, is_secret_name)
}

/// `headers` kept by `keep`, names in lower case, the values of those `secret` names redacted
/// and added to `secrets`.
fn redact(
    headers: &hyper::HeaderMap,
    secrets: &mut Secrets,
    keep: impl Fn(&str) -> bool,
    secret: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(name, _)| keep(name.as_str()))
        .map(|(name, value)| {
            let name = name.as_str().to_owned();
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            if secret(&name) {
                secrets.add_header(&name, &value);
                (name, REDACTED.to_owned())
            } else {
                (name, value)
            }
        })
        .collect()
}
