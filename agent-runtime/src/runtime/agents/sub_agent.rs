//! An agent is a skill: [`AgentRuntime::into_skill`] makes a runtime a [`Skill`] another
//! runtime's model can call, with a goal (or a typed input) in and the child's answer (or its
//! typed value) out.
//!
//! The child runs in the parent's call: its events reach the parent's sinks as
//! [`AgentEvent::Nested`](crate::AgentEvent::Nested) with the path of agents, its `tracing` spans
//! sit under the parent's `execute_tool` span, its tokens are added to the parent's usage (and
//! kept by agent in [`RunOutcome::agents`](crate::runtime::RunOutcome::agents)), and cancelling the parent
//! cancels it; in a durable run, its model and tool calls are steps of the parent's journal, in
//! order, so after a crash nothing the child journaled runs again. A child that pauses for a decision suspends the call
//! ([`SkillError::Suspended`]): the parent pauses too, listing the child's pending calls by their
//! path (`researcher › delete_branch`, id `p1/c1`), with the child's state inside its own; a
//! decision for such a call continues the child, whose answer becomes the parent's tool result.
//!
//! A runtime's registry is complete before the runtime exists, and `into_skill` takes the runtime
//! it wraps, so an agent reaches itself only another way (a skill of the user's that finds it
//! later, a remote agent calling back); a depth limit ([`SubAgent::max_depth`], 8 by default)
//! ends such a chain.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::runtime::agents::nesting::{Forward, Nesting};
use crate::runtime::finish::finish_reason::FinishReason;
use crate::runtime::finish::output_type::OutputType;
use crate::runtime::setup::agent_runtime::AgentRuntime;
use crate::runtime::step::run_state::RunState;
use agent_core::context::SkillContext;
use agent_core::error::SkillError;
use agent_core::pending::Suspension;
use agent_core::skill::{Skill, SkillOutput};
use agent_llm::message::Usage;

/// The input of an agent used as a skill ([`SubAgent`]'s default), named for what it holds and
/// what the calling model fills in: the goal, `{"goal": "..."}`, the child's first message.
/// [`SubAgent::with_input`] chooses a typed input instead.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Goal {
    /// What the agent should do, said in full: it sees nothing else of this conversation.
    pub goal: String,
}

/// A runtime as a skill ([`AgentRuntime::into_skill`]). `I` is its input: [`Goal`] unless
/// [`SubAgent::with_input`] chose another.
pub struct SubAgent<I = Goal> {
    runtime: AgentRuntime,
    name: String,
    description: String,
    output: Option<OutputType>,
    output_schema: Option<Value>,
    max_depth: usize,
    read_only: bool,
    concurrency_safe: bool,
    goal: fn(I) -> String,
    input: PhantomData<fn(I)>,
}

impl AgentRuntime {
    /// This runtime as a skill named `name` (what the parent's model calls) and described by
    /// `description` (what it reads about it). Its input is a [`Goal`]; its output the child's
    /// last text, with the media of its last message after it (an image its model drew). It is read-only, and may run beside other calls, when every skill of its own
    /// registry may; a registry with a [`LiveSkills`](agent_core::LiveSkills) set may gain any
    /// skill later, so it is neither.
    pub fn into_skill(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> SubAgent<Goal> {
        let registry = &self.settings.registry;
        // A live set may gain any skill later, so a registry with one is taken for neither.
        let all = |flag: fn(&agent_core::SkillMetadata) -> bool| {
            !registry.has_live_skills()
                && registry
                    .names()
                    .filter_map(|name| registry.metadata(&name))
                    .all(|m| flag(&m))
        };
        let read_only = all(|m| m.is_read_only);
        let concurrency_safe = all(|m| m.is_concurrency_safe);
        SubAgent {
            runtime: self,
            name: name.into(),
            description: description.into(),
            output: None,
            output_schema: None,
            max_depth: 8,
            read_only,
            concurrency_safe,
            goal: |goal: Goal| goal.goal,
            input: PhantomData,
        }
    }
}

impl<I> SubAgent<I> {
    /// A typed input: the parent's model fills in `T` (its JSON Schema is the tool's input
    /// schema), and the child's goal is that value as JSON.
    pub fn with_input<T: Serialize + DeserializeOwned + JsonSchema + Send + 'static>(
        self,
    ) -> SubAgent<T> {
        SubAgent {
            runtime: self.runtime,
            name: self.name,
            description: self.description,
            output: self.output,
            output_schema: self.output_schema,
            max_depth: self.max_depth,
            read_only: self.read_only,
            concurrency_safe: self.concurrency_safe,
            goal: |input: T| serde_json::to_string(&input).unwrap_or_default(),
            input: PhantomData,
        }
    }

    /// A typed output: the child's run is typed with `T` ([`RunRequest::typed`](
    /// crate::runtime::RunRequest::typed)), the skill answers with the checked value, and `T`'s schema is
    /// its output schema.
    pub fn with_output<T: DeserializeOwned + JsonSchema>(mut self) -> Self {
        self.output_schema = Some(agent_core::schema::schema_for_output::<T>());
        self.output = Some(OutputType::of::<T>());
        self
    }

    /// The deepest a chain of agents may go through this one (8 by default): a call that would
    /// run it deeper is an error result, and nothing runs.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }
}

