//! [`Settings`]: what an [`AgentRuntime`](crate::runtime::AgentRuntime)'s builder methods set, the same
//! for every run it starts (the provider, the registry, budgets, hooks' context, sinks, the
//! journal, the agents it hands off to), apart from its place among agents (`setup/ancestry.rs`).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::event::EventSink;
use crate::session::PauseClaims;
use agent_core::context::SkillContext;
use agent_core::registry::Registry;
use agent_llm::llm::LlmProvider;
use agent_llm::message::{ThinkingConfig, ToolChoice};
use agent_llm::price::{PriceTable, Usd};

use crate::runtime::agents::handoff::Handoff;
use crate::runtime::finish::finish_reason::TranscriptLimit;
use crate::runtime::finish::output_type::OutputMode;
use crate::runtime::pause::seal::StateKeys;
use crate::runtime::step::guards::DenialCount;
use crate::runtime::step::journal::Journal;

/// A runtime's settings (see [`AgentRuntime`](crate::runtime::AgentRuntime)'s builder methods for what each does).
#[derive(Clone)]
pub(in crate::runtime) struct Settings {
    pub(in crate::runtime) provider: Arc<dyn LlmProvider>,
    pub(in crate::runtime) registry: Arc<Registry>,
    pub(in crate::runtime) system: Option<String>,
    pub(in crate::runtime) max_steps: usize,
    pub(in crate::runtime) max_tokens_total: Option<u64>,
    pub(in crate::runtime) max_tokens_per_call: u32,
    pub(in crate::runtime) transcript_limit: Option<TranscriptLimit>,
    pub(in crate::runtime) keep_recent: usize,
    pub(in crate::runtime) stuck_after: usize,
    pub(in crate::runtime) denial_limit: Option<usize>,
    pub(in crate::runtime) denial_count: DenialCount,
    pub(in crate::runtime) plan_mode: bool,
    /// The base context of every run: workspace, extensions. Each run gets its own session and
    /// the runtime's cancellation token on a clone of it.
    pub(in crate::runtime) context: SkillContext,
    pub(in crate::runtime) sinks: Vec<Arc<dyn EventSink>>,
    pub(in crate::runtime) streaming: bool,
    pub(in crate::runtime) thinking: Option<ThinkingConfig>,
    pub(in crate::runtime) first_tool_choice: ToolChoice,
    pub(in crate::runtime) cancellation: CancellationToken,
    pub(in crate::runtime) output_mode: OutputMode,
    pub(in crate::runtime) output_retries: usize,
    /// Where a durable run keeps its steps' results ([`AgentRuntime::journal`](crate::runtime::AgentRuntime::journal)).
    pub(in crate::runtime) journal: Option<Arc<dyn Journal>>,
    /// The agents this runtime may hand the conversation to ([`AgentRuntime::handoff`](crate::runtime::AgentRuntime::handoff)).
    pub(in crate::runtime) handoffs: Vec<Handoff>,
    /// The budget this runtime's runs share with the agents below them
    /// ([`AgentRuntime::tree_budget`](crate::runtime::AgentRuntime::tree_budget)).
    pub(in crate::runtime) tree_budget: Option<crate::runtime::TreeBudget>,
    /// What prices the run's calls ([`AgentRuntime::prices`](crate::runtime::AgentRuntime::prices)); `None`: the built-in table.
    pub(in crate::runtime) prices: Option<Arc<PriceTable>>,
    /// The most a run's calls may cost ([`AgentRuntime::max_cost`](crate::runtime::AgentRuntime::max_cost)).
    pub(in crate::runtime) max_cost: Option<Usd>,
    /// The keys states that leave are sealed with ([`AgentRuntime::seal_states`](crate::runtime::AgentRuntime::seal_states)).
    pub(in crate::runtime) state_keys: Option<Arc<StateKeys>>,
    /// Where continued pauses are recorded ([`AgentRuntime::pause_claims`](crate::runtime::AgentRuntime::pause_claims)).
    pub(in crate::runtime) claims: Option<Arc<dyn PauseClaims>>,
}

impl Settings {
    /// The defaults [`AgentRuntime::new`](crate::runtime::AgentRuntime::new) documents.
    pub(in crate::runtime) fn new(provider: Arc<dyn LlmProvider>, registry: Arc<Registry>) -> Self {
        Settings {
            provider,
            registry,
            system: None,
            max_steps: 25,
            max_tokens_total: None,
            max_tokens_per_call: 4096,
            transcript_limit: None,
            keep_recent: 6,
            stuck_after: 3,
            denial_limit: None,
            denial_count: DenialCount::Consecutive,
            plan_mode: false,
            context: SkillContext::new("."),
            sinks: Vec::new(),
            streaming: false,
            thinking: None,
            first_tool_choice: ToolChoice::Auto,
            cancellation: CancellationToken::new(),
            output_mode: OutputMode::Auto,
            output_retries: 2,
            journal: None,
            handoffs: Vec::new(),
            tree_budget: None,
            prices: None,
            max_cost: None,
            state_keys: None,
            claims: None,
        }
    }
}
