//! The Agent Skills format: `SKILL.md` folders, parsed and checked against the published
//! specification (<https://agentskills.io/specification>).
//!
//! This crate is what both the `agent_skills!` macro (while it expands, at compile time) and the
//! runtime loader use, so that a skill is judged the same way in both places. It is pure: no
//! global state, no network, and the file system only in [`find`], [`load`] and [`files`].
//!
//! # The format
//!
//! A skill is a folder. Its `SKILL.md` starts with YAML front matter between two `---` lines,
//! followed by Markdown instructions (the body) for the model:
//!
//! ```text
//! pdf-tools/
//! ├── SKILL.md          ---
//! │                     name: pdf-tools
//! │                     description: Fill in PDF forms. Use when the user has a PDF form.
//! │                     ---
//! │                     # Filling in a form …
//! ├── scripts/          optional: code the instructions refer to
//! ├── references/       optional: documents read when needed
//! └── assets/           optional: templates, images, data
//! ```
//!
//! # The rules
//!
//! | field | | rule ([`Rule`]) |
//! |---|---|---|
//! | `name` | required | 1 to 64 characters; lowercase ASCII letters, digits and `-` only; not starting or ending with `-`; no `--`; equal to the folder's name |
//! | `description` | required | not blank; at most 1024 characters |
//! | `license` | optional | a string |
//! | `compatibility` | optional | 1 to 500 characters |
//! | `metadata` | optional | a mapping of string keys to string values |
//! | `allowed-tools` | optional, experimental | one string of tool names separated by spaces |
//!
//! Lengths are counted in characters (Unicode scalar values), not bytes. [`parse`] reports every
//! broken rule it finds, each as a [`Violation`] with the line of the `SKILL.md` it is about.
//!
//! # Decisions
//!
//! - **Other top-level keys are accepted and ignored.** Tools add their own (Claude Code reads
//!   `model`, for one); refusing them would refuse real skills. Their values are not read at all.
//! - **A key with no value is absent.** `license:` with nothing after it (YAML null) is the same as
//!   no `license`; `name:` or `description:` with nothing after it is [`Rule::NameRequired`] or
//!   [`Rule::DescriptionRequired`], at the key's line. An empty `name: ""` is `NameRequired` too.
//! - **Every name rule is checked on its own**: `-My--Skill` breaks four of them, and is reported
//!   four times, so that fixing one message does not reveal the next.
//! - **A value of the wrong type is [`Rule::FieldType`] and nothing more**: `name: 7` is not also
//!   reported as a missing name.
//! - **`metadata` values must be strings**, as the specification says: `version: 1.0` is a number
//!   in YAML, and the message says to quote it. No number is silently turned into text.
//! - **`allowed-tools` must be one string**, split on whitespace into
//!   [`Manifest::allowed_tools`]; a YAML list is a [`Rule::FieldType`] violation.
//! - **Keys given twice** (top level or in `metadata`) are [`Rule::Yaml`] violations at the
//!   second occurrence: YAML requires unique keys.
//! - **Line numbers**: a field's violation points at the line of its top-level `key:` (a
//!   `metadata` entry's, at its own indented line when written as a block); a missing required
//!   field and anything about the whole file point at line 1; a YAML syntax error at the parser's
//!   location, in the file's numbering. A field written in a flow mapping (`{name: x}`) has no line
//!   of its own and points at line 1.
//! - **Text**: a UTF-8 byte order mark before the first `---` and CRLF line endings are
//!   accepted; [`Manifest::body_offset`] counts bytes of the text as given, BOM included.
//!
//! # Bounded work on hostile input
//!
//! A skill folder may come from anywhere, and the macro runs inside the compiler, so every input
//! is bounded:
//!
//! - a `SKILL.md` larger than [`MAX_SKILL_FILE_BYTES`] is refused before it is read, and front
//!   matter larger than [`MAX_FRONT_MATTER_BYTES`] before it is parsed;
//! - the YAML is never turned into a value tree: the fields of the specification are read as
//!   strings (or as "what it is instead", for the message), `metadata` one level deep, and
//!   everything else is skipped by the parser's own non-recursive loop. Skipping does not follow
//!   aliases, so an alias bomb ("billion laughs") is never expanded;
//! - two scans of the text before parsing refuse ([`Rule::Yaml`]) what would still make the
//!   parser's work grow faster than the text: `[`/`{` nested more than 128 deep (libyaml's work
//!   grows with size × depth: 60,000 `[` took seconds), and more than 64 aliases (`*name`) when
//!   there is an anchor (`&name`) for them to name (each alias read makes the parser walk the
//!   node it names, so many aliases of one large node cost size²). Both scans count brackets and
//!   `*`/`&` at the start of a word anywhere, quoted or not, so they can only over-count, and real
//!   front matter is far below both limits. With them, the worst front matter takes milliseconds;
//! - [`files`] stops at [`MAX_FILES`] files (and as many folders) and [`MAX_DEPTH`] levels, and
//!   does not follow symbolic links.
//!
//! # Dependencies
//!
//! - `serde`: the visitor interface through which the front matter is walked without building a
//!   value tree (see above).
//! - `serde_yaml_ng`: the YAML parser: libyaml translated to Rust (`unsafe-libyaml`), so no C
//!   compiler is needed; maintained, and already in the workspace's dependency graph.

