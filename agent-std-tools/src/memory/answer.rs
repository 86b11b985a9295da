//! `recall`'s answers over many memories, within its output limit: the list of keys, and a search.
//!
//! The store is read one memory at a time (redb's iterator holds one page at a time), and only
//! what the answer shows is kept: once it is full, a listing stops, taking the number of keys from
//! the table, and a search goes on only to count the memories that match, keeping none of them.
//! Memory is the limit, plus one memory (its key and value, and a lower-case copy for the
//! comparison), whatever the size of the store.

use agent_core::SkillError;
use redb::{ReadOnlyTable, ReadableTable, ReadableTableMetadata};

use super::NOTHING_YET;
use super::store::store_error;
use crate::blocking::Stop;

/// The store's table, as `recall` reads it.
pub(super) type Table = ReadOnlyTable<&'static str, &'static str>;

/// The keys in order, as many as fit in `max_chars`, with a notice of how many there are in all.
pub(super) fn list_keys(
    table: &Table,
    max_chars: usize,
    stop: &Stop,
) -> Result<String, SkillError> {
    let total = table.len().map_err(store_error)?;
    let mut answer = Answer::new(max_chars);
    for entry in table.iter().map_err(store_error)? {
        if stop.is_set() {
            return Err(SkillError::Cancelled);
        }
        let (key, _) = entry.map_err(store_error)?;
        if !answer.push(key.value()) {
            break;
        }
    }
    if answer.shown == 0 {
        return Ok(NOTHING_YET.to_owned());
    }
    let shown = answer.shown;
    let mut text = answer.text;
    if (shown as u64) < total {
        text.push_str(&format!(
            "\n\n[showing {shown} of {total} keys; recall with a `query` to find the others]"
        ));
    }
    Ok(text)
}

/// The memories whose key or value contains `query` (ignoring case), as `key: value` lines, as
/// many as fit in `max_chars`, with a notice of how many matched in all when that is more.
pub(super) fn search(
    table: &Table,
    query: &str,
    max_chars: usize,
    stop: &Stop,
) -> Result<String, SkillError> {
    let needle = query.to_lowercase();
    let mut answer = Answer::new(max_chars);
    let mut matched: u64 = 0;
    for entry in table.iter().map_err(store_error)? {
        if stop.is_set() {
            return Err(SkillError::Cancelled);
        }
        let (key, value) = entry.map_err(store_error)?;
        let (key, value) = (key.value(), value.value());
        if !(key.to_lowercase().contains(&needle) || value.to_lowercase().contains(&needle)) {
            continue;
        }
        matched += 1;
        if !answer.full {
            answer.push(&format!("{key}: {value}"));
            if answer.cut && answer.cut_key.is_none() {
                answer.cut_key = Some(key.to_owned());
            }
        }
    }
    let query = quoted(query);
    if matched == 0 {
        return Ok(format!("No memory contains {query}."));
    }
    let shown = answer.shown;
    let mut text = answer.text;
    if (shown as u64) < matched {
        let cut = if answer.cut {
            format!(", the first cut at {max_chars} characters")
        } else {
            String::new()
        };
        text.push_str(&format!(
            "\n\n[showing {shown} of the {matched} memories that contain {query}{cut}; narrow \
             the query, or recall one by its `key`]"
        ));
    } else if let Some(key) = answer.cut_key {
        text.push_str(&format!(
            "\n\n[the memory under `{key}` is cut at {max_chars} characters; recall it by its \
             `key` to see it whole]"
        ));
    }
    Ok(text)
}

/// The query as a notice shows it: in backquotes, cut after 100 characters.
fn quoted(query: &str) -> String {
    match query.char_indices().nth(100) {
        Some((at, _)) => format!("`{}…`", &query[..at]),
        None => format!("`{query}`"),
    }
}

/// Lines of an answer, up to a number of characters.
struct Answer {
    text: String,
    /// Characters in `text`.
    chars: usize,
    max_chars: usize,
    /// Lines in `text`.
    shown: usize,
    /// Whether a line did not fit: no more are added.
    full: bool,
    /// Whether the one line shown was cut to fit.
    cut: bool,
    /// The key of the memory cut (searches only).
    cut_key: Option<String>,
}

impl Answer {
    fn new(max_chars: usize) -> Answer {
        Answer {
            text: String::new(),
            chars: 0,
            max_chars: max_chars.max(1),
            shown: 0,
            full: false,
            cut: false,
            cut_key: None,
        }
    }

    /// Adds `line` if it fits (a first line that does not is shown cut to fit). Returns whether
    /// the answer can take more.
    fn push(&mut self, line: &str) -> bool {
        if self.full {
            return false;
        }
        let separator = usize::from(self.shown > 0);
        let len = line.chars().count();
        if self.chars + separator + len <= self.max_chars {
            if separator == 1 {
                self.text.push('\n');
            }
            self.text.push_str(line);
            self.chars += separator + len;
            self.shown += 1;
            return true;
        }
        self.full = true;
        if self.shown == 0 {
            self.text.extend(line.chars().take(self.max_chars));
            self.chars = self.max_chars;
            self.shown = 1;
            self.cut = true;
        }
        false
    }
}
