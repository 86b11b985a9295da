//! The rules a `SKILL.md` is checked against, and a broken rule with the line it is about.

use std::fmt;

/// One rule of the Agent Skills format: what a [`Violation`] broke.
///
/// Each rule has a short kebab-case [`id`](Rule::id), shown in messages so that a reader can look
/// the rule up, and a [`summary`](Rule::summary) of what it asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The `SKILL.md` cannot be read, is larger than [`MAX_SKILL_FILE_BYTES`](crate::MAX_SKILL_FILE_BYTES),
    /// or is not UTF-8 text.
    FileUnreadable,
    /// The file does not start with a `---` line, has no closing `---` line, or its front matter
    /// is larger than [`MAX_FRONT_MATTER_BYTES`](crate::MAX_FRONT_MATTER_BYTES).
    FrontMatter,
    /// The front matter is not valid YAML (including a key given twice), is not a mapping, or
    /// nests brackets or uses aliases past the limits this crate reads (see the crate's docs).
    Yaml,
    /// `name`, `description`, `license`, `compatibility` or `allowed-tools` is not a string, or
    /// `metadata` is not a mapping.
    FieldType,
    /// `name` is missing or empty.
    NameRequired,
    /// `name` is longer than 64 characters.
    NameLength,
    /// `name` has a character other than a lowercase ASCII letter, an ASCII digit or `-`.
    NameCharacters,
    /// `name` starts or ends with `-`.
    NameHyphenEdge,
    /// `name` has `--` in it.
    NameDoubleHyphen,
    /// `name` differs from the name of the folder that holds the `SKILL.md`.
    NameMatchesFolder,
    /// `description` is missing, empty or only whitespace.
    DescriptionRequired,
    /// `description` is longer than 1024 characters.
    DescriptionLength,
    /// `compatibility` is empty or longer than 500 characters.
    CompatibilityLength,
    /// A key or a value of `metadata` is not a string (`version: 1.0` is a number; quote it).
    MetadataStrings,
}

impl Rule {
    /// Every rule, in the order of the declaration: for documentation and exhaustive tests.
    pub const ALL: &'static [Rule] = &[
        Rule::FileUnreadable,
        Rule::FrontMatter,
        Rule::Yaml,
        Rule::FieldType,
        Rule::NameRequired,
        Rule::NameLength,
        Rule::NameCharacters,
        Rule::NameHyphenEdge,
        Rule::NameDoubleHyphen,
        Rule::NameMatchesFolder,
        Rule::DescriptionRequired,
        Rule::DescriptionLength,
        Rule::CompatibilityLength,
        Rule::MetadataStrings,
    ];

    /// Short kebab-case id used in messages, e.g. "name-matches-folder".
    pub fn id(self) -> &'static str {
        match self {
            Rule::FileUnreadable => "file-unreadable",
            Rule::FrontMatter => "front-matter",
            Rule::Yaml => "yaml",
            Rule::FieldType => "field-type",
            Rule::NameRequired => "name-required",
            Rule::NameLength => "name-length",
            Rule::NameCharacters => "name-characters",
            Rule::NameHyphenEdge => "name-hyphen-edge",
            Rule::NameDoubleHyphen => "name-double-hyphen",
            Rule::NameMatchesFolder => "name-matches-folder",
            Rule::DescriptionRequired => "description-required",
            Rule::DescriptionLength => "description-length",
            Rule::CompatibilityLength => "compatibility-length",
            Rule::MetadataStrings => "metadata-strings",
        }
    }

    /// The rule in a few words, e.g. "name: equal to the folder's name".
    pub fn summary(self) -> &'static str {
        match self {
            Rule::FileUnreadable => "SKILL.md: readable UTF-8 text of at most 1 MiB",
            Rule::FrontMatter => "front matter: between `---` lines at the top of the file",
            Rule::Yaml => "front matter: a valid YAML mapping",
            Rule::FieldType => "fields: strings, and `metadata` a mapping",
            Rule::NameRequired => "name: present and not empty",
            Rule::NameLength => "name: at most 64 characters",
            Rule::NameCharacters => "name: lowercase letters, digits and hyphens only",
            Rule::NameHyphenEdge => "name: not starting or ending with a hyphen",
            Rule::NameDoubleHyphen => "name: no two hyphens in a row",
            Rule::NameMatchesFolder => "name: equal to the folder's name",
            Rule::DescriptionRequired => "description: present and not blank",
            Rule::DescriptionLength => "description: at most 1024 characters",
            Rule::CompatibilityLength => "compatibility: 1 to 500 characters",
            Rule::MetadataStrings => "metadata: string keys and string values",
        }
    }
}

impl fmt::Display for Rule {
    /// The rule's [`id`](Rule::id).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A rule broken by a `SKILL.md`: where, which rule, and what is wrong in words a skill's author
/// can act on (the message names the offending value or the limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The 1-based line of the `SKILL.md` the violation is about.
    pub line: usize,
    /// The rule that is broken.
    pub rule: Rule,
    /// What is wrong, in a sentence without the line or the rule.
    pub message: String,
}

impl Violation {
    pub(crate) fn new(line: usize, rule: Rule, message: impl Into<String>) -> Self {
        Violation {
            line,
            rule,
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    /// `line {line}: {message} (rule `{id}`)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: {} (rule `{}`)",
            self.line,
            self.message,
            self.rule.id()
        )
    }
}

impl std::error::Error for Violation {}

/// A value quoted for a message: Rust string syntax (so control characters show), cut to
/// `max` characters with `…` so that a huge value does not flood a compiler error.
pub(crate) fn quote(value: &str, max: usize) -> String {
    if value.chars().count() <= max {
        format!("{value:?}")
    } else {
        let cut: String = value.chars().take(max).collect();
        format!("{cut:?}…")
    }
}
