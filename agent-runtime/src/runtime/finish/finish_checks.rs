//! Where a run's end is decided: every [`FinishReason`] is made here, by the check that decides
//! it. The loop (`step/agent_loop.rs`) and the wrappers call these at fixed points of a step; none of them
//! builds a reason of its own.
//!
//! | reason | decided by | when |
//! |---|---|---|
//! | [`FinishReason::Cancelled`] | [`before_model`], [`after_results`], [`cancelled`] | the token fired: before a model call, while one was made, after a turn's results |
//! | [`FinishReason::BudgetExceeded`] (steps, tokens) | [`before_model`] | before a model call: `max_steps` calls made, or `max_tokens_total` used |
//! | [`FinishReason::BudgetExceeded`] (output retries) | [`output_retries`] | a typed run's answer failed its check once more than `output_retries` allows |
//! | [`FinishReason::BudgetExceeded`] (cost) | [`cost_budget`], asked by the cost budget (`abilities/cost_budget.rs`) | before a model call: what the run spent and the least the next call can cost pass `max_cost` |
//! | [`FinishReason::BudgetExceeded`] (a tree's steps or tokens) | [`tree_budget`], asked by the tree budgets (`abilities/tree_budget.rs`) | before a model call: a budget shared by an agent and the agents it calls is used up |
//! | [`FinishReason::TranscriptLimit`] | [`transcript_limit`] | before a model call: the transcript is over its limit and compaction cannot bring it under |
//! | [`FinishReason::Stuck`] | [`repeated_call`], [`after_results`] | the same call, or the same error, `stuck_after` times in a row |
//! | [`FinishReason::PermissionDenialLimit`] | [`after_results`] | `permission_denial_limit` denials counted |
//! | [`FinishReason::NoMoreToolCalls`] | [`no_more_tool_calls`], [`answered`] | an answer without calls that the model finished; in a typed run, an answer that passed its check |
//! | [`FinishReason::ProviderStop`] | [`cut_short`] | an answer without calls cut off, refused or stopped otherwise |
//! | [`FinishReason::PlanPending`] | [`plan_pending`] | in plan mode, the first finished answer without calls |
//! | [`FinishReason::AwaitingApproval`] | [`awaiting_approval`] | a hook asked a person about a call of the turn |

use crate::runtime::AgentRuntime;
use crate::runtime::finish::finish_reason::{Budget, FinishReason, TranscriptLimit};
use crate::runtime::step::guards::{Repeated, StuckGuard};
use crate::runtime::step::run_state::RunState;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::pending::PendingCall;
use agent_llm::message::StopReason;

/// A run's money budget is used up: `spent` so far, and the next call would cost at least
/// `next_at_least`.
pub(in crate::runtime) fn cost_budget(
    limit: agent_llm::Usd,
    spent: agent_llm::Usd,
    next_at_least: agent_llm::Usd,
) -> FinishReason {
    FinishReason::BudgetExceeded(Budget::Cost {
        limit,
        spent,
        next_at_least,
    })
}

/// A budget shared by an agent and the agents it calls is used up (`budget` says which).
pub(in crate::runtime) fn tree_budget(budget: Budget) -> FinishReason {
    FinishReason::BudgetExceeded(budget)
}

/// The checks before each model call: cancellation, then the step and token budgets.
pub(in crate::runtime) fn before_model(
    rt: &AgentRuntime,
    state: &RunState,
) -> Option<FinishReason> {
    if rt.settings.cancellation.is_cancelled() {
        return Some(FinishReason::Cancelled);
    }
    if state.steps >= rt.settings.max_steps {
        return Some(FinishReason::BudgetExceeded(Budget::Steps {
            limit: rt.settings.max_steps,
        }));
    }
    let used = state.usage.total();
    match rt.settings.max_tokens_total {
        Some(limit) if used >= limit => {
            Some(FinishReason::BudgetExceeded(Budget::Tokens { limit, used }))
        }
        _ => None,
    }
}

