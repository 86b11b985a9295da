//! [`parse`]: one `SKILL.md`'s text checked against every rule, into a [`Manifest`].

use crate::front::{self, Lines};
use crate::limits;
use crate::rule::{Rule, Violation, quote};
use crate::yaml::{self, Fields, Shape, Top};
use crate::{MAX_SKILL_FILE_BYTES, Manifest};
use std::collections::HashMap;

/// The longest `name`, in characters.
const NAME_MAX: usize = 64;
/// The longest `description`, in characters.
const DESCRIPTION_MAX: usize = 1024;
/// The longest `compatibility`, in characters.
const COMPATIBILITY_MAX: usize = 500;

/// Parses and checks one SKILL.md's text; `folder_name` is the name of the folder holding it.
/// Returns every violation found (not only the first), sorted by line.
///
/// A text longer than [`MAX_SKILL_FILE_BYTES`] is refused as [`Rule::FileUnreadable`], as
/// [`find`](crate::find) refuses such a file, so that a skill checked at compile time and at run
/// time gets the same answer.
///
/// ```
/// let text = "---\nname: pdf-tools\ndescription: Fill in PDF forms.\n---\n# PDF tools\n";
/// let manifest = agent_skills_spec::parse(text, "pdf-tools").unwrap();
/// assert_eq!(manifest.name, "pdf-tools");
/// assert_eq!(manifest.body(text), "# PDF tools\n");
///
/// let violations = agent_skills_spec::parse(text, "pdf").unwrap_err();
/// assert_eq!(violations[0].rule, agent_skills_spec::Rule::NameMatchesFolder);
/// assert_eq!(violations[0].line, 2);
/// ```
pub fn parse(text: &str, folder_name: &str) -> Result<Manifest, Vec<Violation>> {
    if text.len() as u64 > MAX_SKILL_FILE_BYTES {
        return Err(vec![too_large(text.len() as u64)]);
    }
    let split = front::split(text).map_err(|v| vec![v])?;
    limits::check(split.yaml).map_err(|v| vec![v])?;
    let fields = match yaml::read(split.yaml) {
        Ok(Top::Mapping(fields)) => fields,
        Ok(Top::Other(shape)) => {
            return Err(vec![Violation::new(
                2,
                Rule::Yaml,
                format!(
                    "the front matter must be a YAML mapping of `key: value` lines, but it is {}",
                    shape.describe()
                ),
            )]);
        }
        Err(error) => return Err(vec![yaml_error(&error)]),
    };
    Check::new(split.yaml, folder_name).run(fields, split.body_offset)
}

/// The violation for a file of `len` bytes, more than [`MAX_SKILL_FILE_BYTES`].
pub(crate) fn too_large(len: u64) -> Violation {
    Violation::new(
        1,
        Rule::FileUnreadable,
        format!("SKILL.md is {len} bytes, more than the {MAX_SKILL_FILE_BYTES} allowed"),
    )
}

/// A parser error as a violation, its location moved from the front matter's numbering (line 1
/// is the line after the opening `---`) to the file's.
fn yaml_error(error: &serde_yaml_ng::Error) -> Violation {
    let line = error.location().map_or(1, |l| l.line() + 1);
    let message = shift_lines(&error.to_string());
    Violation::new(
        line,
        Rule::Yaml,
        format!("the front matter is not valid YAML: {message}"),
    )
}

/// Adds one to every `line N` in a parser message (the parser counts from the front matter).
fn shift_lines(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("line ") {
        let (before, after) = rest.split_at(at + "line ".len());
        out.push_str(before);
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + 1).to_string()),
            Err(_) => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// The checks of one front matter: the violations found so far and where keys are.
struct Check<'t> {
    lines: Lines<'t>,
    folder_name: &'t str,
    violations: Vec<Violation>,
}

impl<'t> Check<'t> {
    fn new(yaml: &'t str, folder_name: &'t str) -> Self {
        Check {
            lines: Lines::new(yaml),
            folder_name,
            violations: Vec::new(),
        }
    }

    fn report(&mut self, line: usize, rule: Rule, message: String) {
        self.violations.push(Violation::new(line, rule, message));
    }

