//! Calls a skill makes of its own, through the run's registry ([`InnerCalls`]): what code mode's
//! `run_code` uses so that each call of a program is a step of the run's journal in a durable
//! run, and its events reach the run's sinks nested under the call that made it.

use agent_core::call::{ToolCall, ToolResult};
use agent_core::context::SkillContext;
use agent_core::registry::Registry;

use crate::event::AgentEvent;
use crate::runtime::agents::nesting::Nesting;
use crate::runtime::step::journal::JournalStep;
use crate::runtime::step::journaled::tool_step;

/// The calls a skill makes inside its own call (code mode's program calling skills), run through
/// the run it is called in: named like [`PendingCall::inside`](agent_core::PendingCall::inside),
/// a call inside a call, whose events nest under the outer one and whose steps are journaled as
/// its. Outside a run (a registry called directly, an MCP server) it runs calls as they are and
/// reports nothing.
///
/// - **Events.** Each call is reported to the run's sinks as [`AgentEvent::Nested`], under the
///   path of the skill that made it (`["run_code"]`): a [`AgentEvent::ToolCall`] when it
///   starts and a [`AgentEvent::ToolResult`] when it ends. Their `step` is 0: they belong to
///   the outer call, not to a step of their own.
/// - **Durable runs.** In a run with a journal ([`AgentRuntime::journal`](
///   crate::runtime::AgentRuntime::journal)) each call is a step of the journal (named
///   `tool NAME (OUTER/ID)`), so a replay answers it from the journal instead of running it
///   again. Steps must arrive in the same order on a replay: make the calls one at a time, in an
///   order that does not depend on timing ([`InnerCalls::is_durable`] says when), and give the
///   skill [`Skill::journals_its_steps`](agent_core::Skill::journals_its_steps), so its own call
///   is not a step (steps do not nest).
pub struct InnerCalls<'a> {
    nesting: Option<&'a Nesting>,
    /// The path the events are reported under: the skill that makes the calls.
    skill: String,
    /// The id of the call that makes them, in the run.
    outer: String,
}

impl<'a> InnerCalls<'a> {
    /// The calls `skill` makes in `ctx`, the context of its own call.
    pub fn of(ctx: &'a SkillContext, skill: &str) -> Self {
        InnerCalls {
            nesting: ctx.extension::<Nesting>(),
            skill: skill.to_owned(),
            outer: ctx.call_id().unwrap_or_default().to_owned(),
        }
    }

    /// Whether the run is durable: its calls must then be made one at a time, in a fixed order.
    pub fn is_durable(&self) -> bool {
        self.nesting.is_some_and(|n| n.journal.is_some())
    }

    /// Runs `call` through `registry` in `ctx` (the context for the inner call), reporting it,
    /// and in a durable run as a journaled step.
    pub async fn run(
        &self,
        registry: &Registry,
        call: &ToolCall,
        ctx: &SkillContext,
    ) -> ToolResult {
        self.emit(|| AgentEvent::ToolCall {
            step: 0,
            call: call.clone(),
        });
        let journal = self.nesting.and_then(|n| n.journal.as_deref());
        let result = match journal {
            None => registry.run_one(call, ctx).await,
            Some(journal) => {
                let step = JournalStep::Tool {
                    step: 0,
                    call_id: format!("{}/{}", self.outer, call.id),
                    name: call.name.clone(),
                };
                tool_step(journal, step, registry, call, ctx).await
            }
        };
        self.emit(|| AgentEvent::ToolResult {
            step: 0,
            result: result.clone(),
        });
        result
    }

    fn emit(&self, event: impl FnOnce() -> AgentEvent) {
        let Some(nesting) = self.nesting.filter(|n| !n.sinks.is_empty()) else {
            return;
        };
        let event = AgentEvent::Nested {
            path: vec![self.skill.clone()],
            calls: vec![self.outer.clone()],
            event: Box::new(event()),
        };
        match &nesting.journal {
            Some(journal) => journal.emit(&event, &nesting.sinks),
            None => {
                for sink in &nesting.sinks {
                    sink.send(&event);
                }
            }
        }
    }
}
