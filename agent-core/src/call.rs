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
    /// ([`Outcome::of`](crate::Outcome::of) is `Paused`) is never sent to the model as
    /// it is: an agent run holds it for a decision.
    pub fn is_error(&self) -> bool {
        self.output.is_err()
    }

    /// The exact text the model will see: the output, or the error's message.
    pub fn content(&self) -> Cow<'_, str> {
        match &self.output {
            Ok(output) => output.to_text(),
            Err(error) => Cow::Owned(error.to_string()),
        }
    }
}
