//! Reading a cassette file: vcrpy's YAML layout (see `format.rs`) into a [`Cassette`], every
//! problem named by file, line and column, within [`MAX_CASSETTE_BYTES`] and
//! [`MAX_INTERACTIONS`].

use std::io::Read;
use std::path::Path;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, de::IgnoredAny};
use serde_json::Value;

use super::error::CassetteError;
use super::format::{Body, Cassette, Interaction, Request, Response};
use super::limits::{MAX_CASSETTE_BYTES, MAX_INTERACTIONS};

impl Cassette {
    /// Reads the cassette at `path`. A missing file is [`CassetteError::Missing`] (which says how
    /// to record it), one past [`MAX_CASSETTE_BYTES`] is refused unread, and anything that is not
    /// a cassette is [`CassetteError::Malformed`] with its line and column.
    pub fn load(path: impl AsRef<Path>) -> Result<Cassette, CassetteError> {
        let path = path.as_ref();
        let io = |what: &str, error: std::io::Error| CassetteError::Io {
            path: path.to_owned(),
            message: format!("cannot {what} it: {error}"),
        };
        let file = std::fs::File::open(path).map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => CassetteError::Missing {
                path: path.to_owned(),
            },
            _ => io("open", error),
        })?;
        let too_large = |size: u64| CassetteError::TooLarge {
            path: path.to_owned(),
            size,
            limit: MAX_CASSETTE_BYTES,
        };
        let size = file.metadata().map_err(|e| io("read", e))?.len();
        if size > MAX_CASSETTE_BYTES {
            return Err(too_large(size));
        }
        // The file may grow after the size was read: never read more than the limit.
        let mut bytes = Vec::new();
        file.take(MAX_CASSETTE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io("read", e))?;
        if bytes.len() as u64 > MAX_CASSETTE_BYTES {
            return Err(too_large(bytes.len() as u64));
        }
        let text = String::from_utf8(bytes).map_err(|error| {
            let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
            let column = valid.iter().rev().take_while(|b| **b != b'\n').count() + 1;
            CassetteError::Malformed {
                path: path.to_owned(),
                location: Some((line, column)),
                message: "the file is not UTF-8 text".into(),
            }
        })?;
        Cassette::parse(path, &text)
    }

    /// Reads a cassette from `text`; `path` names it in errors (and is where
    /// [`Cassette::path`] says it came from).
    pub fn parse(path: impl AsRef<Path>, text: &str) -> Result<Cassette, CassetteError> {
        let path = path.as_ref();
        // What would cost the parser far more than the text (deep nesting, a wide fan of
        // aliases) is refused before it builds anything.
        crate::yaml_bounds::check(text).map_err(|error| CassetteError::Malformed {
            path: path.to_owned(),
            location: Some((error.line, 1)),
            message: error.message,
        })?;
        let file: FileDe = serde_yaml_ng::from_str(text).map_err(|e| malformed(path, &e))?;
        Ok(Cassette::new(path, file.interactions))
    }
}

