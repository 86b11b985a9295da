//! Typed runs: the entry points that end a run in a checked value ([`TypedOutcome`]). What each
//! output mode sends and checks is in `output.rs`; the loop's side is in `run.rs`.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::outcome::{AgentError, RunOutcome};
use super::output::{self, FINAL_ANSWER_TOOL, OutputType};
use super::{AgentRuntime, approved};
use crate::message::Message;

impl AgentRuntime {
    /// Runs an agent on a goal until the model answers with a `T`: the outcome's `output` holds
    /// it, checked, or is `None` with a finish reason that says why (for example
    /// [`Budget::OutputRetries`](super::Budget::OutputRetries) with the last error).
    ///
    /// ```
    /// use agent_core::{AgentRuntime, MockProvider, MockReply, Registry, ToolCall};
    /// use agent_core::__private::{schemars, serde};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
    /// #[serde(crate = "agent_core::__private::serde")]
    /// #[schemars(crate = "agent_core::__private::schemars")]
    /// struct Verdict { approve: bool, reason: String }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// // With tools on offer, the model answers by calling `final_answer`.
    /// let provider = MockProvider::new([MockReply::tool_calls([ToolCall::new(
    ///     "c1",
    ///     "final_answer",
    ///     json!({"approve": true, "reason": "tests pass"}),
    /// )])]);
    /// let runtime = AgentRuntime::new(provider, Registry::new());
    /// let outcome = runtime.run_typed::<Verdict>("Review the change.").await.unwrap();
    /// assert_eq!(
    ///     outcome.output,
    ///     Some(Verdict { approve: true, reason: "tests pass".into() })
    /// );
    /// # }
    /// ```
    pub async fn run_typed<T: DeserializeOwned + JsonSchema>(
        &self,
        goal: impl Into<String>,
    ) -> Result<TypedOutcome<T>, AgentError> {
        self.resume_typed(vec![Message::user(goal)]).await
    }

    /// [`AgentRuntime::resume`] for a typed run: continues the transcript until the model answers
    /// with a `T`.
    pub async fn resume_typed<T: DeserializeOwned + JsonSchema>(
        &self,
        transcript: Vec<Message>,
    ) -> Result<TypedOutcome<T>, AgentError> {
        let outcome = self
            .resume_with_output(transcript, OutputType::of::<T>())
            .await?;
        TypedOutcome::new(outcome)
    }

    /// [`AgentRuntime::approve_plan`] for a typed run: carries out the plan until the model
    /// answers with a `T`.
    pub async fn approve_plan_typed<T: DeserializeOwned + JsonSchema>(
        &self,
        transcript: Vec<Message>,
    ) -> Result<TypedOutcome<T>, AgentError> {
        let output = Some(OutputType::of::<T>());
        TypedOutcome::new(self.drive(approved(transcript), false, output).await?)
    }

    /// A typed run whose output type is known only at run time (a JSON Schema from a file, for
    /// example): the outcome's `output` holds the checked JSON value.
    pub async fn resume_with_output(
        &self,
        transcript: Vec<Message>,
        output: OutputType,
    ) -> Result<RunOutcome, AgentError> {
        self.drive(transcript, self.plan_mode, Some(output)).await
    }

    /// A typed run's state, with `Auto` resolved for this provider and registry.
    pub(super) fn output_state(&self, output: OutputType) -> Result<output::Output, AgentError> {
        if self.registry.contains(FINAL_ANSWER_TOOL) {
            return Err(AgentError::Config(format!(
                "a typed run ends with a call to `{FINAL_ANSWER_TOOL}`, and the registry already \
                 has a skill by that name: rename it"
            )));
        }
        // A registry with any skill shows the model at least one tool (a deferred skill brings
        // `tool_search`), so this asks without cloning every definition.
        let has_tools = !self.registry.is_empty();
        Ok(output::Output::new(
            output,
            self.output_mode,
            self.output_retries,
            has_tools,
            &*self.provider,
        ))
    }
}

/// How a typed run ended: its value, when the model gave one that passed the check, and the
/// outcome as for any run (finish reason, transcript, usage).
#[derive(Debug, Clone)]
pub struct TypedOutcome<T> {
    /// The value; `None` when the run ended otherwise (see `outcome.finish`).
    pub output: Option<T>,
    /// Everything else, as [`AgentRuntime::run`] returns it; its `output` is the value as JSON.
    pub outcome: RunOutcome,
}

impl<T: DeserializeOwned> TypedOutcome<T> {
    pub(super) fn new(outcome: RunOutcome) -> Result<Self, AgentError> {
        // The value passed the same deserialization as its check, so this cannot fail; if it
        // ever did, the run would say so rather than lose the value quietly.
        let output = match &outcome.output {
            Some(value) => Some(T::deserialize(value).map_err(|error| {
                AgentError::Config(format!("the checked output did not deserialize: {error}"))
            })?),
            None => None,
        };
        Ok(TypedOutcome { output, outcome })
    }
}
