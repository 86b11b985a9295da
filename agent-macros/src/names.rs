//! What things are called: the rule for skill names, raw identifiers, the generated struct's name
//! and "did you mean" suggestions.
//!
//! Plain string functions on purpose (no syn, no `crate::` paths): `tests/names_agree.rs` in the
//! `eugene` package compiles this very file to pin [`is_valid_name`] to `agent-core`'s twin, which
//! this crate cannot call.

/// What model APIs accept as a tool name: `^[a-zA-Z0-9_-]{1,64}$`. The same rule as
/// `agent_core::registry::is_valid_name`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// An identifier as written, without its `r#` prefix: `r#type` → `type`.
pub fn unraw(ident: &impl ToString) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// `search_files` → `SearchFiles`: the unit struct a skill function becomes.
pub fn upper_camel(snake: &str) -> String {
    snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a typo.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The Levenshtein distance between `a` and `b`, counted in chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    //! The name helpers on the cases the macro meets.

    use super::{closest, unraw, upper_camel};

    /// Struct names are the function's name in UpperCamelCase, separators dropped.
    #[test]
    fn struct_names_are_upper_camel_case() {
        assert_eq!(upper_camel("search_files"), "SearchFiles");
        assert_eq!(upper_camel("read"), "Read");
        assert_eq!(upper_camel("__private_thing_2"), "PrivateThing2");
    }

    /// `r#` is dropped; other identifiers are unchanged.
    #[test]
    fn raw_identifiers_lose_their_prefix() {
        assert_eq!(unraw(&"r#type"), "type");
        assert_eq!(unraw(&"query"), "query");
    }

    /// A typo gets a suggestion; an unrelated word does not.
    #[test]
    fn close_words_are_suggested() {
        let keys = ["name", "read_only", "timeout"];
        assert_eq!(closest("nmae", &keys), Some("name"));
        assert_eq!(closest("readonly", &keys), Some("read_only"));
        assert_eq!(closest("colour", &keys), None);
    }
}
