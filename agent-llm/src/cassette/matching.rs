//! Which recorded interaction answers a request: [`Matcher`] says what must be equal, and the
//! differences between a request and a recorded one are listed by what differs (the method, the
//! path, a query parameter, a header, or the JSON path in the body), for the report of a request
//! nothing matched.

use serde_json::Value;

use super::format::{Body, Request};
use super::limits::REDACTED;
use super::redact::is_secret_name;

/// Where OpenAI's requests name their conversation for the prompt cache.
const PROMPT_CACHE_KEY: &str = "/prompt_cache_key";
/// At most this many differences are kept for one comparison (all are counted).
const MAX_SHOWN: usize = 20;
/// At most this many characters of a value are shown in a difference.
const VALUE_CHARS: usize = 120;

/// What must be equal for a recorded interaction to answer a request.
///
/// By default ([`Matcher::new`]): the method, the path, the query (its parameters in any order;
/// a parameter recorded as `[redacted]` matches any value) and the body, but for its top-level
/// `prompt_cache_key` (OpenAI's, which the runtime derives from a run's random id, so it differs
/// on every run; [`Matcher::compare_prompt_cache_key`] compares it too). Bodies that are JSON
/// on both sides are compared as JSON: key order is ignored, and numbers are equal when their
/// values are (`1` and `1.0`). Other bodies are compared as text. Headers are not compared
/// unless named with [`Matcher::header`] (a header recorded as `[redacted]` then only has to be
/// present).
///
/// ```
/// use agent_llm::cassette::Matcher;
///
/// // The provider adds a random `metadata.user_id` to each request: do not compare it.
/// let matcher = Matcher::new()
///     .ignore_body_field("/metadata/user_id")
///     .header("anthropic-version");
/// # let _ = matcher;
/// ```
#[derive(Debug, Clone)]
pub struct Matcher {
    query: bool,
    body: BodyRule,
    ignored: Vec<String>,
    headers: Vec<String>,
}

#[derive(Debug, Clone)]
enum BodyRule {
    Whole,
    Fields(Vec<String>),
    Ignored,
}

impl Default for Matcher {
    fn default() -> Self {
        Matcher::new()
    }
}

impl Matcher {
    /// Method, path, query and body (but for `/prompt_cache_key`) must be equal; headers are not
    /// compared.
    pub fn new() -> Matcher {
        Matcher {
            query: true,
            body: BodyRule::Whole,
            ignored: vec![PROMPT_CACHE_KEY.to_owned()],
            headers: Vec::new(),
        }
    }

    /// The body's `prompt_cache_key` is compared too.
    pub fn compare_prompt_cache_key(mut self) -> Matcher {
        self.ignored.retain(|p| p != PROMPT_CACHE_KEY);
        self
    }

    /// The query is not compared.
    pub fn ignore_query(mut self) -> Matcher {
        self.query = false;
        self
    }

    /// The body is not compared: requests to the same method and path are answered in the
    /// recorded order.
    pub fn ignore_body(mut self) -> Matcher {
        self.body = BodyRule::Ignored;
        self
    }

    /// The value at this JSON pointer (`/metadata/user_id`, RFC 6901; a missing leading `/` is
    /// added) is not compared, on either side. May be given several times.
    pub fn ignore_body_field(mut self, pointer: impl Into<String>) -> Matcher {
        self.ignored.push(pointer_of(pointer.into()));
        self
    }

    /// Only the values at these JSON pointers are compared (each must be equal, or missing on
    /// both sides); the rest of the body is not. A body that is not JSON is compared whole.
    pub fn body_fields<P: Into<String>>(
        mut self,
        pointers: impl IntoIterator<Item = P>,
    ) -> Matcher {
        self.body = BodyRule::Fields(pointers.into_iter().map(|p| pointer_of(p.into())).collect());
        self
    }

    /// Header `name` (any case) must be equal too. May be given several times.
    pub fn header(mut self, name: impl Into<String>) -> Matcher {
        self.headers.push(name.into().to_ascii_lowercase());
        self
    }
}

fn pointer_of(pointer: String) -> String {
    if pointer.starts_with('/') || pointer.is_empty() {
        pointer
    } else {
        format!("/{pointer}")
    }
}

/// A request as compared: from the wire, or recorded.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Compared,
}

/// A body as compared.
#[derive(Debug, Clone)]
pub(crate) enum Compared {
    Json(Value),
    Text(String),
}

impl Compared {
    fn of_bytes(bytes: &[u8]) -> Compared {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value) if !bytes.is_empty() => Compared::Json(value),
            _ => Compared::Text(String::from_utf8_lossy(bytes).into_owned()),
        }
    }
}

