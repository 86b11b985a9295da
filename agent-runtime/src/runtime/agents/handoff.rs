//! Handoffs: a runtime can offer other agents to hand the conversation to
//! ([`AgentRuntime::handoff`]). The model sees a tool `transfer_to_<name>` for each; calling it
//! ends this agent's part, and that agent carries on the same conversation with its own system
//! prompt, skills, model and settings, seeing the transcript (or what the handoff's filter keeps
//! of it). The run's sinks, cancellation and journal stay the first runtime's, so events, budgets'
//! clock and durable steps go on as one run; [`RunOutcome::handoffs`](crate::runtime::RunOutcome::handoffs)
//! says who answered. A run paused in a handed-to agent lists the calls that wait under it
//! (`billing › refund`, as a nested agent's are), and is continued through the first runtime,
//! which follows the state's record of handoffs to it.

use std::sync::Arc;

use serde_json::json;

use crate::runtime::abilities::ability::{Ability, Ending};
use crate::runtime::finish::agent_error::{AgentError, ResumeError};
use crate::runtime::finish::finish_checks;
use crate::runtime::setup::agent_runtime::AgentRuntime;
use crate::runtime::step::run_state::RunState;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::error::SkillError;
use agent_core::schema::ToolDefinition;
use agent_core::skill::SkillOutput;
use agent_llm::message::Message;

/// What of the transcript the agent handed to sees ([`AgentRuntime::handoff_filtered`]).
pub type TranscriptFilter = Arc<dyn Fn(&[Message]) -> Vec<Message> + Send + Sync>;

/// An agent a runtime may hand the conversation to .
#[derive(Clone)]
pub(crate) struct Handoff {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) runtime: Arc<AgentRuntime>,
    pub(crate) filter: Option<TranscriptFilter>,
}

/// The prefix of a handoff's tool name.
const TRANSFER: &str = "transfer_to_";

impl AgentRuntime {
    /// Offers `agent` as a handoff named `name`: the model sees `transfer_to_<name>`, described
    /// by `description`, and calling it hands the conversation over.
    pub fn handoff(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        agent: AgentRuntime,
    ) -> Self {
        self.handoff_filtered(name, description, agent, None)
    }

    /// The handoff offered under `name`.
    pub(in crate::runtime) fn handoff_named(&self, name: &str) -> Option<&Handoff> {
        self.settings.handoffs.iter().find(|h| h.name == name)
    }

    /// Like [`AgentRuntime::handoff`], and the agent sees `filter(transcript)` instead of the
    /// whole conversation (e.g. only the user's messages, or the last few turns).
    pub fn handoff_filtered(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        agent: AgentRuntime,
        filter: Option<TranscriptFilter>,
    ) -> Self {
        self.settings.handoffs.push(Handoff {
            name: name.into(),
            description: description.into(),
            runtime: Arc::new(agent),
            filter,
        });
        self
    }
}

/// The runtime whose turn it is in `state`: `rt`, followed along the handoffs the state records.
/// The first runtime's sinks, cancellation, journal and place among nested agents are kept.
pub(in crate::runtime) fn active(
    rt: &AgentRuntime,
    handoffs: &[String],
) -> Result<AgentRuntime, AgentError> {
    let mut active = rt.clone();
    for name in handoffs {
        let next = active
            .handoff_named(name)
            .ok_or_else(|| ResumeError::UnknownHandoff {
                agent: name.clone(),
            })?;
        active = inherit(rt, &next.runtime);
    }
    Ok(active)
}

/// `agent` as it runs in `rt`'s run: its own model, skills and settings, `rt`'s sinks,
/// cancellation, journal and nesting.
fn inherit(rt: &AgentRuntime, agent: &AgentRuntime) -> AgentRuntime {
    let mut agent = agent.clone();
    agent.settings.sinks = rt.settings.sinks.clone();
    agent.settings.cancellation = rt.settings.cancellation.clone();
    agent.settings.journal = rt.settings.journal.clone();
    agent.ancestry.path = rt.ancestry.path.clone();
    agent.ancestry.tree = rt.ancestry.tree.clone();
    agent.settings.tree_budget = rt.settings.tree_budget.or(agent.settings.tree_budget);
    agent
}

/// Hands the conversation over in `state` to `name` (offered by `rt`, the runtime whose turn
/// ended): the transcript as the new agent sees it; the state asks its model next.
pub(in crate::runtime) fn hand_over(rt: &AgentRuntime, name: &str, state: &mut RunState) {
    if let Some(handoff) = rt.handoff_named(name)
        && let Some(filter) = &handoff.filter
    {
        state.transcript = filter(&state.transcript);
    }
    state.handoffs.push(name.to_owned());
}

/// The ability: `transfer_to_<name>` tools, and a call to one ends this agent's part.
pub(in crate::runtime) struct Handoffs<'a> {
    pub(in crate::runtime) offered: &'a [Handoff],
}

impl Ability for Handoffs<'_> {
    fn tools(&self, definitions: &mut Vec<ToolDefinition>) {
        for handoff in self.offered {
            definitions.push(ToolDefinition {
                name: format!("{TRANSFER}{}", handoff.name),
                description: format!(
                    "Hand the conversation to {}: {} It carries on from here, and you stop.",
                    handoff.name, handoff.description
                ),
                input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
                output_schema: None,
            });
        }
    }

    /// The first transfer call of the turn is answered and ends this agent's part; the turn's
    /// other calls are answered as not run (the conversation has moved on).
    fn take_calls(
        &self,
        state: &mut RunState,
        calls: &[ToolCall],
        answers: &mut [Option<ToolResult>],
    ) -> Option<Ending> {
        let (at, to) =
            calls
                .iter()
                .zip(answers.iter())
                .enumerate()
                .find_map(|(at, (call, answer))| {
                    let name = call.name.strip_prefix(TRANSFER)?;
                    (answer.is_none() && self.offered.iter().any(|h| h.name == name))
                        .then_some((at, name))
                })?;
        for (index, (call, answer)) in calls.iter().zip(answers.iter_mut()).enumerate() {
            if answer.is_some() {
                continue;
            }
            *answer = Some(if index == at {
                ToolResult::new(call, Ok(SkillOutput::Text(format!("Transferred to {to}."))))
            } else {
                ToolResult::new(
                    call,
                    Err(SkillError::tool(format!(
                        "not run: the conversation was handed to {to}"
                    ))),
                )
            });
        }
        state.handing_to = Some(to.to_owned());
        Some(Ending {
            finish: finish_checks::answered(),
            answer: None,
        })
    }
}
