//! Plan mode, as an [`Ability`]: only read-only skills run (a call to any other is denied with an
//! explanation, and counts as a denial), and the model's first finished answer without calls is
//! its plan: the run ends with [`FinishReason::PlanPending`](crate::runtime::FinishReason::PlanPending).
//! A run has it while its state is in plan mode; approving the plan turns that off.

use crate::runtime::abilities::ability::{Ability, Answered, Ending};
use crate::runtime::finish::finish_checks;
use crate::runtime::step::run_state::RunState;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::error::SkillError;
use agent_core::registry::Registry;

/// Plan mode over a registry, whose metadata says which skills only read.
pub(in crate::runtime) struct PlanMode<'a> {
    pub(in crate::runtime) registry: &'a Registry,
}

impl Ability for PlanMode<'_> {
    fn take_calls(
        &self,
        _state: &mut RunState,
        calls: &[ToolCall],
        answers: &mut [Option<ToolResult>],
    ) -> Option<Ending> {
        for (call, answer) in calls.iter().zip(answers) {
            // An unknown name is left to the registry, which answers it with suggestions.
            let changes = self
                .registry
                .metadata(&call.name)
                .is_some_and(|m| !m.is_read_only);
            if answer.is_none() && changes {
                *answer = Some(ToolResult::new(
                    call,
                    Err(SkillError::Denied(format!(
                        "plan mode: `{}` changes things and cannot run yet. Use read-only tools to \
                         investigate, then present your plan as your answer, without tool calls",
                        call.name
                    ))),
                ));
            }
        }
        None
    }

    fn on_answer(&self, _state: &mut RunState, text: &str) -> Option<Answered> {
        Some(Answered::End(Ending {
            finish: finish_checks::plan_pending(text),
            answer: None,
        }))
    }
}