impl<I> std::fmt::Debug for SubAgent<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubAgent")
            .field("name", &self.name)
            .field("typed_output", &self.output.is_some())
            .field("max_depth", &self.max_depth)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<I: DeserializeOwned + JsonSchema + Send + 'static> Skill for SubAgent<I> {
    type Input = I;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn is_read_only(&self) -> bool {
        self.read_only
    }

    fn is_concurrency_safe(&self) -> bool {
        self.concurrency_safe
    }

    fn output_schema(&self) -> Option<Value> {
        self.output_schema.clone()
    }

    /// In a durable run the child's model and tool calls are steps of the run's journal.
    fn journals_its_steps(&self) -> bool {
        true
    }

    async fn run(&self, input: I, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        let parent = ctx.extension::<Nesting>();
        let mut path = parent.map(|n| n.path.clone()).unwrap_or_default();
        if path.len() >= self.max_depth {
            return Err(SkillError::tool(format!(
                "not run: `{}` would be agent number {} in the chain `{}`, over its limit of {}",
                self.name,
                path.len() + 1,
                path.join(" › "),
                self.max_depth
            )));
        }
        path.push(self.name.clone());
        let mut child = self.runtime.clone();
        child.ancestry.path = path;
        child.settings.cancellation = ctx.cancellation().child_token();
        child.ancestry.parent_key = ctx.idempotency_key().map(str::to_owned);
        if let Some(parent) = parent {
            child.settings.journal = parent.journal.clone().or(child.settings.journal);
            child.ancestry.tree = parent.tree.clone();
        }
        if let Some(parent) = parent {
            child.settings.sinks.push(Arc::new(Forward {
                agent: self.name.clone(),
                call: ctx.call_id().unwrap_or_default().to_owned(),
                to: parent.sinks.clone(),
            }));
        }
        // What the child had used when it suspended was counted then: only the rest is new.
        let (request, before) = match ctx.take_resumption() {
            Some(mut resumption) => {
                let decisions = resumption.call_refs();
                let kept = std::mem::take(&mut resumption.state);
                let state: RunState = serde_json::from_value(kept).map_err(|e| {
                    SkillError::tool(format!(
                        "cannot continue `{}`: its kept state does not read back: {e}",
                        self.name
                    ))
                })?;
                let before = Used {
                    total: state.usage,
                    cost: state.cost,
                    agents: state.agents.clone(),
                    steps: state.steps + state.agent_steps,
                };
                (child.continue_paused(state, decisions), before)
            }
            None => (child.run((self.goal)(input)), Used::default()),
        };
        let request = match &self.output {
            Some(output) => request.output(output.clone()),
            None => request,
        };
        let outcome = request.await.map_err(|error| {
            SkillError::tool(format!("the agent `{}` failed: {error}", self.name))
        })?;
        if let Some(parent) = parent {
            let (total, by_agent) = since(&before, outcome.usage, &outcome.agents);
            let steps = (outcome.steps + outcome.agent_steps).saturating_sub(before.steps);
            let cost = outcome.cost.since(&before.cost);
            parent.report(&self.name, total, by_agent, steps, cost);
        }
        match outcome.finish {
            FinishReason::NoMoreToolCalls => Ok(match outcome.output {
                Some(value) => SkillOutput::json(value),
                None => answer(outcome.final_text, outcome.transcript.last()),
            }),
            FinishReason::AwaitingApproval { pending } => {
                let state = outcome.state.ok_or_else(|| {
                    SkillError::tool(format!("`{}` paused without its state", self.name))
                })?;
                let state = serde_json::to_value(&*state).map_err(|e| {
                    SkillError::tool(format!("cannot keep the state of `{}`: {e}", self.name))
                })?;
                Err(SkillError::Suspended(Box::new(Suspension {
                    pending,
                    state,
                })))
            }
            FinishReason::Cancelled => Err(SkillError::Cancelled),
            other => Err(SkillError::tool(format!(
                "the agent `{}` stopped without an answer ({other:?}){}",
                self.name,
                outcome
                    .final_text
                    .map(|text| format!("; its last words: {text}"))
                    .unwrap_or_default()
            ))),
        }
    }
}

/// What a child had used when it last suspended (nothing, for a child that starts).
#[derive(Default)]
struct Used {
    total: Usage,
    cost: agent_llm::Cost,
    agents: BTreeMap<String, Usage>,
    steps: usize,
}

/// What a child used since `before`: the total, and each agent's own tokens by path below the
/// child (`""` for the child).
fn since(
    before: &Used,
    total: Usage,
    agents: &BTreeMap<String, Usage>,
) -> (Usage, BTreeMap<String, Usage>) {
    let minus = |a: Usage, b: Usage| a.since(&b);
    let new_total = minus(total, before.total);
    let mut by_agent = BTreeMap::new();
    let mut below = Usage::default();
    for (path, usage) in agents {
        let new = minus(*usage, before.agents.get(path).copied().unwrap_or_default());
        below += new;
        by_agent.insert(path.clone(), new);
    }
    by_agent.insert(String::new(), minus(new_total, below));
    (new_total, by_agent)
}

/// A child's answer as its parent's call result: its final text, and the media of its final
/// message (an image its model drew) after it, when there is any.
fn answer(text: Option<String>, last: Option<&agent_llm::Message>) -> SkillOutput {
    let text = text.unwrap_or_default();
    match last.filter(|m| m.role == agent_llm::Role::Assistant && !m.parts.is_empty()) {
        Some(last) => {
            let mut content = agent_core::content::Content::text(text);
            content.parts.extend(last.parts.iter().cloned());
            SkillOutput::Content(content)
        }
        None => SkillOutput::Text(text),
    }
}
