//! Model calls a skill makes on the run's behalf, counted in the run: the [`ModelUseReporter`] a
//! run puts in the [`SkillContext`] it gives its skills, and [`report_model_use`], which a skill
//! calls after it asked a model (an MCP server's sampling request answered by the application's
//! model, a skill that summarizes with a model of its own).
//!
//! A run of `agent-runtime` adds what is reported to its usage, its cost and its per-agent
//! record (`RunOutcome::agents`, under the `source` given), and counts it as one model call in
//! its `agent_steps`, after the turn's tool calls, the way it counts a sub-agent's: so its
//! budgets (`max_tokens_total`, `max_cost`, the tree budgets) see it. In a durable run the uses
//! a tool call reported are journaled with its result and counted from there, so a replay
//! counts them once, as the first attempt did. A skill called outside a run
//! (by a chat, by an MCP server serving the registry) has no reporter: [`report_model_use`] says
//! so by returning `false`, and nothing is counted anywhere.
//!
//! ```
//! use agent_core::SkillContext;
//! use agent_llm::{Cost, ModelUseReporter, PriceTable, Usage, report_model_use};
//! use std::sync::{Arc, Mutex};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let reporter = ModelUseReporter::new({
//!     let seen = seen.clone();
//!     move |source: &str, usage: Usage, _cost: Cost| {
//!         seen.lock().unwrap().push((source.to_owned(), usage.total()))
//!     }
//! });
//! let ctx = SkillContext::default().with_extension(reporter);
//!
//! // Inside a skill, after asking a model:
//! let usage = Usage { input_tokens: 12, output_tokens: 5, ..Usage::default() };
//! let cost = ctx
//!     .extension::<ModelUseReporter>()
//!     .map_or(Cost::UNPRICED, |r| r.cost("anthropic", Some("unknown-model"), &usage));
//! assert_eq!(cost, Cost::UNPRICED, "a reporter without a price table prices nothing");
//! assert!(report_model_use(&ctx, "summarizer", usage, cost));
//! assert_eq!(*seen.lock().unwrap(), [("summarizer".to_owned(), 17)]);
//!
//! // Outside a run nothing listens:
//! assert!(!report_model_use(&SkillContext::default(), "summarizer", usage, cost));
//! ```

use std::sync::Arc;

use agent_core::SkillContext;

use crate::message::Usage;
use crate::price::{Cost, PriceTable};

/// What a [`ModelUseReporter`] calls with each use: the source (who asked the model, e.g.
/// `mcp sampling › github`), the tokens and their cost.
pub type ModelUseFn = Arc<dyn Fn(&str, Usage, Cost) + Send + Sync>;

/// Where a skill reports a model call it made on the run's behalf; a run puts one in the
/// context it gives its skills (see the [module docs](self)). Cloning it clones two `Arc`s.
#[derive(Clone)]
pub struct ModelUseReporter {
    report: ModelUseFn,
    prices: Prices,
}

/// The price table a reporter prices with, if any.
#[derive(Clone)]
enum Prices {
    None,
    Static(&'static PriceTable),
    Shared(Arc<PriceTable>),
}

impl ModelUseReporter {
    /// A reporter that hands each use to `report`, with no price table: [`ModelUseReporter::cost`]
    /// says every call is unpriced.
    pub fn new(report: impl Fn(&str, Usage, Cost) + Send + Sync + 'static) -> Self {
        ModelUseReporter {
            report: Arc::new(report),
            prices: Prices::None,
        }
    }

    /// The same reporter, pricing with `table` (the run's own prices).
    pub fn with_prices(mut self, table: Arc<PriceTable>) -> Self {
        self.prices = Prices::Shared(table);
        self
    }

    /// The same reporter, pricing with a table that lives for the whole program (such as
    /// [`PriceTable::builtin`]).
    pub fn with_static_prices(mut self, table: &'static PriceTable) -> Self {
        self.prices = Prices::Static(table);
        self
    }

    /// What a call to `model` from `provider` that used `usage` costs at the run's prices:
    /// [`Cost::UNPRICED`] (never $0) when the model is not named, the reporter has no table,
    /// or the table has no price for it.
    pub fn cost(&self, provider: &str, model: Option<&str>, usage: &Usage) -> Cost {
        let table = match &self.prices {
            Prices::None => return Cost::UNPRICED,
            Prices::Static(table) => *table,
            Prices::Shared(table) => table,
        };
        match model {
            Some(model) => table.cost(provider, model, usage),
            None => Cost::UNPRICED,
        }
    }

    /// A reporter with the same prices that hands each use to `report` instead (to hold uses
    /// back, record them, and report them later).
    pub fn reporting_to(&self, report: impl Fn(&str, Usage, Cost) + Send + Sync + 'static) -> Self {
        ModelUseReporter {
            report: Arc::new(report),
            prices: self.prices.clone(),
        }
    }

    /// Reports one model call: `source` says who made it, `usage` and `cost` what it took.
    pub fn report(&self, source: &str, usage: Usage, cost: Cost) {
        (self.report)(source, usage, cost);
    }
}

impl std::fmt::Debug for ModelUseReporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prices = match self.prices {
            Prices::None => "none",
            Prices::Static(_) | Prices::Shared(_) => "a table",
        };
        f.debug_struct("ModelUseReporter")
            .field("prices", &prices)
            .finish_non_exhaustive()
    }
}

/// Reports a model call a skill made on the run's behalf to the run `ctx` belongs to: `true` when
/// a run counts it, `false` when no run listens (the skill was called outside a run), and then
/// nothing is counted. See the [module docs](self).
pub fn report_model_use(ctx: &SkillContext, source: &str, usage: Usage, cost: Cost) -> bool {
    match ctx.extension::<ModelUseReporter>() {
        Some(reporter) => {
            reporter.report(source, usage, cost);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::price::ModelPrice;
    use std::sync::Mutex;

    #[test]
    fn a_priced_model_is_priced_and_an_unknown_one_is_unpriced_never_free() {
        let table = PriceTable::empty().with_model("m-1", ModelPrice::per_million(1.0, 2.0));
        let reporter =
            ModelUseReporter::new(|_: &str, _: Usage, _: Cost| {}).with_prices(Arc::new(table));
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            ..Usage::default()
        };
        let priced = reporter.cost("any", Some("m-1"), &usage);
        assert!(priced.is_complete());
        assert_eq!(priced.total().as_dollars(), 3.0);
        assert_eq!(reporter.cost("any", Some("m-2"), &usage), Cost::UNPRICED);
        assert_eq!(reporter.cost("any", None, &usage), Cost::UNPRICED);
    }

    #[test]
    fn each_report_reaches_the_reporter_with_its_source() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let reporter = ModelUseReporter::new({
            let seen = seen.clone();
            move |source: &str, usage: Usage, cost: Cost| {
                seen.lock().unwrap().push((
                    source.to_owned(),
                    usage.output_tokens,
                    cost.unpriced_calls,
                ))
            }
        });
        let ctx = SkillContext::default().with_extension(reporter);
        let usage = Usage {
            output_tokens: 7,
            ..Usage::default()
        };
        assert!(report_model_use(&ctx, "a", usage, Cost::UNPRICED));
        assert!(report_model_use(
            &ctx.clone().with_call_id("c1"),
            "b",
            usage,
            Cost::default()
        ));
        assert_eq!(
            *seen.lock().unwrap(),
            [("a".to_owned(), 7, 1), ("b".to_owned(), 7, 0)]
        );
        assert!(!report_model_use(
            &SkillContext::default(),
            "a",
            usage,
            Cost::UNPRICED
        ));
    }
}