    /// The line of a top-level key (its first occurrence), or line 1 if it cannot be found.
    fn line_of(&self, key: &str) -> usize {
        self.lines.key(key, 0).unwrap_or(1)
    }

    fn run(mut self, fields: Fields, body_offset: usize) -> Result<Manifest, Vec<Violation>> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (key, _) in &fields.entries {
            let count = seen.entry(key).or_insert(0);
            if *count > 0 {
                let line = self.lines.key(key, *count).unwrap_or(1);
                let first = self.line_of(key);
                self.report(
                    line,
                    Rule::Yaml,
                    format!("the key `{key}` is given again (first on line {first}); YAML keys must be unique"),
                );
            }
            *count += 1;
        }
        let get = |name: &str| {
            fields
                .entries
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, shape)| shape.as_ref())
        };

        let name = self.string("name", get("name"));
        let description = self.string("description", get("description"));
        let license = self.string("license", get("license"));
        let compatibility = self.string("compatibility", get("compatibility"));
        let allowed_tools = self.string("allowed-tools", get("allowed-tools"));
        let metadata = self.metadata(get("metadata"));

        match (&name, get("name")) {
            (Some(name), _) if !name.is_empty() => self.name(name),
            (_, None) => self.report(
                1,
                Rule::NameRequired,
                "the front matter has no `name`: the skill's name, equal to its folder's".into(),
            ),
            (_, Some(Shape::Null | Shape::Str(_))) => {
                let line = self.line_of("name");
                self.report(
                    line,
                    Rule::NameRequired,
                    "`name` is empty: it must be the skill's name, equal to its folder's".into(),
                );
            }
            _ => {} // not a string: reported as a field type
        }
        match (&description, get("description")) {
            (Some(d), _) if !d.trim().is_empty() => {
                let chars = d.chars().count();
                if chars > DESCRIPTION_MAX {
                    let line = self.line_of("description");
                    self.report(line, Rule::DescriptionLength, format!("description is {chars} characters, more than the {DESCRIPTION_MAX} allowed"));
                }
            }
            (_, None) => self.report(
                1,
                Rule::DescriptionRequired,
                "the front matter has no `description`: what the skill does and when to use it"
                    .into(),
            ),
            (_, Some(Shape::Null | Shape::Str(_))) => {
                let line = self.line_of("description");
                self.report(
                    line,
                    Rule::DescriptionRequired,
                    "`description` is blank: it must say what the skill does and when to use it"
                        .into(),
                );
            }
            _ => {}
        }
        if let Some(c) = &compatibility {
            let chars = c.chars().count();
            if chars == 0 || chars > COMPATIBILITY_MAX {
                let line = self.line_of("compatibility");
                let found = if chars == 0 {
                    "empty".to_string()
                } else {
                    format!("{chars} characters")
                };
                self.report(line, Rule::CompatibilityLength, format!("compatibility is {found}; it must be 1 to {COMPATIBILITY_MAX} characters (leave it out if there is nothing to say)"));
            }
        }

        if !self.violations.is_empty() {
            self.violations.sort_by_key(|v| v.line);
            return Err(self.violations);
        }
        Ok(Manifest {
            name: name.unwrap_or_default(),
            description: description.unwrap_or_default(),
            license,
            compatibility,
            allowed_tools: allowed_tools
                .map(|t| t.split_whitespace().map(str::to_owned).collect())
                .unwrap_or_default(),
            metadata,
            body_offset,
        })
    }

    /// The string value of a field; `None` if it is absent or null, or (reported) of another type.
    fn string(&mut self, key: &str, shape: Option<&Shape>) -> Option<String> {
        match shape? {
            Shape::Null => None,
            Shape::Str(s) => Some(s.clone()),
            other => {
                let line = self.line_of(key);
                let hint = match other {
                    Shape::Number(_) | Shape::Bool(_) => " (put it in quotes)",
                    Shape::Seq if key == "allowed-tools" => {
                        " (write the tools on one line, separated by spaces)"
                    }
                    _ => "",
                };
                self.report(
                    line,
                    Rule::FieldType,
                    format!(
                        "`{key}` must be a string, but it is {}{hint}",
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    fn name(&mut self, name: &str) {
        let line = self.line_of("name");
        let shown = quote(name, 80);
        let chars = name.chars().count();
        if chars > NAME_MAX {
            self.report(
                line,
                Rule::NameLength,
                format!("name {shown} is {chars} characters, more than the {NAME_MAX} allowed"),
            );
        }
        let mut bad: Vec<char> = Vec::new();
        for c in name.chars() {
            let allowed = c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
            if !allowed && !bad.contains(&c) {
                bad.push(c);
            }
        }
        if !bad.is_empty() {
            let list: Vec<String> = bad.iter().take(10).map(|c| format!("{c:?}")).collect();
            self.report(line, Rule::NameCharacters, format!("name {shown} may only have lowercase ASCII letters, digits and hyphens, not {}", list.join(", ")));
        }
        if name.starts_with('-') || name.ends_with('-') {
            self.report(
                line,
                Rule::NameHyphenEdge,
                format!("name {shown} must not start or end with a hyphen"),
            );
        }
        if name.contains("--") {
            self.report(
                line,
                Rule::NameDoubleHyphen,
                format!("name {shown} must not have two hyphens in a row (`--`)"),
            );
        }
        if name != self.folder_name {
            let folder = quote(self.folder_name, 80);
            self.report(
                line,
                Rule::NameMatchesFolder,
                format!(
                    "name {shown} must equal the name of the folder that holds SKILL.md, {folder}"
                ),
            );
        }
    }

    /// `metadata`'s entries in file order; every non-string key or value is reported.
    fn metadata(&mut self, shape: Option<&Shape>) -> Vec<(String, String)> {
        let entries = match shape {
            None | Some(Shape::Null) => return Vec::new(),
            Some(Shape::Map(entries)) => entries,
            Some(other) => {
                let line = self.line_of("metadata");
                self.report(line, Rule::FieldType, format!("`metadata` must be a mapping of string keys to string values, but it is {}", other.describe()));
                return Vec::new();
            }
        };
        let parent = self.line_of("metadata");
        let block = self.lines.block(parent);
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut out: Vec<(String, String)> = Vec::new();
        for (key, value) in entries {
            let Shape::Str(key) = key else {
                let hint = match key {
                    Shape::Number(_) | Shape::Bool(_) | Shape::Null => " (put it in quotes)",
                    _ => "",
                };
                self.report(
                    parent,
                    Rule::MetadataStrings,
                    format!(
                        "metadata keys must be strings, but one is {}{hint}",
                        key.describe()
                    ),
                );
                continue;
            };
            let count = seen.entry(key).or_insert(0);
            let nested = block
                .get(key.as_str())
                .and_then(|lines| lines.get(*count))
                .copied();
            *count += 1;
            let line = nested.map_or(parent, |(line, _)| line);
            if *count > 1 {
                self.report(
                    line,
                    Rule::Yaml,
                    format!("the metadata key `{key}` is given twice; YAML keys must be unique"),
                );
            }
            match value {
                Shape::Str(value) => out.push((key.clone(), value.clone())),
                Shape::Number(_) | Shape::Bool(_) | Shape::Null => {
                    let raw = nested
                        .map(|(_, raw)| raw.split(" #").next().unwrap_or("").trim())
                        .filter(|r| !r.is_empty() && !r.starts_with('#'));
                    let shown = match (value, raw) {
                        (Shape::Number(_), Some(raw)) => format!("the number {raw}"),
                        (Shape::Bool(_), Some(raw)) => format!("the boolean {raw}"),
                        _ => value.describe(),
                    };
                    let written = raw.unwrap_or("...");
                    self.report(line, Rule::MetadataStrings, format!("metadata `{key}` must be a string, but it is {shown}; quote it: `{key}: \"{written}\"`"));
                }
                other => {
                    self.report(
                        line,
                        Rule::MetadataStrings,
                        format!(
                            "metadata `{key}` must be a string, but it is {}",
                            other.describe()
                        ),
                    );
                }
            }
        }
        out
    }
}
