//! What things are called: the rule for skill names, raw identifiers, the generated items' names
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

/// `search_files` → `SearchFilesSkill`: the unit struct a skill function becomes, unless
/// `struct_name` names it. The suffix keeps it clear of the names users give their own types: a
/// skill `forecast` returning a `Forecast`, a skill `query` taking a `Query`.
pub fn struct_name(function: &str) -> String {
    format!("{}Skill", upper_camel(function))
}

/// `search_files` → `__skill_search_files`: the private module the unit struct is defined in and
/// glob-imported from, so an item of the user's with the struct's name shadows the import instead
/// of clashing with it. Function names are unique in a module, so these are too.
pub fn hidden_module(function: &str) -> String {
    format!("__skill_{function}")
}

/// `base`, or `base` behind as many `_` as it takes to be none of `taken`: a name for an item the
/// expansion puts beside the user's tokens (in the `const _` block), where it would shadow a name
/// of the user's that it equals.
pub fn fresh(base: &str, taken: &std::collections::HashSet<String>) -> String {
    let mut name = base.to_owned();
    while taken.contains(&name) {
        name.insert(0, '_');
    }
    name
}

/// `search_files` → `SearchFiles`: the function's name in UpperCamelCase, separators dropped.
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

    use std::collections::HashSet;

    use super::{closest, fresh, hidden_module, struct_name, unraw, upper_camel};

    /// UpperCamelCase drops the separators and capitalises each part.
    #[test]
    fn upper_camel_case_drops_separators() {
        assert_eq!(upper_camel("search_files"), "SearchFiles");
        assert_eq!(upper_camel("read"), "Read");
        assert_eq!(upper_camel("__private_thing_2"), "PrivateThing2");
    }

    /// Struct names are the function's name in UpperCamelCase with a `Skill` suffix, so they are
    /// not the names of the types a skill takes or returns.
    #[test]
    fn struct_names_carry_a_skill_suffix() {
        assert_eq!(struct_name("search_files"), "SearchFilesSkill");
        assert_eq!(struct_name("forecast"), "ForecastSkill");
        assert_eq!(struct_name("__"), "Skill");
        assert_eq!(hidden_module("getUser"), "__skill_getUser");
    }

    /// A generated name steps aside from every name the user wrote.
    #[test]
    fn fresh_names_avoid_taken_ones() {
        let taken: HashSet<String> = ["ForecastSkillInput", "_ForecastSkillInput"]
            .map(String::from)
            .into();
        assert_eq!(fresh("ForecastSkillInput", &taken), "__ForecastSkillInput");
        assert_eq!(fresh("__construct", &taken), "__construct");
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