/// The run was cancelled while a step was under way.
pub(in crate::runtime) fn cancelled() -> FinishReason {
    FinishReason::Cancelled
}

/// The transcript's size against its limit, in the limit's unit: `(size, limit)`.
pub(in crate::runtime) fn transcript_size(
    rt: &AgentRuntime,
    chars: usize,
) -> Option<(usize, usize)> {
    rt.settings.transcript_limit.map(|limit| match limit {
        TranscriptLimit::Chars(n) => (chars, n),
        TranscriptLimit::Tokens(n) => (chars.div_ceil(4), n),
    })
}

/// The transcript stays over its limit: compaction failed twice, or nothing is left to cut.
pub(in crate::runtime) fn transcript_limit(size: usize, limit: usize) -> FinishReason {
    FinishReason::TranscriptLimit { size, limit }
}

/// An answer without calls that the model did not finish (cut off, refused, stopped otherwise):
/// the run ends with the provider's reason. `None` when it finished the answer: only that is
/// something to approve or to check.
pub(in crate::runtime) fn cut_short(stop: StopReason) -> Option<FinishReason> {
    match stop {
        StopReason::EndTurn | StopReason::ToolUse | StopReason::StopSequence(_) => None,
        stop => Some(FinishReason::ProviderStop { stop }),
    }
}

/// A finished answer without calls that no ability had a say about.
pub(in crate::runtime) fn no_more_tool_calls() -> FinishReason {
    FinishReason::NoMoreToolCalls
}

/// A typed run's answer passed its check.
pub(in crate::runtime) fn answered() -> FinishReason {
    FinishReason::NoMoreToolCalls
}

/// In plan mode, the model's finished answer is its plan.
pub(in crate::runtime) fn plan_pending(plan: &str) -> FinishReason {
    FinishReason::PlanPending {
        plan: plan.to_owned(),
    }
}

/// A typed run's answers failed their check more often than `limit` allows.
pub(in crate::runtime) fn output_retries(limit: usize, last_error: String) -> FinishReason {
    FinishReason::BudgetExceeded(Budget::OutputRetries { limit, last_error })
}

/// The model made the same call `stuck_after` times in a row (seen before the calls run).
pub(in crate::runtime) fn repeated_call<'c>(
    rt: &AgentRuntime,
    guard: &mut StuckGuard,
    counted: impl IntoIterator<Item = &'c ToolCall>,
) -> Option<FinishReason> {
    guard.on_calls(rt.settings.stuck_after, counted).map(stuck)
}

/// The checks after a turn's results are in the transcript: cancellation, denials, then
/// repetition of the same error. `counted` are the calls the repetition guard sees, with their
/// results.
pub(in crate::runtime) fn after_results<'c>(
    rt: &AgentRuntime,
    state: &mut RunState,
    results: &[ToolResult],
    counted: impl IntoIterator<Item = (&'c ToolResult, &'c ToolCall)>,
) -> Option<FinishReason> {
    if rt.settings.cancellation.is_cancelled() {
        return Some(FinishReason::Cancelled);
    }
    if let Some(limit) = rt.settings.denial_limit {
        let denials = state.denials.on_results(rt.settings.denial_count, results);
        if denials >= limit {
            return Some(FinishReason::PermissionDenialLimit { denials });
        }
    }
    state
        .stuck
        .on_results(rt.settings.stuck_after, counted)
        .map(stuck)
}

/// Calls of the turn wait for a person's decision.
pub(in crate::runtime) fn awaiting_approval(pending: Vec<PendingCall>) -> FinishReason {
    FinishReason::AwaitingApproval { pending }
}

fn stuck(repeated: Repeated) -> FinishReason {
    FinishReason::Stuck {
        name: repeated.name,
        arguments: repeated.arguments,
        repeated: repeated.repeated,
        error: repeated.error,
    }
}
