//! A budget shared by a tree of agents ([`AgentRuntime::tree_budget`](crate::runtime::AgentRuntime::tree_budget)): the most model calls and
//! tokens of a run together with every agent it calls as a skill, their children's included.
//!
//! A runtime with a tree budget starts a counter ([`TreeCounter`]) for each run, from what its
//! state already used (its own steps and tokens and its children's, so a resumed run goes on
//! where it paused, in any process). The run's [`Nesting`](crate::runtime::agents::nesting::Nesting) hands the
//! counter down, so every agent below draws from it too. Each of them, before each model call,
//! takes a step from every counter above it; when one has none left, or its tokens are spent, that
//! agent's run ends with [`Budget::TreeSteps`] or [`Budget::TreeTokens`], its parent reads an
//! error result and ends the same way at its next model call. Steps are taken atomically: agents
//! running side by side never make more model calls together than the limit. Tokens are counted
//! when an answer arrives, so calls already under way when the limit is reached finish (as the
//! run's own token budget does).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::runtime::abilities::ability::Ability;
use crate::runtime::finish::finish_reason::{Budget, FinishReason};
use crate::runtime::step::run_state::RunState;
use agent_llm::message::Usage;

/// The limits of a budget shared by a run and the agents it calls ([`AgentRuntime::tree_budget`](crate::runtime::AgentRuntime::tree_budget)).
/// Without a limit set, nothing is limited.
///
/// ```
/// use agent_runtime::TreeBudget;
/// let budget = TreeBudget::new().steps(40).tokens(200_000);
/// assert_eq!(budget.step_limit(), Some(40));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeBudget {
    steps: Option<usize>,
    tokens: Option<u64>,
}

impl TreeBudget {
    /// No limits yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The most model calls of the whole tree (at least 1).
    pub fn steps(mut self, steps: usize) -> Self {
        self.steps = Some(steps.max(1));
        self
    }

    /// The most tokens of the whole tree.
    pub fn tokens(mut self, tokens: u64) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// The step limit, if one is set.
    pub fn step_limit(&self) -> Option<usize> {
        self.steps
    }

    /// The token limit, if one is set.
    pub fn token_limit(&self) -> Option<u64> {
        self.tokens
    }
}

/// A tree budget's live count, shared by the runs of the tree.
#[derive(Debug)]
pub(crate) struct TreeCounter {
    limits: TreeBudget,
    steps: AtomicUsize,
    tokens: AtomicU64,
}

impl TreeCounter {
    /// A counter for a run with these `limits` (its runtime's tree budget, if any) that starts
    /// from `state`.
    pub(in crate::runtime) fn start(
        limits: Option<TreeBudget>,
        state: &RunState,
    ) -> Option<Arc<TreeCounter>> {
        let limits = limits?;
        Some(Arc::new(TreeCounter {
            limits,
            steps: AtomicUsize::new(state.steps + state.agent_steps),
            tokens: AtomicU64::new(state.usage.total()),
        }))
    }

    /// Takes one step, unless none is left: `Err` names the budget that ran out.
    fn take_step(&self) -> Result<(), Budget> {
        if let Some(limit) = self.limits.tokens {
            let used = self.tokens.load(Ordering::Acquire);
            if used >= limit {
                return Err(Budget::TreeTokens { limit, used });
            }
        }
        let Some(limit) = self.limits.steps else {
            self.steps.fetch_add(1, Ordering::AcqRel);
            return Ok(());
        };
        self.steps
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |taken| {
                (taken < limit).then_some(taken + 1)
            })
            .map(|_| ())
            .map_err(|_| Budget::TreeSteps { limit })
    }

    /// Gives back a step taken and not used.
    fn give_back(&self) {
        self.steps.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The ability: before each model call, a step from every tree budget above the run; after it,
/// its tokens.
pub(in crate::runtime) struct TreeBudgets {
    pub(in crate::runtime) counters: Vec<Arc<TreeCounter>>,
}

impl Ability for TreeBudgets {
    fn before_model(&self, _state: &RunState) -> Option<FinishReason> {
        for (taken, counter) in self.counters.iter().enumerate() {
            if let Err(budget) = counter.take_step() {
                for counter in &self.counters[..taken] {
                    counter.give_back();
                }
                return Some(crate::runtime::finish::finish_checks::tree_budget(budget));
            }
        }
        None
    }

    fn after_model(&self, usage: Usage) {
        for counter in &self.counters {
            counter.tokens.fetch_add(usage.total(), Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(steps: usize, tokens: Option<u64>) -> Arc<TreeCounter> {
        Arc::new(TreeCounter {
            limits: TreeBudget {
                steps: Some(steps),
                tokens,
            },
            steps: AtomicUsize::new(0),
            tokens: AtomicU64::new(0),
        })
    }

    #[test]
    fn threads_racing_for_steps_take_exactly_the_limit() {
        let shared = counter(100, None);
        let taken = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    while shared.take_step().is_ok() {
                        taken.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(taken.load(Ordering::Relaxed), 100);
        assert_eq!(
            shared.take_step(),
            Err(Budget::TreeSteps { limit: 100 }),
            "once spent, it stays spent"
        );
    }

    #[test]
    fn a_step_refused_by_one_budget_is_given_back_to_the_others() {
        let outer = counter(10, None);
        let inner = counter(1, None);
        let budgets = TreeBudgets {
            counters: vec![outer.clone(), inner.clone()],
        };
        let state = RunState::new(Vec::new(), false);
        assert!(budgets.before_model(&state).is_none());
        assert_eq!(
            budgets.before_model(&state),
            Some(FinishReason::BudgetExceeded(Budget::TreeSteps { limit: 1 }))
        );
        assert_eq!(
            outer.steps.load(Ordering::Acquire),
            1,
            "the refused step came back"
        );
    }

    #[test]
    fn spent_tokens_stop_the_next_call() {
        let shared = counter(10, Some(50));
        let budgets = TreeBudgets {
            counters: vec![shared],
        };
        let state = RunState::new(Vec::new(), false);
        assert!(budgets.before_model(&state).is_none());
        budgets.after_model(Usage {
            input_tokens: 40,
            output_tokens: 20,
            ..Usage::default()
        });
        assert_eq!(
            budgets.before_model(&state),
            Some(FinishReason::BudgetExceeded(Budget::TreeTokens {
                limit: 50,
                used: 60
            }))
        );
    }
}
