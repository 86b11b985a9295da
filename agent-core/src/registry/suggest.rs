//! "Did you mean": the close names an unknown skill name gets, in time and text bounded whatever
//! the name's length.

use crate::error::SkillError;

/// Names longer than this many bytes are not compared with the skills' names: no skill name is
/// longer than 64 bytes, so such a name is no typo of one, and comparing it would cost time in
/// proportion to its length on the async thread.
const MAX_COMPARED_BYTES: usize = 256;

/// How many characters of an unknown name its error quotes: twice the longest valid name.
const MAX_QUOTED_CHARS: usize = 128;

/// The error a call of an unknown `name` gets: the names and aliases among `known` close to it, or
/// when none is, every name among `visible` (the skills the model is shown).
pub(super) fn unknown_skill<'a>(
    name: &str,
    known: impl Iterator<Item = &'a str>,
    visible: impl Iterator<Item = &'a str>,
) -> SkillError {
    let suggestions = close_names(name, known);
    let close = !suggestions.is_empty();
    let suggestions = if close {
        suggestions
    } else {
        visible.map(str::to_owned).collect()
    };
    SkillError::UnknownSkill {
        name: quoted(name),
        suggestions,
        close,
    }
}

/// The names among `candidates` close to `name`, best first, at most three; none when `name` is
/// longer than [`MAX_COMPARED_BYTES`].
fn close_names<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    if name.len() > MAX_COMPARED_BYTES {
        return Vec::new();
    }
    let mut close: Vec<(f64, &str)> = candidates
        .map(|candidate| (similarity(name, candidate), candidate))
        .filter(|(score, _)| *score >= 0.7)
        .collect();
    close.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    close
        .into_iter()
        .take(3)
        .map(|(_, n)| n.to_owned())
        .collect()
}

/// `name` as an error quotes it: whole when it has at most [`MAX_QUOTED_CHARS`] characters, else
/// its start, an ellipsis and its length in bytes.
fn quoted(name: &str) -> String {
    match name.char_indices().nth(MAX_QUOTED_CHARS) {
        None => name.to_owned(),
        Some((cut, _)) => format!("{}… ({} bytes)", &name[..cut], name.len()),
    }
}

/// How alike two skill names are, from 0 to 1, ignoring case; a name that contains the other
/// (`read` in `read_file`) counts as close.
fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    if a.len() >= 3 && b.len() >= 3 && (a.contains(&b) || b.contains(&a)) {
        return 0.9;
    }
    strsim::jaro_winkler(&a, &b).max(strsim::normalized_damerau_levenshtein(&a, &b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_not_compared_and_are_quoted_short() {
        let names = ["read_file", "write_file"];
        assert_eq!(close_names("read_fil", names.into_iter()), ["read_file"]);
        let long = format!("read_file{}", "x".repeat(MAX_COMPARED_BYTES));
        assert!(close_names(&long, names.into_iter()).is_empty());
        assert_eq!(quoted("abc"), "abc");
        assert_eq!(quoted(&"y".repeat(128)), "y".repeat(128));
        assert_eq!(
            quoted(&"y".repeat(129)),
            format!("{}… (129 bytes)", "y".repeat(128))
        );
    }
}
