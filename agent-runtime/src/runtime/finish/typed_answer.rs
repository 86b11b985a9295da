//! The typed final answer, as an [`Ability`]: the run ends when the model's answer passes the
//! output's check, a `final_answer` call (tool mode) or a text answer holding the JSON (native and
//! prompted modes). What each mode sends and checks is in `finish/output_type.rs`; the progress (failed
//! answers, native mode's last turn) is in the run's state, so it survives a pause.

use crate::runtime::abilities::ability::{Ability, Answered, Ending};
use crate::runtime::finish::finish_checks;
use crate::runtime::finish::output_type::{FINAL_ANSWER_TOOL, Output, Resolved, Verdict};
use crate::runtime::step::run_state::{OutputProgress, RunState};
use agent_core::call::{ToolCall, ToolResult};
use agent_core::error::SkillError;
use agent_core::schema::ToolDefinition;
use agent_llm::message::{ChatRequest, ToolChoice};

/// A typed run's answer: the output asked for, and how.
pub(in crate::runtime) struct TypedAnswer {
    pub(in crate::runtime) output: Output,
}

impl TypedAnswer {
    /// The run's progress: the state's, which the run's start sets (`step/drive.rs`), or a fresh one.
    fn progress<'s>(&self, state: &'s mut RunState) -> &'s mut OutputProgress {
        state.output.get_or_insert_with(|| self.output.start())
    }

    fn ending(verdict: Verdict) -> Option<Ending> {
        match verdict {
            Verdict::Accept(value) => Some(Ending {
                finish: finish_checks::answered(),
                answer: Some(value),
            }),
            Verdict::Exhausted(finish) => Some(Ending {
                finish,
                answer: None,
            }),
            Verdict::Retry(_) => None,
        }
    }
}

impl Ability for TypedAnswer {
    fn instructions(&self) -> Option<String> {
        self.output.instructions()
    }

    fn tools(&self, definitions: &mut Vec<ToolDefinition>) {
        definitions.extend(self.output.tool());
    }

    /// Native structured output, only on a turn that offers no tool: the tools stay defined (a
    /// transcript with tool calls needs them) but none may be called.
    fn shape<'r>(&'r self, state: &RunState, request: &mut ChatRequest<'r>) {
        let Some(progress) = &state.output else {
            return;
        };
        if let Some(schema) = self.output.response_schema(progress) {
            request.response_schema = Some(schema);
            request.tool_choice = ToolChoice::None;
        }
    }

    /// `final_answer` calls are counted by the output's retry budget, not as repetition.
    fn counts(&self, call: &ToolCall) -> bool {
        call.name != FINAL_ANSWER_TOOL
    }

    /// In tool mode, `final_answer` calls are checked instead of run. When one passes, the turn's
    /// other calls are not run (the model has finished); they are answered saying so.
    fn take_calls(
        &self,
        state: &mut RunState,
        calls: &[ToolCall],
        answers: &mut [Option<ToolResult>],
    ) -> Option<Ending> {
        let is_final = |call: &ToolCall| call.name == FINAL_ANSWER_TOOL;
        let finals: Vec<&ToolCall> = calls
            .iter()
            .zip(answers.iter())
            .filter(|(call, answer)| is_final(call) && answer.is_none())
            .map(|(call, _)| call)
            .collect();
        if finals.is_empty() || self.output.mode != Resolved::Tool {
            return None;
        }
        let (results, verdict) = self.output.on_final_calls(self.progress(state), &finals);
        let mut results = results.into_iter();
        let accepted = matches!(verdict, Verdict::Accept(_));
        for (call, answer) in calls.iter().zip(answers) {
            if answer.is_some() {
                continue;
            }
            if is_final(call) {
                *answer = results.next();
            } else if accepted {
                let not_run = "not run: the run ended with your final answer";
                *answer = Some(ToolResult::new(call, Err(SkillError::tool(not_run))));
            }
        }
        Self::ending(verdict)
    }

    fn on_answer(&self, state: &mut RunState, text: &str) -> Option<Answered> {
        Some(match self.output.on_text(self.progress(state), text) {
            Verdict::Retry(message) => Answered::Retry(message),
            verdict => Answered::End(Self::ending(verdict)?),
        })
    }
}
