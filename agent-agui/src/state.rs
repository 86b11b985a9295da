//! What a run used so far, as the `STATE_SNAPSHOT` events carry it: the run's own totals (its
//! steps, tokens, cost, the calls no price was known for) and, under `agents`, each agent's part
//! by its path (`""` the run's own, `janitor`, `janitor › checker`): its steps, tokens and cost,
//! and the provider and model that answered it last.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use agent_runtime::AgentEvent;

/// A run's use so far.
#[derive(Default)]
pub(crate) struct Used {
    /// The run's own totals, as its last `Usage` said.
    totals: Value,
    /// Each agent's part, by its path.
    agents: BTreeMap<String, AgentUse>,
}

/// One agent's part of a run.
#[derive(Default)]
struct AgentUse {
    steps: u64,
    input_tokens: u64,
    output_tokens: u64,
    cost: agent_llm::Cost,
    provider: String,
    model: Option<String>,
}

impl Used {
    /// Adds a `Usage` event of the agent at `path` (`""`: the run's own); the snapshot now.
    pub(crate) fn add(&mut self, path: &str, event: &AgentEvent) -> Value {
        let AgentEvent::Usage {
            step,
            usage,
            total,
            cost,
            total_cost,
            provider,
            model,
        } = event
        else {
            return self.snapshot();
        };
        if path.is_empty() {
            self.totals = json!({
                "steps": step,
                "inputTokens": total.prompt_tokens(),
                "outputTokens": total.output_tokens,
                "cost": total_cost.total().to_string(),
                "unpricedCalls": total_cost.unpriced_calls,
            });
        }
        let agent = self.agents.entry(path.to_owned()).or_default();
        agent.steps += 1;
        agent.input_tokens += usage.prompt_tokens();
        agent.output_tokens += usage.output_tokens;
        agent.cost += *cost;
        agent.provider.clone_from(provider);
        agent.model.clone_from(model);
        self.snapshot()
    }

    /// The snapshot: the run's totals, and each agent's part under `agents`.
    fn snapshot(&self) -> Value {
        let mut snapshot = if self.totals.is_object() {
            self.totals.clone()
        } else {
            json!({})
        };
        snapshot["agents"] = self
            .agents
            .iter()
            .map(|(path, agent)| {
                let part = json!({
                    "steps": agent.steps,
                    "inputTokens": agent.input_tokens,
                    "outputTokens": agent.output_tokens,
                    "cost": agent.cost.total().to_string(),
                    "provider": agent.provider,
                    "model": agent.model,
                });
                (path.clone(), part)
            })
            .collect::<serde_json::Map<_, _>>()
            .into();
        snapshot
    }
}
