//! Why a run ended: the [`FinishReason`] and the budgets and limits it names. Where each reason is
//! decided is `finish/finish_checks.rs`.
//!
//! A [`FinishReason`] serializes itself, tagged by `reason`:
//! `{"reason": "no_more_tool_calls"}`, `{"reason": "budget_exceeded", "budget": "steps",
//! "limit": 3}`, `{"reason": "provider_stop", "stop": "MaxTokens"}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_core::pending::PendingCall;
use agent_llm::message::StopReason;

/// Why a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// The model finished: it answered without calling tools, or, in a typed run, gave an answer
    /// that passed the output's check. The normal end.
    NoMoreToolCalls,
    /// The model stopped for a reason other than finishing its turn (token limit, refusal, ...).
    ProviderStop {
        /// Why, in words common to providers.
        stop: StopReason,
    },
    /// A budget ran out.
    BudgetExceeded(Budget),
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
    /// The transcript grew past its limit and compaction could not bring it under.
    TranscriptLimit {
        /// Its size, in the limit's unit.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// In plan mode, the model presented its plan. Approve it with
    /// [`AgentRuntime::approve_plan`](crate::runtime::AgentRuntime::approve_plan).
    PlanPending {
        /// The plan, as the model wrote it.
        plan: String,
    },
    /// The run's cancellation token fired.
    Cancelled,
    /// Hooks denied too many calls.
    PermissionDenialLimit {
        /// How many denials were counted.
        denials: usize,
    },
    /// Calls need a decision from outside (a hook answered [`HookVerdict::Ask`](
    /// agent_core::HookVerdict::Ask)): the run paused. The other calls of the turn ran; the outcome's
    /// [`RunOutcome::state`](crate::runtime::RunOutcome::state) holds everything needed to continue, in this process or another,
    /// with [`AgentRuntime::continue_paused`](crate::runtime::AgentRuntime::continue_paused).
    AwaitingApproval {
        /// The calls waiting, in call order.
        pending: Vec<PendingCall>,
    },
}

/// Which budget ran out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "budget", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Budget {
    /// The number of model calls.
    Steps {
        /// The limit.
        limit: usize,
    },
    /// The number of tokens.
    Tokens {
        /// The limit.
        limit: u64,
        /// Tokens used.
        used: u64,
    },
    /// The model calls of a run and every agent below it ([`AgentRuntime::tree_budget`](
    /// crate::runtime::AgentRuntime::tree_budget)).
    TreeSteps {
        /// The limit.
        limit: usize,
    },
    /// The tokens of a run and every agent below it ([`AgentRuntime::tree_budget`](
    /// crate::runtime::AgentRuntime::tree_budget)).
    TreeTokens {
        /// The limit.
        limit: u64,
        /// Tokens the tree used.
        used: u64,
    },
    /// The money the run's model calls cost ([`AgentRuntime::max_cost`](
    /// crate::runtime::AgentRuntime::max_cost)), priced by the runtime's price table.
    Cost {
        /// The limit.
        limit: agent_llm::Usd,
        /// What the run's calls (its sub-agents' included) had cost.
        spent: agent_llm::Usd,
        /// The least the next call would have cost, when the run ended before it because that
        /// would have passed the limit; zero when the limit was already passed.
        #[serde(default)]
        next_at_least: agent_llm::Usd,
    },
    /// In a typed run, the answers sent back because they failed the output's check.
    OutputRetries {
        /// The limit ([`AgentRuntime::output_retries`](crate::runtime::AgentRuntime::output_retries)).
        limit: usize,
        /// What was wrong with the last answer, as the model was told.
        last_error: String,
    },
}

/// How the transcript's size is measured against its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptLimit {
    /// Characters of text and tool arguments.
    Chars(usize),
    /// Estimated tokens (characters / 4).
    Tokens(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finish_reason_reads_back_as_itself_tagged_by_reason() {
        let reasons = [
            FinishReason::NoMoreToolCalls,
            FinishReason::ProviderStop {
                stop: StopReason::StopSequence(Some("END".into())),
            },
            FinishReason::BudgetExceeded(Budget::Tokens { limit: 9, used: 10 }),
            FinishReason::BudgetExceeded(Budget::OutputRetries {
                limit: 2,
                last_error: "`sky`: missing field".into(),
            }),
            FinishReason::Stuck {
                name: "ls".into(),
                arguments: serde_json::json!({"path": "."}),
                repeated: 3,
                error: None,
            },
            FinishReason::TranscriptLimit { size: 10, limit: 5 },
            FinishReason::PlanPending {
                plan: "1. read".into(),
            },
            FinishReason::Cancelled,
            FinishReason::PermissionDenialLimit { denials: 2 },
            FinishReason::AwaitingApproval { pending: vec![] },
        ];
        for reason in reasons {
            let json = serde_json::to_value(&reason).unwrap();
            assert!(json["reason"].is_string(), "{json}");
            let back: FinishReason = serde_json::from_value(json).unwrap();
            assert_eq!(back, reason);
        }
        let json = serde_json::to_value(FinishReason::BudgetExceeded(Budget::Steps { limit: 3 }));
        assert_eq!(
            json.unwrap(),
            serde_json::json!({"reason": "budget_exceeded", "budget": "steps", "limit": 3})
        );
    }
}