/// A YAML error as [`CassetteError::Malformed`]: its location apart, and not repeated in the
/// message.
fn malformed(path: &Path, error: &serde_yaml_ng::Error) -> CassetteError {
    let location = error.location().map(|l| (l.line(), l.column()));
    let mut message = error
        .to_string()
        .replace("struct FileDe", "a mapping with `interactions`");
    if let Some((line, column)) = location {
        message = message.replacen(&format!(" at line {line} column {column}"), "", 1);
    }
    CassetteError::Malformed {
        path: path.to_owned(),
        location,
        message,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDe {
    #[serde(deserialize_with = "interactions")]
    interactions: Vec<Interaction>,
    #[serde(default, rename = "version")]
    _version: Option<IgnoredAny>,
}

/// The interactions, at most [`MAX_INTERACTIONS`] of them.
fn interactions<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Interaction>, D::Error> {
    struct Capped;
    impl<'de> Visitor<'de> for Capped {
        type Value = Vec<Interaction>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of interactions")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(interaction) = seq.next_element::<InteractionDe>()? {
                if out.len() == MAX_INTERACTIONS {
                    return Err(de::Error::custom(format!(
                        "more than {MAX_INTERACTIONS} interactions, the most a cassette may hold"
                    )));
                }
                out.push(interaction.into_interaction());
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Capped)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InteractionDe {
    request: RequestChecked,
    response: ResponseChecked,
}

impl InteractionDe {
    fn into_interaction(self) -> Interaction {
        Interaction {
            request: self.request.0,
            response: self.response.0,
        }
    }
}

/// A request, checked as a whole once read (its errors are named at the interaction).
#[derive(Deserialize)]
#[serde(try_from = "RequestDe")]
struct RequestChecked(Request);

/// A response, checked as a whole once read (its errors are named at the interaction).
#[derive(Deserialize)]
#[serde(try_from = "ResponseDe")]
struct ResponseChecked(Response);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestDe {
    #[serde(deserialize_with = "method")]
    method: String,
    #[serde(deserialize_with = "uri")]
    uri: String,
    #[serde(default, deserialize_with = "headers")]
    headers: Vec<(String, String)>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    parsed_body: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResponseDe {
    status: StatusDe,
    #[serde(default, deserialize_with = "headers")]
    headers: Vec<(String, String)>,
    #[serde(default, deserialize_with = "response_body")]
    body: Option<String>,
    #[serde(default)]
    parsed_body: Option<Value>,
    /// vcrpy's aiohttp recordings keep the URL here too.
    #[serde(default, rename = "url")]
    _url: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusDe {
    #[serde(deserialize_with = "status_code")]
    code: u16,
    #[serde(default)]
    message: Option<String>,
}

/// One of `body` and `parsed_body`, as a [`Body`].
fn one_body(side: &str, text: Option<String>, parsed: Option<Value>) -> Result<Body, String> {
    match (text, parsed) {
        (Some(text), None) => Ok(Body::from_text(Some(text))),
        (None, Some(value)) => Ok(Body::Json(value)),
        (None, None) => Ok(Body::Empty),
        (Some(_), Some(_)) => Err(format!(
            "the {side} has both `body` and `parsed_body`; keep one"
        )),
    }
}

impl TryFrom<RequestDe> for RequestChecked {
    type Error = String;

    fn try_from(request: RequestDe) -> Result<Self, String> {
        Ok(RequestChecked(Request {
            body: one_body("request", request.body, request.parsed_body)?,
            method: request.method,
            uri: request.uri,
            headers: request.headers,
        }))
    }
}

impl TryFrom<ResponseDe> for ResponseChecked {
    type Error = String;

    fn try_from(response: ResponseDe) -> Result<Self, String> {
        let response = Response {
            body: one_body("response", response.body, response.parsed_body)?,
            status: response.status.code,
            reason: response.status.message,
            headers: response.headers,
        };
        if let (Some(encoding), Body::Text(_)) =
            (response.header("content-encoding"), &response.body)
            && !encoding.trim().eq_ignore_ascii_case("identity")
        {
            return Err(format!(
                "the response body is recorded compressed (content-encoding: {encoding}), which \
                 replay cannot send as text; record it again without compression (the recording \
                 proxy asks for none)"
            ));
        }
        Ok(ResponseChecked(response))
    }
}

/// A text scalar checked by a function, so that its error is named at the scalar's own line.
struct Checked<T> {
    check: fn(&str) -> Result<T, String>,
    expecting: &'static str,
}

impl<'de, T> Visitor<'de> for Checked<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        (self.check)(text).map_err(E::custom)
    }
}

impl<'de, T> de::DeserializeSeed<'de> for Checked<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_str(self)
    }
}

fn method<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    d.deserialize_str(Checked {
        check: |text| {
            hyper::Method::from_bytes(text.as_bytes())
                .map(|m| m.as_str().to_owned())
                .map_err(|_| format!("`{text}` is not an HTTP method"))
        },
        expecting: "an HTTP method",
    })
}

