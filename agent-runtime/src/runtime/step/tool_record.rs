//! One serializable record of a tool call's result, [`ToolRecord`]: what a paused run keeps of
//! the calls of its turn that already ran, what a session stores with it, and what a durable run
//! journals for each call. Reading a record back gives the same text for the model and the same
//! error kind for the loop (denials count as denials, approvals wait, cancellations cancel), and
//! the model calls the skill reported ([`agent_llm::report_model_use`]) reported again.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_core::call::ToolResult;
use agent_core::content::Part;
use agent_core::context::SkillContext;
use agent_core::error::SkillError;
use agent_core::pending::Suspension;
use agent_core::skill::SkillOutput;
use agent_llm::message::Usage;
use agent_llm::price::Cost;

/// A tool call's result, as data, and the deferred skills the run had loaded once it ran (a
/// `tool_search` call loads some; a replay loads them again). Written by the pause and the
/// journal alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolRecord {
    call_id: String,
    name: String,
    output: OutputRecord,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    loaded: Vec<String>,
    /// The model calls the skill reported while it ran (a durable run's call: its replay
    /// reports them from here, since the skill does not run again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    model_use: Vec<ModelUse>,
}

/// One model call a skill reported: who made it, its tokens, its cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ModelUse {
    pub(crate) source: String,
    pub(crate) usage: Usage,
    pub(crate) cost: Cost,
}

/// How the call ended, by kind: every [`SkillError`] variant the loop tells apart has its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
enum OutputRecord {
    Text(String),
    Json(Value),
    /// Text and media, in order (the media's bytes in base64).
    Content(Vec<Part>),
    BadArgs {
        path: String,
        message: String,
    },
    Denied(String),
    ApprovalRequired(String),
    /// A call that suspended on calls of its own (a nested agent's pause), with its state.
    Suspended(Suspension),
    Safety(String),
    Transient(String),
    Timeout(Duration),
    Cancelled,
    /// Any other failure, by its message (what the model reads).
    Failed(String),
}

impl ToolRecord {
    /// Keeps `result`, with the deferred skills loaded when it was kept (none for a pause, whose
    /// state keeps them itself).
    pub(crate) fn keep(result: &ToolResult, loaded: Vec<String>) -> Self {
        let output = match &result.output {
            Ok(SkillOutput::Text(text)) => OutputRecord::Text(text.clone()),
            Ok(SkillOutput::Json(value)) => OutputRecord::Json(value.clone()),
            Ok(SkillOutput::Content(content)) => OutputRecord::Content(content.parts.clone()),
            Err(SkillError::BadArgs { path, message }) => OutputRecord::BadArgs {
                path: path.clone(),
                message: message.clone(),
            },
            Err(SkillError::Denied(reason)) => OutputRecord::Denied(reason.clone()),
            Err(SkillError::ApprovalRequired(reason)) => {
                OutputRecord::ApprovalRequired(reason.clone())
            }
            Err(SkillError::Suspended(suspension)) => {
                OutputRecord::Suspended((**suspension).clone())
            }
            Err(SkillError::Safety(reason)) => OutputRecord::Safety(reason.clone()),
            Err(SkillError::Transient(reason)) => OutputRecord::Transient(reason.clone()),
            Err(SkillError::Timeout(after)) => OutputRecord::Timeout(*after),
            Err(SkillError::Cancelled) => OutputRecord::Cancelled,
            // `UnknownSkill`, `Tool`, and any variant `SkillError` (non-exhaustive) gains.
            Err(error) => OutputRecord::Failed(error.to_string()),
        };
        ToolRecord {
            call_id: result.call_id.to_string(),
            name: result.name.to_string(),
            output,
            loaded,
            model_use: Vec::new(),
        }
    }

    /// The same record, with the model calls the skill reported while it ran.
    pub(crate) fn with_model_use(mut self, model_use: Vec<ModelUse>) -> Self {
        self.model_use = model_use;
        self
    }

    /// Whether the result holds text and media (state format version 5).
    pub(crate) fn has_media(&self) -> bool {
        matches!(self.output, OutputRecord::Content(_))
    }

    /// The id of the call this answers.
    pub(crate) fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The result again; the deferred skills it records are loaded into `ctx`'s run, and the
    /// model calls it records reported to it.
    pub(crate) fn restore(self, ctx: &SkillContext) -> ToolResult {
        for name in self.loaded {
            ctx.scope().load(name);
        }
        for used in self.model_use {
            agent_llm::report_model_use(ctx, &used.source, used.usage, used.cost);
        }
        let output = match self.output {
            OutputRecord::Text(text) => Ok(SkillOutput::Text(text)),
            OutputRecord::Json(value) => Ok(SkillOutput::Json(value)),
            OutputRecord::Content(parts) => Ok(SkillOutput::Content(parts.into())),
            OutputRecord::BadArgs { path, message } => Err(SkillError::BadArgs { path, message }),
            OutputRecord::Denied(reason) => Err(SkillError::Denied(reason)),
            OutputRecord::ApprovalRequired(reason) => Err(SkillError::ApprovalRequired(reason)),
            OutputRecord::Suspended(suspension) => Err(SkillError::Suspended(Box::new(suspension))),
            OutputRecord::Safety(reason) => Err(SkillError::Safety(reason)),
            OutputRecord::Transient(reason) => Err(SkillError::Transient(reason)),
            OutputRecord::Timeout(after) => Err(SkillError::Timeout(after)),
            OutputRecord::Cancelled => Err(SkillError::Cancelled),
            OutputRecord::Failed(message) => Err(SkillError::tool(message)),
        };
        ToolResult {
            call_id: self.call_id.into(),
            name: self.name.as_str().into(),
            output,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::call::ToolCall;

    #[test]
    fn every_outcome_reads_back_the_same_for_the_model_and_the_loop() {
        let call = ToolCall::new("c1", "rm", serde_json::json!({}));
        for output in [
            Ok(SkillOutput::Text("a".into())),
            Ok(SkillOutput::json(serde_json::json!({"n": 1}))),
            Err(SkillError::bad_args("path", "missing field")),
            Err(SkillError::Denied("no".into())),
            Err(SkillError::ApprovalRequired("ask".into())),
            Err(SkillError::Suspended(Box::new(agent_core::Suspension {
                pending: Vec::new(),
                state: serde_json::json!({"inner": 1}),
            }))),
            Err(SkillError::Safety("outside".into())),
            Err(SkillError::Transient("busy".into())),
            Err(SkillError::Timeout(Duration::from_millis(1500))),
            Err(SkillError::Cancelled),
            Err(SkillError::tool("broke")),
        ] {
            let result = ToolResult::new(&call, output);
            let json = serde_json::to_value(ToolRecord::keep(&result, vec!["x".into()])).unwrap();
            let back: ToolRecord = serde_json::from_value(json).unwrap();
            let ctx = SkillContext::default();
            let back = back.restore(&ctx);
            assert_eq!(back.content(), result.content());
            assert_eq!(back.is_error(), result.is_error());
            let kind = |r: &ToolResult| r.output.as_ref().err().map(std::mem::discriminant);
            assert_eq!(kind(&back), kind(&result));
            assert_eq!(&*back.call_id, "c1");
            assert!(ctx.scope().is_loaded("x"));
        }
    }
}