#![warn(missing_docs)]

mod folder;
mod front;
mod limits;
mod parse;
mod rule;
mod yaml;

pub use folder::{Found, Invalid, files, find, load};
pub use parse::parse;
pub use rule::{Rule, Violation};

/// The name of the file that makes a folder a skill: `SKILL.md`.
pub const SKILL_FILE: &str = "SKILL.md";

/// A SKILL.md larger than this is refused (Rule::FileUnreadable).
pub const MAX_SKILL_FILE_BYTES: u64 = 1024 * 1024;

/// Front matter (the text between the `---` lines) larger than this is refused
/// ([`Rule::FrontMatter`]) before the YAML parser sees it: 64 KiB, far above any real skill's,
/// so that the parser's work on hostile input stays small.
pub const MAX_FRONT_MATTER_BYTES: usize = 64 * 1024;

/// files() refuses a folder with more files than this, or nested deeper than MAX_DEPTH.
pub const MAX_FILES: usize = 1000;

/// files() refuses a folder whose folders are nested deeper than this (the skill's own folder is
/// level 0, so a file may be at most this many folders down).
pub const MAX_DEPTH: usize = 16;

/// A `SKILL.md`'s front matter, checked: every field of the specification, and where the
/// Markdown body begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// `name`: the skill's name, equal to its folder's name.
    pub name: String,
    /// `description`: what the skill does and when to use it; shown to the model up front.
    pub description: String,
    /// `license`: the licence's name or a pointer to a bundled licence file.
    pub license: Option<String>,
    /// `compatibility`: what the skill needs from its environment (a product, packages, network).
    pub compatibility: Option<String>,
    /// `allowed-tools` split on whitespace: tools the skill may use without asking (experimental).
    pub allowed_tools: Vec<String>,
    /// `metadata`: extra string properties, in file order.
    pub metadata: Vec<(String, String)>,
    /// Byte offset in the file's text where the Markdown body begins (just after the closing
    /// `---` line and its line break).
    pub body_offset: usize,
}

impl Manifest {
    /// The Markdown body of `text`, the text this manifest was parsed from: `&text[body_offset..]`.
    ///
    /// # Panics
    ///
    /// If `text` is shorter than [`body_offset`](Manifest::body_offset) or the offset is not on
    /// a character boundary, i.e. if `text` is not the text that was parsed.
    pub fn body<'t>(&self, text: &'t str) -> &'t str {
        &text[self.body_offset..]
    }
}
