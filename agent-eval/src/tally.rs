//! What a run spent, counted from its events as it goes: the steps, tokens and cost of a run that
//! fails (a provider error, the time limit) are known too, though it returns no outcome.

use std::sync::{Arc, Mutex};

use agent_llm::{Cost, Usage};
use agent_runtime::{AgentEvent, EventSink};

/// The last [`AgentEvent::Usage`] totals of one run, as an [`EventSink`].
#[derive(Debug, Default)]
pub(crate) struct Tally {
    seen: Mutex<Spent>,
}

/// Steps, tokens and cost so far.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Spent {
    pub(crate) steps: usize,
    pub(crate) usage: Usage,
    pub(crate) cost: Cost,
}

impl Tally {
    /// A sink for a runtime, counting into this tally.
    pub(crate) fn sink(self: &Arc<Self>) -> impl EventSink + 'static {
        let tally = self.clone();
        move |event: &AgentEvent| tally.send(event)
    }

    /// What the run had spent by its last model call.
    pub(crate) fn spent(&self) -> Spent {
        *self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl EventSink for Tally {
    fn send(&self, event: &AgentEvent) {
        if let AgentEvent::Usage {
            step,
            total,
            total_cost,
            ..
        } = event
        {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            *seen = Spent {
                steps: *step,
                usage: *total,
                cost: *total_cost,
            };
        }
    }
}
