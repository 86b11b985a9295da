//! A paused run, as data: the [`RunState`] a run hands back when it stops for a decision, the
//! [`PendingCall`]s a person decides on, and the [`Decision`]s that continue it. Plain data
//! only: the loop (`run.rs`) takes its counters out of a state and puts them back.
//!
//! A state is `Serialize + Deserialize` and carries a format version, written first. Reading a
//! state of another version is an error that says which versions are involved, before any other
//! field is read: never a misread.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::{ToolCall, ToolResult};
use crate::error::SkillError;
use crate::message::{Message, Usage};
use crate::skill::SkillOutput;

/// The format version of [`RunState`] this build writes and reads.
pub const RUN_STATE_VERSION: u32 = 1;

/// A call a run paused on: what a person needs to decide on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call as the model made it: its id (which the decision names), the name it used, its
    /// arguments.
    pub call: ToolCall,
    /// The skill's own name (the model may have used an alias).
    pub skill: String,
    /// Whether the skill only reads ([`SkillMetadata::is_read_only`](crate::SkillMetadata)).
    pub is_read_only: bool,
    /// Whether the skill does something hard to undo
    /// ([`SkillMetadata::is_destructive`](crate::SkillMetadata)).
    pub is_destructive: bool,
    /// Why a decision is needed, as the hook wrote it for a person.
    pub reason: String,
}

/// What a person decided about a [`PendingCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "decision", content = "with")]
pub enum Decision {
    /// Run the call as it is. It runs exactly once; hooks that asked let it through, hooks that
    /// deny still deny.
    Approve,
    /// Do not run it; the text is the reason the model reads. Counts as a denial.
    Deny(String),
    /// Run it with these arguments instead, validated like a hook's
    /// [`HookOutcome::Modify`](crate::HookOutcome::Modify).
    Edit(Value),
}

/// Everything needed to continue a paused run exactly where it stopped, in this process or
/// another: the transcript, the calls waiting for a decision, the results the paused turn already
/// has, the usage and step counters (budgets continue, they do not restart), the guards'
/// counters, the skills `tool_search` loaded, plan mode, and a typed run's progress.
///
/// Serialize it with any serde format; `serde_json` is the usual one:
///
/// ```
/// # use agent_core::RunState;
/// # fn keep(state: &RunState) -> Result<(), Box<dyn std::error::Error>> {
/// std::fs::write("paused.json", serde_json::to_vec(state)?)?;
/// let back: RunState = serde_json::from_slice(&std::fs::read("paused.json")?)?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Written first, read first: a state of another version is refused before anything else.
    version: Version,
    /// The conversation up to the paused turn's assistant message (its calls not yet answered).
    pub transcript: Vec<Message>,
    /// The calls waiting for a decision, in call order.
    pub pending: Vec<PendingCall>,
    /// The results the paused turn's other calls already have.
    pub(crate) done: Vec<StoredResult>,
    /// The user message that tells the model some of the turn's calls were cut off, if any.
    pub(crate) notice: Option<Message>,
    /// Tokens used so far.
    pub usage: Usage,
    /// Model calls made so far.
    pub steps: usize,
    pub(crate) guards: GuardCounts,
    /// Deferred skills `tool_search` loaded in this run.
    pub loaded_skills: Vec<String>,
    /// Whether the run is in plan mode.
    pub plan_mode: bool,
    pub(crate) output: Option<OutputProgress>,
}

impl RunState {
    /// A state; the loop fills it in when it pauses.
    #[allow(clippy::too_many_arguments)] // One constructor, called from one place.
    pub(crate) fn new(
        transcript: Vec<Message>,
        pending: Vec<PendingCall>,
        done: Vec<StoredResult>,
        notice: Option<Message>,
        usage: Usage,
        steps: usize,
        guards: GuardCounts,
        loaded_skills: Vec<String>,
        plan_mode: bool,
        output: Option<OutputProgress>,
    ) -> Self {
        RunState {
            version: Version,
            transcript,
            pending,
            done,
            notice,
            usage,
            steps,
            guards,
            loaded_skills,
            plan_mode,
            output,
        }
    }
}

/// The format version, checked as it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Version;

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(RUN_STATE_VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let version = u32::deserialize(deserializer)?;
        if version == RUN_STATE_VERSION {
            Ok(Version)
        } else {
            Err(de::Error::custom(format!(
                "this run state has format version {version}, and this build of agent-core reads \
                 only version {RUN_STATE_VERSION}: resume it with the version that paused it"
            )))
        }
    }
}

/// A result of the paused turn, kept as the model will read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredResult {
    call_id: String,
    name: String,
    #[serde(flatten)]
    outcome: StoredOutcome,
}

/// How a stored result ended: what the transcript and the guards need of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "text")]
enum StoredOutcome {
    /// Succeeded, with this text.
    Ok(String),
    /// Denied, for this reason.
    Denied(String),
    /// Failed, with this message.
    Failed(String),
}

impl StoredResult {
    /// Keeps `result` as the model reads it.
    pub(crate) fn keep(result: &ToolResult) -> Self {
        let outcome = match &result.output {
            Ok(output) => StoredOutcome::Ok(output.to_text().into_owned()),
            Err(SkillError::Denied(reason)) => StoredOutcome::Denied(reason.clone()),
            Err(error) => StoredOutcome::Failed(error.to_string()),
        };
        StoredResult {
            call_id: result.call_id.to_string(),
            name: result.name.to_string(),
            outcome,
        }
    }

    /// The result again: the same text for the model, the same error for the guards.
    pub(crate) fn restore(self) -> ToolResult {
        let output = match self.outcome {
            StoredOutcome::Ok(text) => Ok(SkillOutput::Text(text)),
            StoredOutcome::Denied(reason) => Err(SkillError::Denied(reason)),
            StoredOutcome::Failed(message) => Err(SkillError::tool(message)),
        };
        ToolResult {
            call_id: self.call_id.into(),
            name: self.name.as_str().into(),
            output,
        }
    }

    /// The id of the call this answers.
    pub(crate) fn call_id(&self) -> &str {
        &self.call_id
    }
}

/// The guards' counters: the last call and how often in a row, the last error and how often,
/// the denials counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct GuardCounts {
    pub(crate) last_call: Option<(String, usize)>,
    pub(crate) last_error: Option<(String, String, usize)>,
    pub(crate) denials: usize,
}

/// A typed run's progress: answers that failed the check, and whether native mode's last turn
/// (the one under the schema) was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OutputProgress {
    pub(crate) failures: usize,
    pub(crate) native_turn: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_result_reads_back_the_same_for_the_model_and_the_guards() {
        let call = ToolCall::new("c1", "rm", serde_json::json!({}));
        for output in [
            Ok(SkillOutput::json(serde_json::json!({"n": 1}))),
            Err(SkillError::Denied("not now".into())),
            Err(SkillError::bad_args("path", "missing field")),
        ] {
            let result = ToolResult::new(&call, output);
            let json = serde_json::to_string(&StoredResult::keep(&result)).unwrap();
            let back: StoredResult = serde_json::from_str(&json).unwrap();
            let back = back.restore();
            assert_eq!(back.content(), result.content());
            assert_eq!(back.is_error(), result.is_error());
            assert_eq!(
                matches!(back.output, Err(SkillError::Denied(_))),
                matches!(result.output, Err(SkillError::Denied(_)))
            );
            assert_eq!(&*back.call_id, "c1");
        }
    }
}
