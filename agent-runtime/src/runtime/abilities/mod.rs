//! What a run can do besides the loop: the [`Ability`](ability::Ability) trait and its table
//! (`ability.rs`), and the abilities that are limits or modes: plan mode, the cost budget, tree
//! budgets.

pub(super) mod ability;
pub(super) mod cost_budget;
pub(super) mod plan_mode;
pub(super) mod tree_budget;
