//! A tool call the model made ([`ToolCall`]) and the answer it gets ([`ToolResult`]).
//!
//! ```
//! use agent_core::{SkillError, ToolCall, ToolResult};
//! use serde_json::json;
//!
//! let call = ToolCall::new("call_1", "read_file", json!({"path": "Cargo.toml"}));
//! let result = ToolResult::new(&call, Err(SkillError::Denied("not now".into())));
//! assert!(result.is_error());
//! assert_eq!(result.content(), "denied: not now");
//! ```

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::SkillError;
pub use crate::shared_str::SharedStr;
use crate::skill::SkillOutput;

/// One tool call from the model: its id (echoed back with the result), the name it used (a skill's
/// name or alias) and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call.
    pub id: SharedStr,
    /// The skill name or alias the model used.
    pub name: String,
    /// The arguments, normally a JSON object.
    pub arguments: Value,
}

impl ToolCall {
    /// A call.
    pub fn new(id: impl Into<SharedStr>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// The answer to one [`ToolCall`]: success or a [`SkillError`], which the model sees as an
/// `is_error` result.
#[derive(Debug, Clone)]
pub struct ToolResult {
    /// The id of the call this answers (shared with the call).
    pub call_id: SharedStr,
    /// The name the model used in the call (an alias stays an alias).
    pub name: SharedStr,
    /// What the call produced.
    pub output: Result<SkillOutput, SkillError>,
}

impl ToolResult {
    /// The result of `call`.
    pub fn new(call: &ToolCall, output: Result<SkillOutput, SkillError>) -> Self {
        ToolResult {
            call_id: call.id.clone(),
            name: SharedStr::from(call.name.as_str()),
            output,
        }
    }

    /// Whether the model should see this as a failed call. A paused call
    /// ([`ToolResult::outcome`] is [`Outcome::Paused`]) is never sent to the model as it is: an
    /// agent run holds it for a decision.
    pub fn is_error(&self) -> bool {
        self.output.is_err()
    }

    /// What the call came to, told apart in a type of its own: it ran to an output, it failed,
    /// or it is paused waiting for a person (a hook asked, or calls it made wait). A pause
    /// travels as [`SkillError::ApprovalRequired`] or [`SkillError::Suspended`] so a skill can
    /// return it, but it is not a failure: exporters, adapters and UIs match on this.
    ///
    /// ```
    /// use agent_core::{Outcome, SkillError, ToolCall, ToolResult};
    /// use serde_json::json;
    ///
    /// let call = ToolCall::new("c1", "delete", json!({}));
    /// let asked = ToolResult::new(&call, Err(SkillError::ApprovalRequired("deletes".into())));
    /// assert!(matches!(asked.outcome(), Outcome::Paused(_)));
    /// let failed = ToolResult::new(&call, Err(SkillError::tool("disk full")));
    /// assert!(matches!(failed.outcome(), Outcome::Failed(_)));
    /// ```
    pub fn outcome(&self) -> Outcome<'_> {
        Outcome::of(&self.output)
    }

    /// The exact text the model will see: the output, or the error's message.
    pub fn content(&self) -> Cow<'_, str> {
        match &self.output {
            Ok(output) => output.to_text(),
            Err(error) => Cow::Owned(error.to_string()),
        }
    }
}

/// What a call came to ([`ToolResult::outcome`]): done, failed, or paused. A pause is its own
/// case, never a failure.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// It ran and produced this output.
    Done(&'a SkillOutput),
    /// It failed (or was refused) with this error, which the model reads.
    Failed(&'a SkillError),
    /// It waits for a person's decision.
    Paused(Pause<'a>),
}

/// Why a call waits ([`Outcome::Paused`]).
#[derive(Debug, Clone, Copy)]
pub enum Pause<'a> {
    /// A hook asked (or the skill did): the call has not run. The reason, for the person.
    Approval(&'a str),
    /// It stopped part-way: calls it made itself wait for decisions.
    Suspended(&'a crate::pending::Suspension),
}

impl<'a> Outcome<'a> {
    /// The outcome of a call's output as the registry hands it on.
    pub fn of(output: &'a Result<SkillOutput, SkillError>) -> Self {
        match output {
            Ok(output) => Outcome::Done(output),
            Err(SkillError::ApprovalRequired(reason)) => Outcome::Paused(Pause::Approval(reason)),
            Err(SkillError::Suspended(suspension)) => Outcome::Paused(Pause::Suspended(suspension)),
            Err(error) => Outcome::Failed(error),
        }
    }

    /// Whether the call waits for a decision.
    pub fn is_paused(&self) -> bool {
        matches!(self, Outcome::Paused(_))
    }
}
