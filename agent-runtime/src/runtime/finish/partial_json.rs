//! [`PartialJson`]: JSON text read as it arrives, in pieces, into the value it is so far: every
//! complete scalar in its place, every open object or array with the members complete so far.
//! A typed run's stream of partial answers is this value after each piece
//! ([`TypedRunRequest::stream`](crate::runtime::TypedRunRequest::stream)).
//!
//! How it reads is on [`PartialJson`].

use std::sync::Arc;

use serde_json::{Map, Number, Value};

/// The deepest nesting read (serde_json's own recursion limit is 128).
pub const MAX_DEPTH: usize = 128;

/// JSON text read piece by piece into the value it is so far.
///
/// Each piece is read once: the parser keeps its place (the open containers, the token being
/// read) and adds each completed value to the tree where it belongs, so a 20 KB answer in 2,000
/// pieces costs about what reading it once does (`benches/partial.rs`), not 2,000 reads of a
/// growing text. What is not complete yet is left out: a string or number still being written,
/// a member whose value has not begun. Text before the first `{` or `[` (a model's prose, a
/// Markdown fence) is skipped, and so is everything after the value closes.
///
/// Malformed text stops the parser ([`PartialJson::error`]): the value so far stays, and nothing
/// more is added. Nesting deeper than [`MAX_DEPTH`] is malformed here, as it is too deep for
/// serde_json.
///
/// ```
/// use agent_runtime::runtime::PartialJson;
/// use serde_json::json;
///
/// let mut json = PartialJson::new();
/// json.push(r#"{"title": "Rust", "tags": ["fa"#);
/// assert_eq!(json.value(), Some(&json!({"title": "Rust", "tags": []})));
/// json.push(r#"st", "safe"], "stars": 12"#);
/// assert_eq!(json.value(), Some(&json!({"title": "Rust", "tags": ["fast", "safe"]})));
/// json.push("}");
/// assert!(json.is_complete());
/// assert_eq!(json.value(), Some(&json!({"title": "Rust", "tags": ["fast", "safe"], "stars": 12})));
/// ```
#[derive(Debug, Default)]
pub struct PartialJson {
    /// The value so far; `None` until its first `{` or `[`. Shared with the snapshots handed
    /// out ([`PartialJson::snapshot`]), and copied on the next change only while one is held.
    root: Option<Arc<Value>>,
    /// The open containers, outermost first.
    open: Vec<Open>,
    /// The token being read.
    token: Token,
    /// Whether the root value has closed.
    complete: bool,
    /// Why the text stopped being JSON.
    error: Option<String>,
    /// Whether a value was added since [`PartialJson::take_changed`].
    changed: bool,
}

