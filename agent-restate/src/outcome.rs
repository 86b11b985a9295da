//! What the handlers answer with, as JSON: a finished run ([`RunSummary`]) and a call waiting for a
//! person ([`Approval`]).

use agent_llm::Usage;
use agent_runtime::{FinishReason, PendingCall, RunOutcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a durable run ended: what the `run` handler answers with and the `outcome` handler reads
/// back. A run that pauses for approval does not end: it waits inside the same invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Why it ended, as agent-core writes it: `{"reason": "no_more_tool_calls"}`,
    /// `{"reason": "budget_exceeded", "budget": "steps", "limit": 20}`, ...
    pub finish: FinishReason,
    /// The model's last text, if it wrote any.
    pub final_text: Option<String>,
    /// Model calls made by this run (approvals in between included).
    pub steps: usize,
    /// Tokens used by this run.
    pub usage: Usage,
    /// A typed agent's checked value ([`DurableAgent::output`](crate::DurableAgent::output)), when
    /// the run ended with one.
    pub output: Option<Value>,
}

impl From<&RunOutcome> for RunSummary {
    fn from(outcome: &RunOutcome) -> Self {
        RunSummary {
            finish: outcome.finish.clone(),
            final_text: outcome.final_text.clone(),
            steps: outcome.steps,
            usage: outcome.usage,
            output: outcome.output.clone(),
        }
    }
}

/// A call the run waits on: what a person decides about, and the awakeable that carries the
/// decision. Send it with the `decide` handler (by call id), or resolve the awakeable directly
/// through Restate's ingress with a [`Decision`](agent_runtime::Decision) as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// The id a decision names ([`PendingCall::id`]): the call's own id, or for a call inside an
    /// agent used as a skill, the path of call ids (`p1/c2`).
    #[serde(default)]
    pub id: String,
    /// The call, its skill, flags and the hook's reason.
    pub pending: PendingCall,
    /// The id of the Restate awakeable the run waits on for this call.
    pub awakeable: String,
    /// The call's [`PendingCall::digest`]: send it back with the decision (`"digest"` beside
    /// `"decision"`) so the decision answers this call only, not a later one under the same id.
    #[serde(default)]
    pub digest: String,
}