fn uri<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    d.deserialize_str(Checked {
        check: |text| match reqwest::Url::parse(text) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
                Ok(text.to_owned())
            }
            _ => Err(format!(
                "`{text}` is not an absolute http:// or https:// URL"
            )),
        },
        expecting: "an absolute URL",
    })
}

fn status_code<'de, D: Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
    struct Code;
    impl Visitor<'_> for Code {
        type Value = u16;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an HTTP status (100 to 999)")
        }
        fn visit_u64<E: de::Error>(self, code: u64) -> Result<u16, E> {
            match u16::try_from(code) {
                Ok(code) if (100..=999).contains(&code) => Ok(code),
                _ => Err(E::custom(format!(
                    "{code} is not an HTTP status (100 to 999)"
                ))),
            }
        }
        fn visit_i64<E: de::Error>(self, code: i64) -> Result<u16, E> {
            Err(E::custom(format!(
                "{code} is not an HTTP status (100 to 999)"
            )))
        }
    }
    d.deserialize_u16(Code)
}

/// vcrpy's headers: a mapping of names to lists of values (a single value is taken too).
fn headers<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    struct Headers;
    impl<'de> Visitor<'de> for Headers {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a mapping of header names to lists of values")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            let name = Checked {
                check: |name| match hyper::header::HeaderName::from_bytes(name.as_bytes()) {
                    Ok(_) => Ok(name.to_ascii_lowercase()),
                    Err(_) => Err(format!("`{name}` is not a valid header name")),
                },
                expecting: "a header name",
            };
            while let Some(name) = map.next_key_seed(name.clone())? {
                let values = map.next_value_seed(Values { name: &name })?;
                out.extend(values.into_iter().map(|v| (name.clone(), v)));
            }
            Ok(out)
        }
    }
    d.deserialize_map(Headers)
}

impl<T> Clone for Checked<T> {
    fn clone(&self) -> Self {
        Checked {
            check: self.check,
            expecting: self.expecting,
        }
    }
}

/// The values of one header: a list of texts, or one.
struct Values<'n> {
    name: &'n str,
}

impl<'n> Values<'n> {
    fn check<E: de::Error>(&self, value: String) -> Result<String, E> {
        match hyper::header::HeaderValue::from_str(&value) {
            Ok(_) => Ok(value),
            Err(_) => Err(E::custom(format!(
                "the value of header `{}` is not a valid header value",
                self.name
            ))),
        }
    }
}

impl<'de> de::DeserializeSeed<'de> for Values<'_> {
    type Value = Vec<String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<String>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Values<'_> {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the values of header `{}` as text", self.name)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Vec<String>, E> {
        Ok(vec![self.check(value.to_owned())?])
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Vec<String>, E> {
        Ok(vec![value.to_string()])
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Vec<String>, E> {
        Ok(vec![value.to_string()])
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Vec<String>, E> {
        Ok(vec![value.to_string()])
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut out = Vec::new();
        while let Some(value) = seq.next_element::<Text>()? {
            out.push(self.check(value.0)?);
        }
        Ok(out)
    }
}

/// A text, or a number or boolean as text (a header value vcrpy left unquoted).
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a header value as text")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// vcrpy's response body: `{string: TEXT}` (or the text itself, or null).
fn response_body<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct ResponseBody;
    impl<'de> Visitor<'de> for ResponseBody {
        type Value = Option<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a response body as `{string: TEXT}`")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
            Ok(None)
        }
        fn visit_str<E: de::Error>(self, text: &str) -> Result<Option<String>, E> {
            Ok(Some(text.to_owned()))
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
            let mut text = None;
            while let Some(key) = map.next_key::<String>()? {
                if key != "string" {
                    return Err(de::Error::custom(format!(
                        "a response body must be `{{string: TEXT}}`, not `{key}`"
                    )));
                }
                text = map.next_value::<Option<String>>()?;
            }
            Ok(text)
        }
    }
    d.deserialize_any(ResponseBody)
}
