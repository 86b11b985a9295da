//! Errors: what a skill call can end in ([`SkillError`]) and what building a registry can end in
//! ([`RegistryError`]).
//!
//! A [`SkillError`] never ends an agent run. The registry turns every one of them into a tool result
//! with `is_error = true` whose text (the error's `Display`) tells the model what went wrong and what
//! to do instead, so it can correct itself on the next turn:
//!
//! ```
//! use agent_core::SkillError;
//!
//! let err = SkillError::bad_args("path", "missing field");
//! assert_eq!(err.to_string(), "invalid arguments: `path`: missing field");
//! assert!(!err.is_transient());
//! ```

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The ways a skill call can fail.
///
/// Each variant's message is written for the model that made the call: it names the problem and,
/// where there is one, the fix. Only [`SkillError::Transient`] is retried by the registry
/// (see [`SkillError::is_transient`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The arguments do not fit the skill's input schema. `path` is the JSON path of the offending
    /// field (`path`, `options.depth`, `items[2]`), or `(root)` when the arguments as a whole are wrong.
    #[error("invalid arguments: `{path}`: {message}")]
    BadArgs {
        /// JSON path of the field that is wrong.
        path: String,
        /// What is wrong with it, in serde's words.
        message: String,
    },
    /// No skill (or alias) has this name. `suggestions` lists close names, best first.
    #[error("{}", unknown_skill_message(name, suggestions, *close))]
    UnknownSkill {
        /// The name the model used.
        name: String,
        /// Names of existing skills that are close to it, or every visible name when none is close.
        suggestions: Vec<String>,
        /// Whether `suggestions` are close matches (`true`) or just the list of available skills.
        close: bool,
    },
    /// A hook or the user refused the call. The text is the reason, shown to the model.
    #[error("denied: {0}")]
    Denied(String),
    /// The call needs a decision from outside the run (a person's approval) before it may run: a
    /// before-hook answered [`HookVerdict::Ask`](crate::HookVerdict::Ask), or the skill returned
    /// it itself. An agent run pauses on it (agent-runtime's
    /// `FinishReason::AwaitingApproval`) instead of sending it to the model; the text is
    /// the reason the person reads. Outside a run (a registry used alone, an MCP server) it is an
    /// error result like any other.
    #[error("waiting for approval: {0}")]
    ApprovalRequired(String),
    /// The call stopped part-way: calls it made itself (a nested agent's, a program's) wait for
    /// decisions. An agent run pauses on it as on [`SkillError::ApprovalRequired`], listing the
    /// inner calls; outside a run it is an error result naming them.
    #[error("{}", suspended_message(.0))]
    Suspended(Box<crate::pending::Suspension>),
    /// The call would break a safety rule (a path outside the workspace, a forbidden URL, ...).
    #[error("refused for safety: {0}")]
    Safety(String),
    /// A failure that may go away if the call is repeated (a busy server, a lock held elsewhere).
    /// The registry retries these according to its [`RetryPolicy`](crate::RetryPolicy).
    #[error("temporary failure: {0}")]
    Transient(String),
    /// The skill did not finish within its time limit.
    #[error("timed out after {}; try a smaller request or a longer timeout", humanize(*.0))]
    Timeout(Duration),
    /// The run was cancelled before the call finished.
    #[error("cancelled before the call finished")]
    Cancelled,
    /// The skill itself failed. `source` keeps the underlying error, when there is one.
    #[error("{message}")]
    Tool {
        /// What failed, written for the model.
        message: String,
        /// The underlying error, kept for logs and `Error::source` chains.
        #[source]
        source: Option<Arc<dyn StdError + Send + Sync + 'static>>,
    },
}

/// What a model (or a caller outside a run) reads of a suspended call.
fn suspended_message(suspension: &crate::pending::Suspension) -> String {
    let calls: Vec<String> = suspension
        .pending
        .iter()
        .map(|p| format!("`{}` ({})", p.path(), p.id()))
        .collect();
    format!(
        "waiting for approval of calls made inside this call: {}",
        calls.join(", ")
    )
}

impl SkillError {
    /// Whether this is a pause, not a failure: [`SkillError::ApprovalRequired`] or
    /// [`SkillError::Suspended`] (see [`Outcome`](crate::Outcome)).
    pub fn is_pause(&self) -> bool {
        matches!(
            self,
            SkillError::ApprovalRequired(_) | SkillError::Suspended(_)
        )
    }