/// An open container: where its members go, and what it expects next.
#[derive(Debug)]
enum Open {
    Object { expect: InObject, key: String },
    Array { expect: InArray },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InObject {
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,`: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After `:`: a value.
    Value,
    /// After a value: `,` or `}`.
    CommaOrEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InArray {
    /// After `[`: a value or `]`.
    ValueOrEnd,
    /// After `,`: a value.
    Value,
    /// After a value: `,` or `]`.
    CommaOrEnd,
}

/// The token being read.
#[derive(Debug, Default)]
enum Token {
    #[default]
    None,
    /// A string (a key when `key`), with the state of an escape in it.
    Str {
        text: String,
        key: bool,
        escape: Escape,
    },
    /// A number, until a character that cannot be part of one.
    Number(String),
    /// `true`, `false` or `null`, until a character that cannot be part of one.
    Word(String),
}

#[derive(Debug, Default, Clone, Copy)]
enum Escape {
    #[default]
    No,
    /// After `\`.
    Backslash,
    /// After `\u` and `digits` of its four hex digits, `code` so far; `high` is a high
    /// surrogate read just before, waiting for its low half.
    Unicode {
        digits: u8,
        code: u32,
        high: Option<u32>,
    },
    /// After a high surrogate's `\uXXXX`: its low half's `\u` must follow.
    Pending { high: u32, seen: u8 },
}

impl PartialJson {
    /// A parser that has read nothing.
    pub fn new() -> Self {
        PartialJson::default()
    }

    /// Reads the next piece of the text.
    pub fn push(&mut self, piece: &str) {
        for c in piece.chars() {
            if self.complete || self.error.is_some() {
                return;
            }
            if let Err(why) = self.read(c) {
                self.error = Some(why);
            }
        }
    }

    /// The value so far: complete scalars, open containers with their complete members.
    pub fn value(&self) -> Option<&Value> {
        self.root.as_deref()
    }

    /// The value so far, shared: cheap to take, and the parser copies the tree on its next
    /// change only if this snapshot is still held then.
    pub fn snapshot(&self) -> Option<Arc<Value>> {
        self.root.clone()
    }

    /// Whether the value has closed: nothing more will be added.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Why the text stopped being JSON, if it did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Whether a value was added since the last call (or since the start).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn read(&mut self, c: char) -> Result<(), String> {
        match &mut self.token {
            Token::Str { text, key, escape } => {
                return match read_in_string(text, escape, c)? {
                    false => Ok(()),
                    true => {
                        let (text, key) = (std::mem::take(text), *key);
                        self.token = Token::None;
                        if key {
                            self.got_key(text)
                        } else {
                            self.add(Value::String(text))
                        }
                    }
                };
            }
            Token::Number(text) => {
                if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
                    text.push(c);
                    return Ok(());
                }
                self.end_scalar()?;
            }
            Token::Word(text) => {
                if c.is_ascii_alphabetic() {
                    text.push(c);
                    return if text.len() > 5 {
                        Err(format!("`{text}` is not a JSON value"))
                    } else {
                        Ok(())
                    };
                }
                self.end_scalar()?;
            }
            Token::None => {}
        }
        self.read_structure(c)
    }

    /// A character outside any token.
    fn read_structure(&mut self, c: char) -> Result<(), String> {
        if c.is_whitespace() {
            return Ok(());
        }
        if self.root.is_none() {
            // Before the value: prose or a fence, until it opens.
            return match c {
                '{' | '[' => self.open_container(c),
                _ => Ok(()),
            };
        }
        match self.open.last().map(expects) {
            None => Err(format!("`{c}` after the value")),
            Some(Expect::Key) => match c {
                '"' => {
                    self.token = Token::Str {
                        text: String::new(),
                        key: true,
                        escape: Escape::No,
                    };
                    Ok(())
                }
                '}' if self.allows_end() => self.close(),
                _ => Err(format!("`{c}` where a key was expected")),
            },
            Some(Expect::Colon) => match c {
                ':' => self.set_object(InObject::Value),
                _ => Err(format!("`{c}` where `:` was expected")),
            },
            Some(Expect::Value) => match c {
                ']' if self.allows_end() => self.close(),
                _ => self.begin_value(c),
            },
            Some(Expect::CommaOrEnd) => match (c, self.open.last()) {
                (',', Some(Open::Object { .. })) => self.set_object(InObject::Key),
                (',', Some(Open::Array { .. })) => self.set_array(InArray::Value),
                ('}', Some(Open::Object { .. })) | (']', Some(Open::Array { .. })) => self.close(),
                _ => Err(format!("`{c}` where `,` or the end was expected")),
            },
        }
    }

    fn begin_value(&mut self, c: char) -> Result<(), String> {
        match c {
            '{' | '[' => self.open_container(c),
            '"' => {
                self.token = Token::Str {
                    text: String::new(),
                    key: false,
                    escape: Escape::No,
                };
                Ok(())
            }
            '-' | '0'..='9' => {
                self.token = Token::Number(c.to_string());
                Ok(())
            }
            't' | 'f' | 'n' => {
                self.token = Token::Word(c.to_string());
                Ok(())
            }
            _ => Err(format!("`{c}` where a value was expected")),
        }
    }

    /// Whether the open container may close here (`{}`, `[]`, not after a `,`).
    fn allows_end(&self) -> bool {
        matches!(
            self.open.last(),
            Some(Open::Object {
                expect: InObject::KeyOrEnd,
                ..
            }) | Some(Open::Array {
                expect: InArray::ValueOrEnd
            })
        )
    }

    fn open_container(&mut self, c: char) -> Result<(), String> {
        if self.open.len() >= MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH}"));
        }
        let (empty, open) = if c == '{' {
            let open = Open::Object {
                expect: InObject::KeyOrEnd,
                key: String::new(),
            };
            (Value::Object(Map::new()), open)
        } else {
            let open = Open::Array {
                expect: InArray::ValueOrEnd,
            };
            (Value::Array(Vec::new()), open)
        };
        self.add(empty)?;
        self.open.push(open);
        Ok(())
    }

    fn close(&mut self) -> Result<(), String> {
        self.open.pop();
        self.after_value();
        Ok(())
    }

    fn end_scalar(&mut self) -> Result<(), String> {
        let value = match std::mem::take(&mut self.token) {
            Token::Number(text) => text
                .parse::<Number>()
                .map(Value::Number)
                .map_err(|_| format!("`{text}` is not a JSON number"))?,
            Token::Word(text) => match text.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                _ => return Err(format!("`{text}` is not a JSON value")),
            },
            _ => return Ok(()),
        };
        self.add(value)
    }

    fn got_key(&mut self, key: String) -> Result<(), String> {
        if let Some(Open::Object { key: slot, .. }) = self.open.last_mut() {
            *slot = key;
        }
        self.set_object(InObject::Colon)
    }

    /// Puts a completed value (or an opened container) where the open containers say.
    fn add(&mut self, value: Value) -> Result<(), String> {
        let is_container = value.is_object() || value.is_array();
        match self.open.last() {
            None if self.root.is_none() => {
                self.root = Some(Arc::new(value));
                if !is_container {
                    self.complete = true;
                }
            }
            None => return Err("a second value after the first".into()),
            Some(open) => {
                let key = match open {
                    Open::Object { key, .. } => Some(key.clone()),
                    Open::Array { .. } => None,
                };
                match (self.innermost(), key) {
                    // A repeated key keeps the last value, as serde_json does.
                    (Value::Object(map), Some(key)) => {
                        map.insert(key, value);
                    }
                    (Value::Array(items), None) => items.push(value),
                    _ => unreachable!("the tree and the open containers agree"),
                }
            }
        }
        self.changed = true;
        if !is_container {
            self.after_value();
        }
        Ok(())
    }

    /// The innermost open container's value in the tree.
    fn innermost(&mut self) -> &mut Value {
        let root = self
            .root
            .as_mut()
            .expect("containers are open inside the root");
        let mut at = Arc::make_mut(root);
        // Each open container but the innermost is the last member added to the one outside it.
        for open in &self.open[..self.open.len() - 1] {
            at = match (at, open) {
                (Value::Object(map), Open::Object { key, .. }) => {
                    map.get_mut(key).expect("an open member is in its object")
                }
                (Value::Array(items), Open::Array { .. }) => {
                    items.last_mut().expect("an open item is in its array")
                }
                _ => unreachable!("the tree and the open containers agree"),
            };
        }
        at
    }

    /// After a member or item completed: its container expects `,` or its end; or the root is
    /// done.
    fn after_value(&mut self) {
        match self.open.last_mut() {
            None => self.complete = true,
            Some(Open::Object { expect, .. }) => *expect = InObject::CommaOrEnd,
            Some(Open::Array { expect }) => *expect = InArray::CommaOrEnd,
        }
    }

    fn set_object(&mut self, next: InObject) -> Result<(), String> {
        if let Some(Open::Object { expect, .. }) = self.open.last_mut() {
            *expect = next;
        }
        Ok(())
    }

    fn set_array(&mut self, next: InArray) -> Result<(), String> {
        if let Some(Open::Array { expect }) = self.open.last_mut() {
            *expect = next;
        }
        Ok(())
    }
}

/// What an open container expects next, in the terms [`PartialJson::read_structure`] acts on.
enum Expect {
    Key,
    Colon,
    Value,
    CommaOrEnd,
}

fn expects(open: &Open) -> Expect {
    match open {
        Open::Object { expect, .. } => match expect {
            InObject::KeyOrEnd | InObject::Key => Expect::Key,
            InObject::Colon => Expect::Colon,
            InObject::Value => Expect::Value,
            InObject::CommaOrEnd => Expect::CommaOrEnd,
        },
        Open::Array { expect } => match expect {
            InArray::ValueOrEnd | InArray::Value => Expect::Value,
            InArray::CommaOrEnd => Expect::CommaOrEnd,
        },
    }
}

/// Reads `c` inside a string; `true` when it closed the string.
fn read_in_string(text: &mut String, escape: &mut Escape, c: char) -> Result<bool, String> {
    match *escape {
        Escape::No => match c {
            '"' => return Ok(true),
            '\\' => *escape = Escape::Backslash,
            c if (c as u32) < 0x20 => {
                return Err("a control character inside a string".into());
            }
            c => text.push(c),
        },
        Escape::Backslash => {
            *escape = Escape::No;
            match c {
                '"' => text.push('"'),
                '\\' => text.push('\\'),
                '/' => text.push('/'),
                'b' => text.push('\u{8}'),
                'f' => text.push('\u{c}'),
                'n' => text.push('\n'),
                'r' => text.push('\r'),
                't' => text.push('\t'),
                'u' => {
                    *escape = Escape::Unicode {
                        digits: 0,
                        code: 0,
                        high: None,
                    }
                }
                _ => return Err(format!("`\\{c}` is not a JSON escape")),
            }
        }
        Escape::Pending { high, seen } => match (seen, c) {
            (0, '\\') => *escape = Escape::Pending { high, seen: 1 },
            (1, 'u') => {
                *escape = Escape::Unicode {
                    digits: 0,
                    code: 0,
                    high: Some(high),
                }
            }
            _ => return Err("a high surrogate without its low half".into()),
        },
        Escape::Unicode { digits, code, high } => {
            let digit = c
                .to_digit(16)
                .ok_or_else(|| format!("`{c}` in a \\u escape"))?;
            let code = code * 16 + digit;
            if digits < 3 {
                *escape = Escape::Unicode {
                    digits: digits + 1,
                    code,
                    high,
                };
                return Ok(false);
            }
            *escape = Escape::No;
            match (high, code) {
                (None, 0xD800..=0xDBFF) => {
                    *escape = Escape::Pending {
                        high: code,
                        seen: 0,
                    }
                }
                (None, 0xDC00..=0xDFFF) => return Err("a low surrogate alone".into()),
                (None, code) => text.push(char::from_u32(code).expect("not a surrogate")),
                (Some(high), 0xDC00..=0xDFFF) => {
                    let joined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                    text.push(char::from_u32(joined).expect("a joined surrogate pair"));
                }
                (Some(_), _) => return Err("a high surrogate without its low half".into()),
            }
        }
    }
    Ok(false)
}
