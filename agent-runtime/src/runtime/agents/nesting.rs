//! Where a run sits among agents that call agents: its [`Nesting`] (put in every run's context,
//! so an [`SubAgent`](crate::runtime::SubAgent) called in it knows its parent), the sink that carries
//! a child's events up to its parent's sinks ([`Forward`]), and the ability that adds the
//! children's usage to the run's own ([`ChildUsage`]). A model call a skill reports
//! ([`agent_llm::report_model_use`]) is counted the same way, as a child of one step
//! ([`Nesting::model_use_reporter`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::event::{AgentEvent, EventSink};
use crate::runtime::abilities::ability::Ability;
use crate::runtime::step::run_state::RunState;
use agent_llm::ModelUseReporter;
use agent_llm::message::Usage;
use agent_llm::price::{Cost, PriceTable};

/// A run's place among nested agents, in its context as an extension.
#[derive(Clone)]
pub(crate) struct Nesting {
    /// The agents from the outermost run to this one (empty at the top).
    pub(crate) path: Vec<String>,
    /// This run's sinks: a child's events go to them, wrapped in [`AgentEvent::Nested`].
    pub(crate) sinks: Vec<Arc<dyn EventSink>>,
    /// What the children that ran in this run used, not yet counted: (path below this run,
    /// tokens of that agent alone), and the total to add to this run's usage.
    pub(crate) used: Arc<Mutex<ChildrenUsed>>,
    /// The run's journal, when it is durable: a child records its own steps in it.
    pub(crate) journal: Option<Arc<dyn crate::runtime::step::journal::Journal>>,
    /// The tree budgets this run draws from (`abilities/tree_budget.rs`): a child draws from them too.
    pub(crate) tree: Vec<Arc<crate::runtime::abilities::tree_budget::TreeCounter>>,
}

/// Tokens children used, waiting to be counted by the run they ran in.
#[derive(Default)]
pub(crate) struct ChildrenUsed {
    /// Everything, children's children included.
    pub(crate) total: Usage,
    /// Each agent's own tokens, by its path below the run.
    pub(crate) by_agent: BTreeMap<String, Usage>,
    /// Model calls, children's children included.
    pub(crate) steps: usize,
    /// What the calls cost, children's children included.
    pub(crate) cost: Cost,
}

impl ChildrenUsed {
    /// Adds a child's run (or the part of it since it last suspended), as [`Nesting::report`]
    /// counts it.
    fn add(
        &mut self,
        child: &str,
        total: Usage,
        by_agent: BTreeMap<String, Usage>,
        steps: usize,
        cost: Cost,
    ) {
        self.total += total;
        self.cost += cost;
        self.steps += steps;
        for (below, usage) in by_agent {
            let path = if below.is_empty() {
                child.to_owned()
            } else {
                format!("{child} › {below}")
            };
            *self.by_agent.entry(path).or_default() += usage;
        }
    }
}

impl Nesting {
    /// Counts a child's run (or the part of it since it last suspended): `total` with its own
    /// children, each agent's own tokens by path below the child (`""` for the child itself), and
    /// the model calls of all of them.
    pub(crate) fn report(
        &self,
        child: &str,
        total: Usage,
        by_agent: BTreeMap<String, Usage>,
        steps: usize,
        cost: Cost,
    ) {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.add(child, total, by_agent, steps, cost);
    }

    /// The reporter this run's skills report their own model calls to: each counts like a child
    /// of one model call, by its source, priced at `prices` (`None`: the built-in table). One
    /// per run, not per call: a skill's context is a clone of the run's.
    pub(crate) fn model_use_reporter(&self, prices: Option<Arc<PriceTable>>) -> ModelUseReporter {
        let used = self.used.clone();
        let reporter = ModelUseReporter::new(move |source: &str, usage: Usage, cost: Cost| {
            let mut used = used.lock().unwrap_or_else(|p| p.into_inner());
            used.add(
                source,
                usage,
                BTreeMap::from([(String::new(), usage)]),
                1,
                cost,
            );
        });
        match prices {
            Some(table) => reporter.with_prices(table),
            None => reporter.with_static_prices(PriceTable::builtin()),
        }
    }
}

/// The sink a child run sends its events to: each goes on to the parent's sinks as
/// [`AgentEvent::Nested`], with the child's name first in its path.
pub(crate) struct Forward {
    /// The child's name, as the parent calls it.
    pub(crate) agent: String,
    /// The id of the parent's call that runs the child.
    pub(crate) call: String,
    /// The parent's sinks.
    pub(crate) to: Vec<Arc<dyn EventSink>>,
}

impl EventSink for Forward {
    fn send(&self, event: &AgentEvent) {
        let wrapped = match event {
            AgentEvent::Nested { path, calls, event } => AgentEvent::Nested {
                path: std::iter::once(self.agent.clone())
                    .chain(path.iter().cloned())
                    .collect(),
                calls: std::iter::once(self.call.clone())
                    .chain(calls.iter().cloned())
                    .collect(),
                event: event.clone(),
            },
            other => AgentEvent::Nested {
                path: vec![self.agent.clone()],
                calls: vec![self.call.clone()],
                event: Box::new(other.clone()),
            },
        };
        for sink in &self.to {
            sink.send(&wrapped);
        }
    }
}

/// Adds what the children that ran in a turn used to the run's usage (so budgets count the whole
/// tree) and to its per-agent record.
pub(in crate::runtime) struct ChildUsage {
    pub(in crate::runtime) used: Arc<Mutex<ChildrenUsed>>,
}

impl Ability for ChildUsage {
    fn after_calls(&self, state: &mut RunState) {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        if used.by_agent.is_empty()
            && used.total.total() == 0
            && used.steps == 0
            && used.cost == Cost::default()
        {
            return;
        }
        state.usage += std::mem::take(&mut used.total);
        state.cost += std::mem::take(&mut used.cost);
        state.agent_steps += std::mem::take(&mut used.steps);
        for (path, usage) in std::mem::take(&mut used.by_agent) {
            *state.agents.entry(path).or_default() += usage;
        }
    }
}