impl Shape {
    /// A recorded request.
    pub(crate) fn of_recorded(request: &Request) -> Shape {
        // The URI was checked when the cassette was read.
        let url = reqwest::Url::parse(&request.uri).ok();
        let body = match &request.body {
            Body::Json(value) => Compared::Json(value.clone()),
            other => Compared::of_bytes(&other.to_bytes()),
        };
        Shape {
            method: request.method.clone(),
            path: url
                .as_ref()
                .map(|u| u.path().to_owned())
                .unwrap_or_default(),
            query: url.as_ref().map(query_of).unwrap_or_default(),
            headers: request.headers.clone(),
            body,
        }
    }

    /// A request from the wire: `target` is its path and query.
    pub(crate) fn of_wire(
        method: &str,
        target: &str,
        headers: Vec<(String, String)>,
        body: &[u8],
    ) -> Shape {
        let url = reqwest::Url::parse(&format!("http://replay.invalid{target}")).ok();
        Shape {
            method: method.to_owned(),
            path: url
                .as_ref()
                .map_or_else(|| target.to_owned(), |u| u.path().to_owned()),
            query: url.as_ref().map(query_of).unwrap_or_default(),
            headers,
            body: Compared::of_bytes(body),
        }
    }
}

fn query_of(url: &reqwest::Url) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    pairs.sort();
    pairs
}

/// How a request differs from a recorded one: how many differences, weighed so that one with
/// the same method and path is always closer than one without, and the first ones, written out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Differences {
    pub(crate) weight: usize,
    pub(crate) count: usize,
    pub(crate) shown: Vec<String>,
}

impl Differences {
    fn add(&mut self, weight: usize, line: impl FnOnce() -> String) {
        self.weight += weight;
        self.count += 1;
        if self.shown.len() < MAX_SHOWN {
            self.shown.push(line());
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The differences, one per line, indented.
    pub(crate) fn lines(&self) -> String {
        let mut out = String::new();
        for line in &self.shown {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        if self.count > self.shown.len() {
            out.push_str(&format!(
                "  … and {} more differences\n",
                self.count - self.shown.len()
            ));
        }
        out
    }
}

impl Matcher {
    /// What differs between `sent` and `recorded`, as this matcher sees them.
    pub(crate) fn compare(&self, sent: &Shape, recorded: &Shape) -> Differences {
        let mut out = Differences::default();
        if sent.method != recorded.method {
            out.add(1000, || {
                format!(
                    "method: request {}, recorded {}",
                    sent.method, recorded.method
                )
            });
        }
        if sent.path != recorded.path {
            out.add(1000, || {
                format!("path: request {}, recorded {}", sent.path, recorded.path)
            });
        }
        if self.query {
            compare_query(&sent.query, &recorded.query, &mut out);
        }
        for name in &self.headers {
            let get = |h: &[(String, String)]| {
                h.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.clone())
            };
            let (s, r) = (get(&sent.headers), get(&recorded.headers));
            let equal = match (&s, &r) {
                (Some(_), Some(r)) if r == REDACTED => true,
                _ => s == r,
            };
            if !equal {
                // A secret header's value is never shown, only whether there is one.
                let show = |v: Option<&str>| match v {
                    Some(_) if is_secret_name(name) => "(a value, not shown)".to_owned(),
                    v => shown_opt(v),
                };
                out.add(1, || {
                    format!(
                        "header `{name}`: request {}, recorded {}",
                        show(s.as_deref()),
                        show(r.as_deref())
                    )
                });
            }
        }
        match (&self.body, &sent.body, &recorded.body) {
            (BodyRule::Ignored, _, _) => {}
            (rule, Compared::Json(s), Compared::Json(r)) => {
                let (mut s, mut r) = (s.clone(), r.clone());
                for pointer in &self.ignored {
                    remove_at(&mut s, pointer);
                    remove_at(&mut r, pointer);
                }
                match rule {
                    BodyRule::Fields(pointers) => {
                        for pointer in pointers {
                            match (s.pointer(pointer), r.pointer(pointer)) {
                                (Some(a), Some(b)) => {
                                    diff_json(&mut pointer.clone(), a, b, &mut out);
                                }
                                (None, None) => {}
                                (a, b) => out.add(1, || {
                                    format!(
                                        "body {pointer}: request {}, recorded {}",
                                        shown_json_opt(a),
                                        shown_json_opt(b)
                                    )
                                }),
                            }
                        }
                    }
                    _ => diff_json(&mut String::new(), &s, &r, &mut out),
                }
            }
            (_, s, r) => {
                let text = |c: &Compared| match c {
                    Compared::Json(v) => v.to_string(),
                    Compared::Text(t) => t.clone(),
                };
                let (s, r) = (text(s), text(r));
                if s != r && !same_form(&s, &r) {
                    out.add(1, || {
                        format!("body: request {}, recorded {}", shown(&s), shown(&r))
                    });
                }
            }
        }
        out
    }
}

fn compare_query(sent: &[(String, String)], recorded: &[(String, String)], out: &mut Differences) {
    let mut names: Vec<&str> = sent
        .iter()
        .chain(recorded)
        .map(|(k, _)| k.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let values = |q: &[(String, String)]| -> Vec<String> {
            q.iter()
                .filter(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .collect()
        };
        let (s, r) = (values(sent), values(recorded));
        let redacted = !r.is_empty() && r.iter().all(|v| v == REDACTED);
        let equal = if redacted { s.len() == r.len() } else { s == r };
        if !equal {
            let list = |v: &[String]| {
                if v.is_empty() {
                    "(none)".to_owned()
                } else {
                    v.iter().map(|v| shown(v)).collect::<Vec<_>>().join(", ")
                }
            };
            out.add(10, || {
                format!(
                    "query `{name}`: request {}, recorded {}",
                    list(&s),
                    list(&r)
                )
            });
        }
    }
}

/// Removes the value at `pointer`: an object's key, or an array's element made `null` (so the
/// indexes after it stay where they were).
fn remove_at(value: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match value.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.shift_remove(&last);
        }
        Some(Value::Array(items)) => {
            if let Some(item) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *item = Value::Null;
            }
        }
        _ => {}
    }
}