    /// A [`SkillError::BadArgs`] for the field at `path`.
    pub fn bad_args(path: impl Into<String>, message: impl Into<String>) -> Self {
        SkillError::BadArgs {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A [`SkillError::Tool`] with a message and no underlying error.
    pub fn tool(message: impl Into<String>) -> Self {
        SkillError::Tool {
            message: message.into(),
            source: None,
        }
    }

    /// A [`SkillError::Tool`] from any error, keeping it as the source.
    ///
    /// Anything that converts into `Box<dyn Error + Send + Sync>` works, `anyhow::Error` included,
    /// so `.map_err(SkillError::from_error)` is the one-liner for foreign errors.
    pub fn from_error(error: impl Into<Box<dyn StdError + Send + Sync + 'static>>) -> Self {
        let boxed = error.into();
        SkillError::Tool {
            message: boxed.to_string(),
            source: Some(Arc::from(boxed)),
        }
    }

    /// Whether repeating the same call may succeed. Only [`SkillError::Transient`] is.
    pub fn is_transient(&self) -> bool {
        matches!(self, SkillError::Transient(_))
    }
}

impl From<String> for SkillError {
    fn from(message: String) -> Self {
        SkillError::tool(message)
    }
}

impl From<&str> for SkillError {
    fn from(message: &str) -> Self {
        SkillError::tool(message)
    }
}

impl From<std::io::Error> for SkillError {
    fn from(error: std::io::Error) -> Self {
        SkillError::from_error(error)
    }
}

impl From<serde_json::Error> for SkillError {
    fn from(error: serde_json::Error) -> Self {
        SkillError::from_error(error)
    }
}

fn unknown_skill_message(name: &str, suggestions: &[String], close: bool) -> String {
    let list = suggestions
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match (suggestions.is_empty(), close) {
        (true, _) => format!("unknown skill `{name}`; no skills are available"),
        (false, true) => format!("unknown skill `{name}`; did you mean {list}?"),
        (false, false) => format!("unknown skill `{name}`; available skills: {list}"),
    }
}

/// Formats a duration the way a person writes it: `500ms`, `30s`, `2m`, `1m 30s`.
pub(crate) fn humanize(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = d.as_secs();
    if !ms.is_multiple_of(1000) {
        return format!("{:.1}s", d.as_secs_f64());
    }
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m {s}s"),
    }
}

/// Where a skill was defined in source, as recorded by `#[skill]` (or `file!()`/`line!()`).
///
/// It lives beside [`RegistryError`], which names it, rather than in `registry/discover.rs` with
/// [`SkillRegistration`](crate::SkillRegistration): there the two files would import each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceLocation {
    /// The module path of the definition, e.g. `my_agent::tools`.
    pub module_path: &'static str,
    /// The source file, as `file!()` gives it.
    pub file: &'static str,
    /// The line, as `line!()` gives it.
    pub line: u32,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ({})", self.file, self.line, self.module_path)
    }
}

/// Why a skill could not enter a [`Registry`](crate::Registry).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two skills (or a skill and an alias) claim the same name.
    #[error(
        "two skills are named `{name}`: {} and {}; rename one (`#[skill(name = \"...\")]`) or keep only one with `Registry::discover_where`",
        where_str(first),
        where_str(second)
    )]
    Duplicate {
        /// The contested name or alias.
        name: String,
        /// Where the skill already in the registry was defined, when known.
        first: Option<SourceLocation>,
        /// Where the newcomer was defined, when known.
        second: Option<SourceLocation>,
    },
    /// A name or alias that model APIs reject: it must match `^[a-zA-Z0-9_-]{1,64}$`.
    #[error("`{name}` is not a valid skill name: use 1 to 64 ASCII letters, digits, `_` or `-`")]
    InvalidName {
        /// The rejected name.
        name: String,
    },
    /// The skill's input schema does not describe a JSON object, which every model API requires.
    #[error(
        "the input of skill `{name}` must be a struct (a JSON object), but its schema is {schema}"
    )]
    InputNotObject {
        /// The skill.
        name: String,
        /// The schema that was generated for its input.
        schema: String,
    },
    /// `Registry::discover()` found no skill at all: nothing registered by `#[skill]` was linked.
    #[error(
        "no skills were found: no `#[skill]` registration is linked into this binary. \
         Skills defined in a library crate are linked only if the binary uses that crate; \
         name one item from it (e.g. `use my_tools as _;`) and check `register = false` is not set"
    )]
    NothingDiscovered,
    /// `Registry::discover_where` found skills, but the filter kept none of them.
    #[error("the filter kept none of the {linked} linked skills ({names})")]
    NothingKept {
        /// How many registrations were linked.
        linked: usize,
        /// Their names, comma-separated.
        names: String,
    },
}

fn where_str(location: &Option<SourceLocation>) -> String {
    match location {
        Some(loc) => format!("one at {loc}"),
        None => "one added with `Registry::add`".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_a_person_wrote_them() {
        assert_eq!(humanize(Duration::from_millis(500)), "500ms");
        assert_eq!(humanize(Duration::from_secs(30)), "30s");
        assert_eq!(humanize(Duration::from_secs(120)), "2m");
        assert_eq!(humanize(Duration::from_secs(90)), "1m 30s");
        assert_eq!(humanize(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn from_error_keeps_the_source() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = SkillError::from(io);
        assert_eq!(err.to_string(), "no such file");
        assert!(StdError::source(&err).is_some());
    }

    #[test]
    fn only_transient_is_transient() {
        assert!(SkillError::Transient("busy".into()).is_transient());
        assert!(!SkillError::Timeout(Duration::from_secs(1)).is_transient());
        assert!(!SkillError::tool("x").is_transient());
    }
}
