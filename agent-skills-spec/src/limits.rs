//! Two cheap scans of the front matter's text, before the YAML parser sees it, that keep the
//! parser's work near linear on hostile input.
//!
//! - **Flow nesting.** libyaml keeps one "simple key" per open `[` or `{` and looks at all of them
//!   for every token, so its work grows with size × depth: 60,000 nested `[` (within
//!   [`MAX_FRONT_MATTER_BYTES`](crate::MAX_FRONT_MATTER_BYTES)) take seconds. Front matter whose
//!   brackets could nest more than [`MAX_FLOW_DEPTH`] deep is refused. The scan counts every
//!   bracket, quoted or not, so it can only over-count: real front matter is nowhere near.
//! - **Aliases.** Each alias (`*name`) in a place whose value is read makes the parser walk the
//!   node it names, so many aliases of one large node cost size². Front matter with an anchor
//!   (`&name`) and more than [`MAX_ALIASES`] aliases is refused. The scan counts every `*` or `&`
//!   that starts a word (quoted or not), so it can only over-count.

use crate::rule::{Rule, Violation};

/// The deepest nesting of `[`/`{` the parser is given (serde_yaml_ng's own recursion limit).
pub(crate) const MAX_FLOW_DEPTH: usize = 128;

/// The most aliases the parser is given when there is an anchor for them to name.
pub(crate) const MAX_ALIASES: usize = 64;

/// Scans `yaml`, the front matter (whose first line is line 2 of the file).
pub(crate) fn check(yaml: &str) -> Result<(), Violation> {
    let bytes = yaml.as_bytes();
    let mut line = 2;
    let mut depth = 0usize;
    let mut anchors = 0usize;
    let mut aliases = 0usize;
    let mut too_many_aliases_at = None;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\n' => line += 1,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    return Err(Violation::new(
                        line,
                        Rule::Yaml,
                        format!(
                            "the front matter nests `[` or `{{` more than {MAX_FLOW_DEPTH} levels deep, more than this parser reads"
                        ),
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'*' | b'&' if starts_word(bytes, i) => {
                if b == b'&' {
                    anchors += 1;
                } else {
                    aliases += 1;
                    if aliases == MAX_ALIASES + 1 {
                        too_many_aliases_at = Some(line);
                    }
                }
            }
            _ => {}
        }
    }
    match too_many_aliases_at {
        Some(line) if anchors > 0 => Err(Violation::new(
            line,
            Rule::Yaml,
            format!(
                "the front matter has more than {MAX_ALIASES} aliases (`*name`), more than this parser reads"
            ),
        )),
        _ => Ok(()),
    }
}

/// Whether the `*` or `&` at `i` could start an alias or an anchor: at the start of a line or
/// after a space or a flow indicator, and followed by a character a name can start with.
fn starts_word(bytes: &[u8], i: usize) -> bool {
    let before = i.checked_sub(1).map(|j| bytes[j]);
    let after = bytes.get(i + 1).copied();
    matches!(
        before,
        None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b',' | b':')
    ) && !matches!(
        after,
        None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'[' | b']' | b'{' | b'}' | b'*' | b'&')
    )
}
