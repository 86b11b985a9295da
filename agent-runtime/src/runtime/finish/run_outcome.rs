//! How a run ends: the [`RunOutcome`] handed back (its [`FinishReason`] is in `finish/finish_reason.rs`; the
//! [`AgentError`](crate::runtime::AgentError) that ends a run abnormally is in `finish/agent_error.rs`).

use serde_json::Value;

use crate::runtime::finish::finish_reason::FinishReason;
use crate::runtime::step::run_state::RunState;
use agent_llm::message::{Message, Usage};

/// How a run ended, with everything a caller needs to go on.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Why it ended.
    pub finish: FinishReason,
    /// The whole conversation, ready to continue with
    /// [`AgentRuntime::resume`](crate::runtime::AgentRuntime::resume).
    pub transcript: Vec<Message>,
    /// The model's last text, if it wrote any.
    pub final_text: Option<String>,
    /// Tokens used by the run, the agents it called as skills included.
    pub usage: Usage,
    /// What the run's model calls cost, the agents it called as skills included, priced by the
    /// runtime's [price table](crate::runtime::AgentRuntime::prices); calls to models the table does not
    /// know are counted in [`Cost::unpriced_calls`](agent_llm::Cost::unpriced_calls), and a
    /// run none of whose calls could be priced prints as `unpriced`.
    pub cost: agent_llm::Cost,
    /// The tokens of each agent this run called as a skill ([`AgentRuntime::into_skill`](
    /// crate::runtime::AgentRuntime::into_skill)), by its path (`researcher`, `researcher › checker`):
    /// each agent's own, without its children's. Empty when it called none.
    pub agents: std::collections::BTreeMap<String, Usage>,
    /// The agents the conversation was handed to ([`AgentRuntime::handoff`](
    /// crate::runtime::AgentRuntime::handoff)), in order: the last one answered. Empty when this
    /// runtime's own agent did.
    pub handoffs: Vec<String>,
    /// Model calls made.
    pub steps: usize,
    /// Model calls the agents this run called as skills made, their children's included.
    pub agent_steps: usize,
    /// In a typed run that ended with [`FinishReason::NoMoreToolCalls`], the value the model
    /// answered with, checked against the output type; `None` otherwise. See
    /// [`RunRequest::typed`](crate::runtime::RunRequest::typed).
    pub output: Option<Value>,
    /// When the run paused ([`FinishReason::AwaitingApproval`]), everything needed to continue
    /// it; serialize it to keep it (it is `Serialize + Deserialize`, with a format version).
    pub state: Option<Box<RunState>>,
}
