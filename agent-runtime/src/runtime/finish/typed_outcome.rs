//! Typed runs' outcome, [`TypedOutcome`], and the resolution of a typed run's output for a
//! runtime. A run is made typed with [`RunRequest::typed`](crate::runtime::RunRequest::typed); what each
//! output mode sends and checks is in `finish/output_type.rs`, the typed answer's wrapper in `finish/typed_answer.rs`.

use serde::de::DeserializeOwned;

use crate::runtime::AgentRuntime;
use crate::runtime::finish::agent_error::{AgentError, ConfigError};
use crate::runtime::finish::output_type::{self, FINAL_ANSWER_TOOL, OutputType};
use crate::runtime::finish::run_outcome::RunOutcome;

impl AgentRuntime {
    /// A typed run's state, with `Auto` resolved for this provider and registry.
    pub(in crate::runtime) fn output_state(
        &self,
        output: OutputType,
    ) -> Result<output_type::Output, AgentError> {
        if self.settings.registry.contains(FINAL_ANSWER_TOOL) {
            return Err(ConfigError::FinalAnswerTaken {
                name: FINAL_ANSWER_TOOL.to_owned(),
            }
            .into());
        }
        // A registry with any skill shows the model at least one tool (a deferred skill brings
        // `tool_search`), so this asks without cloning every definition.
        let has_tools = !self.settings.registry.is_empty();
        Ok(output_type::Output::new(
            output,
            self.settings.output_mode,
            self.settings.output_retries,
            has_tools,
            &*self.settings.provider,
        ))
    }
}

/// How a typed run ended: its value, when the model gave one that passed the check, and the
/// outcome as for any run (finish reason, transcript, usage).
#[derive(Debug, Clone)]
pub struct TypedOutcome<T> {
    /// The value; `None` when the run ended otherwise (see `outcome.finish`).
    pub output: Option<T>,
    /// Everything else, as an untyped run returns it; its `output` is the value as JSON.
    pub outcome: RunOutcome,
}

impl<T: DeserializeOwned> TypedOutcome<T> {
    pub(in crate::runtime) fn new(outcome: RunOutcome) -> Result<Self, AgentError> {
        // The value passed the same deserialization as its check, so this cannot fail; if it
        // ever did, the run would say so rather than lose the value quietly.
        let output = match &outcome.output {
            Some(value) => {
                Some(
                    T::deserialize(value).map_err(|error| ConfigError::OutputType {
                        error: error.to_string(),
                    })?,
                )
            }
            None => None,
        };
        Ok(TypedOutcome { output, outcome })
    }
}
