//! A money budget ([`AgentRuntime::max_cost`](crate::runtime::AgentRuntime::max_cost)): before each model
//! call, the run ends if what it spent, plus the least the call can cost, passes the limit; after
//! a call that passed it, the answer's tool calls are not run and the run ends.
//!
//! The least a call can cost is known from the last call: the next request repeats its input
//! (the transcript only grows, and the answer is added), so it costs at least that many input
//! tokens at the model's cheapest input rate (cache reads). After a compaction the transcript is
//! shorter, and nothing is assumed until the next call has been made.

use agent_core::call::{ToolCall, ToolResult};
use agent_core::error::SkillError;
use agent_llm::price::{ModelPrice, Usd};

use crate::runtime::abilities::ability::{Ability, Ending};
use crate::runtime::finish::finish_reason::FinishReason;
use crate::runtime::step::run_state::RunState;

/// The ability: a limit, and the price of the model the run asks.
pub(in crate::runtime) struct CostBudget<'a> {
    pub(in crate::runtime) limit: Usd,
    pub(in crate::runtime) price: &'a ModelPrice,
}

impl CostBudget<'_> {
    fn exceeded(&self, spent: Usd, next_at_least: Usd) -> FinishReason {
        crate::runtime::finish::finish_checks::cost_budget(self.limit, spent, next_at_least)
    }
}

impl Ability for CostBudget<'_> {
    fn before_model(&self, state: &RunState) -> Option<FinishReason> {
        let spent = state.cost.total();
        if spent > self.limit {
            return Some(self.exceeded(spent, Usd::ZERO));
        }
        let least = self.price.least_for_input(state.last_input);
        (spent + least > self.limit).then(|| self.exceeded(spent, least))
    }

    fn take_calls(
        &self,
        state: &mut RunState,
        calls: &[ToolCall],
        answers: &mut [Option<ToolResult>],
    ) -> Option<Ending> {
        let spent = state.cost.total();
        if spent <= self.limit {
            return None;
        }
        for (call, answer) in calls.iter().zip(answers.iter_mut()) {
            if answer.is_none() {
                *answer = Some(ToolResult::new(
                    call,
                    Err(SkillError::tool(format!(
                        "not run: the run's money budget ({}) is spent ({spent})",
                        self.limit
                    ))),
                ));
            }
        }
        Some(Ending {
            finish: self.exceeded(spent, Usd::ZERO),
            answer: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::finish::finish_reason::Budget;

    #[test]
    fn a_call_that_must_pass_the_limit_is_not_made() {
        let price = ModelPrice::per_million(3.0, 15.0).cache_read(0.3);
        let budget = CostBudget {
            limit: Usd::dollars(1.0),
            price: &price,
        };
        let mut state = RunState::new(Vec::new(), false);
        state.cost.input = Usd::dollars(0.9);
        assert_eq!(
            budget.before_model(&state),
            None,
            "nothing known of the next call"
        );
        // 400k tokens of input repeated cost at least $0.12 even if all are read from the cache.
        state.last_input = 400_000;
        assert_eq!(
            budget.before_model(&state),
            Some(FinishReason::BudgetExceeded(Budget::Cost {
                limit: Usd::dollars(1.0),
                spent: Usd::dollars(0.9),
                next_at_least: Usd::dollars(0.12),
            }))
        );
    }
}