/// The differences between two JSON values under `path` (a JSON pointer).
fn diff_json(path: &mut String, sent: &Value, recorded: &Value, out: &mut Differences) {
    match (sent, recorded) {
        // A field recorded as `[redacted]` (a credential in the body) matches any value.
        (_, Value::String(r)) if r == REDACTED => {}
        (Value::Object(s), Value::Object(r)) => {
            for (key, value) in s {
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                match r.get(key) {
                    Some(other) => diff_json(path, value, other, out),
                    None => out.add(1, || {
                        format!("body {path}: only in the request: {}", shown_json(value))
                    }),
                }
                path.truncate(len);
            }
            for (key, value) in r {
                if !s.contains_key(key) {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    out.add(1, || {
                        format!(
                            "body {path}/{key}: only in the recording: {}",
                            shown_json(value)
                        )
                    });
                }
            }
        }
        (Value::Array(s), Value::Array(r)) => {
            for (i, (a, b)) in s.iter().zip(r).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                diff_json(path, a, b, out);
                path.truncate(len);
            }
            for (i, extra) in s.iter().enumerate().skip(r.len()) {
                out.add(1, || {
                    format!(
                        "body {path}/{i}: only in the request: {}",
                        shown_json(extra)
                    )
                });
            }
            for (i, extra) in r.iter().enumerate().skip(s.len()) {
                out.add(1, || {
                    format!(
                        "body {path}/{i}: only in the recording: {}",
                        shown_json(extra)
                    )
                });
            }
        }
        (Value::Number(a), Value::Number(b)) if numbers_equal(a, b) => {}
        (a, b) if a == b => {}
        (a, b) => out.add(1, || {
            let at = if path.is_empty() { "" } else { path.as_str() };
            format!(
                "body{}{at}: request {}, recorded {}",
                if at.is_empty() { "" } else { " " },
                shown_json(a),
                shown_json(b)
            )
        }),
    }
}

fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => a.as_f64() == b.as_f64(),
    }
}

fn shown_json(value: &Value) -> String {
    clip(&value.to_string())
}

fn shown_json_opt(value: Option<&Value>) -> String {
    value.map_or_else(|| "(missing)".to_owned(), shown_json)
}

fn shown(text: &str) -> String {
    clip(&format!("{text:?}"))
}

fn shown_opt(text: Option<&str>) -> String {
    text.map_or_else(|| "(missing)".to_owned(), shown)
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(VALUE_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// Whether two form-encoded bodies (`a=1&b=2`) are the same but for the fields recorded as
/// `[redacted]` (a credential), which match any value.
fn same_form(sent: &str, recorded: &str) -> bool {
    let redacted = REDACTED.replace('[', "%5B").replace(']', "%5D");
    if !recorded.contains(&redacted) {
        return false;
    }
    let (s, r): (Vec<&str>, Vec<&str>) = (sent.split('&').collect(), recorded.split('&').collect());
    s.len() == r.len()
        && s.iter().zip(&r).all(|(a, b)| {
            a == b
                || match (a.split_once('='), b.split_once('=')) {
                    (Some((an, _)), Some((bn, bv))) => an == bn && bv == redacted,
                    _ => false,
                }
        })
}
