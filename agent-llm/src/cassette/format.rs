//! The cassette file: vcrpy's YAML layout, and the [`Cassette`] it holds (`read.rs` reads it).
//!
//! ```yaml
//! interactions:
//! - request:
//!     method: POST
//!     uri: https://api.anthropic.com/v1/messages
//!     headers: {content-type: [application/json]}
//!     body: '{"model": "claude-sonnet-4-5", ...}'   # or parsed_body: {model: ..., ...}
//!   response:
//!     status: {code: 200, message: OK}
//!     headers: {content-type: [application/json]}
//!     body: {string: '{"id": "msg_01", ...}'}       # or parsed_body: {id: ..., ...}
//! version: 1
//! ```
//!
//! `parsed_body` is pydantic-ai's extension (a JSON body written as YAML); vcrpy writes `body`
//! as text. Both are read, on either side; one interaction may not have both on one side.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The body of a recorded request or response.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// No body (vcrpy's `body: null`, or an empty text).
    Empty,
    /// A body kept as text (vcrpy's `body` / `body.string`): server-sent events, or JSON as it
    /// was sent.
    Text(String),
    /// A JSON body kept as YAML (`parsed_body`); replayed as compact JSON.
    Json(Value),
}

impl Body {
    /// The body as it goes over the wire.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Body::Empty => Vec::new(),
            Body::Text(text) => text.clone().into_bytes(),
            Body::Json(value) => value.to_string().into_bytes(),
        }
    }

    /// The body as JSON, if it is JSON (kept as such, or text that parses).
    pub fn json(&self) -> Option<Value> {
        match self {
            Body::Empty => None,
            Body::Text(text) => serde_json::from_str(text).ok(),
            Body::Json(value) => Some(value.clone()),
        }
    }

    pub(super) fn from_text(text: Option<String>) -> Body {
        match text {
            Some(text) if !text.is_empty() => Body::Text(text),
            _ => Body::Empty,
        }
    }
}

/// A recorded request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The absolute URL it went to (with any key in its query redacted).
    pub uri: String,
    /// Its headers as recorded, names in lower case (secrets redacted).
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: Body,
}

/// A recorded response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The reason phrase recorded beside it (`OK`); replay sends the standard one.
    pub reason: Option<String>,
    /// Its headers as recorded, names in lower case (secrets redacted).
    pub headers: Vec<(String, String)>,
    /// Its body: the whole answer, streamed or not.
    pub body: Body,
}

impl Response {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

impl Request {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// One recorded exchange: a request and the answer it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Interaction {
    /// What was asked.
    pub request: Request,
    /// What came back.
    pub response: Response,
}

/// A cassette read from its file: the recorded interactions, in order.
#[derive(Debug, Clone)]
pub struct Cassette {
    path: PathBuf,
    interactions: Vec<Interaction>,
}

impl Cassette {
    /// A cassette of these interactions, said to come from `path`.
    pub fn new(path: impl Into<PathBuf>, interactions: Vec<Interaction>) -> Cassette {
        Cassette {
            path: path.into(),
            interactions,
        }
    }

    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The recorded interactions, in the file's order.
    pub fn interactions(&self) -> &[Interaction] {
        &self.interactions
    }
}
