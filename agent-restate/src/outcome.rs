//! What the handlers answer with, as JSON: a finished run ([`Outcome`], [`Finish`]) and a call
//! waiting for a person ([`Approval`]).

use agent_core::{Budget, FinishReason, PendingCall, RunOutcome, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a durable run ended: what the `run` handler answers with and the `outcome` handler reads
/// back. A run that pauses for approval does not end: it waits inside the same invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Why it ended.
    pub finish: Finish,
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

impl From<&RunOutcome> for Outcome {
    fn from(outcome: &RunOutcome) -> Self {
        Outcome {
            finish: Finish::from(&outcome.finish),
            final_text: outcome.final_text.clone(),
            steps: outcome.steps,
            usage: outcome.usage,
            output: outcome.output.clone(),
        }
    }
}

/// [`FinishReason`] as JSON: `{"reason": "no_more_tool_calls"}`, `{"reason": "stuck", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Finish {
    /// The model finished.
    NoMoreToolCalls,
    /// The model stopped otherwise (token limit, refusal, ...), in words common to providers.
    ProviderStop {
        /// The stop reason.
        stop: agent_core::StopReason,
    },
    /// A budget ran out.
    BudgetExceeded {
        /// Which one: `steps`, `tokens` or `output_retries`.
        budget: String,
        /// Its limit.
        limit: u64,
        /// What was wrong with the last answer (`output_retries`), or the tokens used (`tokens`).
        detail: Option<String>,
    },
    /// The model kept doing the same thing.
    Stuck {
        /// The tool it kept calling.
        name: String,
        /// The arguments it kept sending.
        arguments: Value,
        /// How many times in a row.
        repeated: usize,
        /// The error that kept coming back, when that is what repeated.
        error: Option<String>,
    },
    /// The transcript outgrew its limit.
    TranscriptLimit {
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// In plan mode, the model presented its plan.
    PlanPending {
        /// The plan.
        plan: String,
    },
    /// The invocation was cancelled (through Restate) or the runtime's token fired.
    Cancelled,
    /// Hooks denied too many calls.
    PermissionDenialLimit {
        /// How many.
        denials: usize,
    },
    /// A reason this version does not know by name.
    Other {
        /// Its description.
        description: String,
    },
}

impl From<&FinishReason> for Finish {
    fn from(finish: &FinishReason) -> Self {
        match finish {
            FinishReason::NoMoreToolCalls => Finish::NoMoreToolCalls,
            FinishReason::ProviderStop(stop) => Finish::ProviderStop { stop: stop.clone() },
            FinishReason::BudgetExceeded(budget) => budget_exceeded(budget),
            FinishReason::Stuck {
                name,
                arguments,
                repeated,
                error,
            } => Finish::Stuck {
                name: name.clone(),
                arguments: arguments.clone(),
                repeated: *repeated,
                error: error.clone(),
            },
            FinishReason::TranscriptLimit { size, limit } => Finish::TranscriptLimit {
                size: *size,
                limit: *limit,
            },
            FinishReason::PlanPending { plan } => Finish::PlanPending { plan: plan.clone() },
            FinishReason::Cancelled => Finish::Cancelled,
            FinishReason::PermissionDenialLimit { denials } => {
                Finish::PermissionDenialLimit { denials: *denials }
            }
            other => Finish::Other {
                description: format!("{other:?}"),
            },
        }
    }
}

fn budget_exceeded(budget: &Budget) -> Finish {
    let (name, limit, detail) = match budget {
        Budget::Steps { limit } => ("steps", *limit as u64, None),
        Budget::Tokens { limit, used } => ("tokens", *limit, Some(format!("{used} used"))),
        Budget::OutputRetries { limit, last_error } => {
            ("output_retries", *limit as u64, Some(last_error.clone()))
        }
        other => ("other", 0, Some(format!("{other:?}"))),
    };
    Finish::BudgetExceeded {
        budget: name.into(),
        limit,
        detail,
    }
}

/// A call the run waits on: what a person decides about, and the awakeable that carries the
/// decision. Send it with the `decide` handler (by call id), or resolve the awakeable directly
/// through Restate's ingress with a [`Decision`](agent_core::Decision) as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// The call, its skill, flags and the hook's reason.
    pub pending: PendingCall,
    /// The id of the Restate awakeable the run waits on for this call.
    pub awakeable: String,
}
