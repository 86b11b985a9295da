//! A scan of YAML text, before a parser builds anything from it, that refuses what would cost
//! the parser far more than the text's size: nesting deeper than [`MAX_DEPTH`] (the parser
//! reaches its recursion limit only after work that grows with depth × size), and aliases that
//! could expand the text past [`MAX_EXPANDED_BYTES`] (each alias copies the node its anchor
//! names: 100,000 aliases of a 1,000-item list in a 302 KB file took 7.2 GB).
//!
//! The scan is linear and over-counts, never under: a node an alias names is taken to be as
//! large as the whole text, flow brackets are counted outside quoted scalars and comments,
//! and block nesting is the stack of indentations of the lines that hold structure (block
//! scalars' content lines are skipped), plus the `- ` and `? ` indicators a line opens with.
//! Real cassettes and datasets are far inside both bounds. Every YAML file eugene reads that
//! someone else may have written goes through it: cassettes and eval datasets (SKILL.md front
//! matter has a scan of its own, with the same bounds on aliases and flow nesting).

/// The deepest nesting accepted: serde_yaml_ng's own recursion limit.
pub const MAX_DEPTH: usize = 128;

/// The most bytes the aliases of a text may expand it to (aliases × the text's size).
pub const MAX_EXPANDED_BYTES: u64 = 64 * 1024 * 1024;

/// What the scan refused: the line (from 1) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlTooCostly {
    /// The line where the bound was passed.
    pub line: usize,
    /// What was passed, in words.
    pub message: String,
}

impl std::fmt::Display for YamlTooCostly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for YamlTooCostly {}

/// Scans `text`; `Err` names the first bound it passes.
pub fn check(text: &str) -> Result<(), YamlTooCostly> {
    let mut scan = Scan::default();
    let mut aliases: u64 = 0;
    let mut anchors = false;
    for (number, line) in text.split('\n').enumerate() {
        let number = number + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let found = scan.line(line).map_err(|message| YamlTooCostly {
            line: number,
            message,
        })?;
        aliases += found.aliases;
        anchors |= found.anchors;
        if anchors && aliases.saturating_mul(text.len() as u64) > MAX_EXPANDED_BYTES {
            return Err(YamlTooCostly {
                line: number,
                message: format!(
                    "{aliases} aliases of anchors in {} bytes could expand past {MAX_EXPANDED_BYTES} \
                     bytes; write the values out instead of aliasing them",
                    text.len()
                ),
            });
        }
    }
    Ok(())
}

/// The scan's state between lines.
#[derive(Default)]
struct Scan {
    /// The indentations of the open block nodes, outermost first.
    indents: Vec<usize>,
    /// Inside a block scalar: the indentation its content must exceed.
    block_scalar: Option<usize>,
    /// Inside a quoted scalar that goes on to the next line: its quote.
    quote: Option<u8>,
    /// Open `[` and `{`.
    flow: usize,
}

/// What a line holds of aliases and anchors.
#[derive(Default)]
struct Found {
    aliases: u64,
    anchors: bool,
}

impl Scan {
    fn line(&mut self, line: &str) -> Result<Found, String> {
        let bytes = line.as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        let blank = bytes[indent..].iter().all(|b| b.is_ascii_whitespace());
        if let Some(parent) = self.block_scalar {
            if blank || indent > parent {
                return Ok(Found::default());
            }
            self.block_scalar = None;
        }
        if blank {
            return Ok(Found::default());
        }
        let mut at = indent;
        if self.quote.is_none() && self.flow == 0 {
            // The line's block structure: close what it is not inside, open it and its indicators.
            while self.indents.last().is_some_and(|&open| open >= indent) {
                self.indents.pop();
            }
            self.indents.push(indent);
            while at + 1 < bytes.len() && matches!(bytes[at], b'-' | b'?') && bytes[at + 1] == b' '
            {
                self.indents.push(at + 1);
                at += 2;
                while at < bytes.len() && bytes[at] == b' ' {
                    at += 1;
                }
            }
            if at + 1 == bytes.len() && matches!(bytes[at], b'-' | b'?') {
                self.indents.push(at + 1);
            }
            if self.indents.len() > MAX_DEPTH {
                return Err(format!(
                    "the YAML nests more than {MAX_DEPTH} levels deep, more than it is read"
                ));
            }
        }
        let mut found = Found::default();
        let mut previous = b' ';
        let mut last_content = None;
        while at < bytes.len() {
            let b = bytes[at];
            match self.quote {
                Some(b'"') => match b {
                    b'\\' => at += 1,
                    b'"' => self.quote = None,
                    _ => {}
                },
                Some(_) => {
                    if b == b'\'' {
                        if bytes.get(at + 1) == Some(&b'\'') {
                            at += 1;
                        } else {
                            self.quote = None;
                        }
                    }
                }
                None => match b {
                    b'#' if previous == b' ' || previous == b'\t' => break,
                    b'"' | b'\'' if starts_scalar(previous) => self.quote = Some(b),
                    b'[' | b'{' => {
                        self.flow += 1;
                        if self.indents.len() + self.flow > MAX_DEPTH {
                            return Err(format!(
                                "the YAML nests `[` or `{{` more than {MAX_DEPTH} levels deep, \
                                 more than it is read"
                            ));
                        }
                    }
                    b']' | b'}' => self.flow = self.flow.saturating_sub(1),
                    b'*' if starts_scalar(previous) => found.aliases += 1,
                    b'&' if starts_scalar(previous) => found.anchors = true,
                    _ => {}
                },
            }
            if !b.is_ascii_whitespace() {
                last_content = Some(at);
            }
            previous = b;
            at += 1;
        }
        // A line that ends with a block scalar's indicator (`|`, `>`, with a chomping or an
        // indentation indicator) starts one: its content lines are text, not structure.
        if self.quote.is_none()
            && let Some(end) = last_content
        {
            let tail = line[..=end].trim_end();
            let indicator = tail
                .trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit())
                .ends_with(['|', '>']);
            if indicator {
                self.block_scalar = Some(indent);
            }
        }
        Ok(found)
    }
}

/// Whether a scalar, an alias or an anchor may start after `previous`.
fn starts_scalar(previous: u8) -> bool {
    matches!(
        previous,
        b' ' | b'\t' | b'[' | b'{' | b',' | b':' | b'-' | b'?'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_yaml_passes() {
        let text = "a: 1\nb:\n  - x\n  - [1, {c: \"d [ { e\"}]\n  - |\n      - - - - - text\n    [[[[\nf: &f {g: 1}\nh: *f\n";
        assert_eq!(check(text), Ok(()));
    }

    #[test]
    fn deep_block_and_flow_nesting_is_refused() {
        let dashes = format!("{}x\n", "- ".repeat(50_000));
        assert!(check(&dashes).unwrap_err().message.contains("levels deep"));
        let brackets = format!("a: {}{}\n", "[".repeat(50_000), "]".repeat(50_000));
        assert!(
            check(&brackets)
                .unwrap_err()
                .message
                .contains("levels deep")
        );
        let indented: String = (0..200)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        assert!(check(&indented).is_err());
        assert_eq!(check(&format!("{}x\n", "- ".repeat(100))), Ok(()));
    }

    #[test]
    fn a_wide_fan_of_aliases_is_refused() {
        let items = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
        let mut text = format!("anchor: &a {items}\nrefs:\n");
        for _ in 0..100_000 {
            text.push_str("  - *a\n");
        }
        assert!(check(&text).unwrap_err().message.contains("aliases"));
        // Aliases without anchors name nothing the parser expands (it refuses them itself).
        assert_eq!(check("a: *b\n"), Ok(()));
    }
}
