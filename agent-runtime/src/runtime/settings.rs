//! [`Settings`]: what an [`AgentRuntime`](super::AgentRuntime)'s builder methods set, the same
//! for every run it starts (the provider, the registry, budgets, hooks' context, sinks, the
//! journal, the agents it hands off to), apart from its place among agents (`ancestry.rs`).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::event::EventSink;
use crate::session::PauseClaims;
use agent_core::context::SkillContext;
use agent_core::registry::Registry;
use agent_llm::llm::LlmProvider;
use agent_llm::message::{ThinkingConfig, ToolChoice};
use agent_llm::price::{PriceTable, Usd};

use super::guards::DenialCount;
use super::handoff::Handoff;
use super::journal::Journal;
use super::output::OutputMode;
use super::reason::TranscriptLimit;
use super::seal::StateKeys;

/// A runtime's settings (see [`AgentRuntime`](super::AgentRuntime)'s builder methods for what each does).
#[derive(Clone)]
pub(super) struct Settings {
    pub(super) provider: Arc<dyn LlmProvider>,
    pub(super) registry: Arc<Registry>,
    pub(super) system: Option<String>,
    pub(super) max_steps: usize,
    pub(super) max_tokens_total: Option<u64>,
    pub(super) max_tokens_per_call: u32,
    pub(super) transcript_limit: Option<TranscriptLimit>,
    pub(super) keep_recent: usize,
    pub(super) stuck_after: usize,
    pub(super) denial_limit: Option<usize>,
    pub(super) denial_count: DenialCount,
    pub(super) plan_mode: bool,
    /// The base context of every run: workspace, extensions. Each run gets its own session and
    /// the runtime's cancellation token on a clone of it.
    pub(super) context: SkillContext,
    pub(super) sinks: Vec<Arc<dyn EventSink>>,
    pub(super) streaming: bool,
    pub(super) thinking: Option<ThinkingConfig>,
    pub(super) first_tool_choice: ToolChoice,
    pub(super) cancellation: CancellationToken,
    pub(super) output_mode: OutputMode,
    pub(super) output_retries: usize,
    /// Where a durable run keeps its steps' results ([`AgentRuntime::journal`](super::AgentRuntime::journal)).
    pub(super) journal: Option<Arc<dyn Journal>>,
    /// The agents this runtime may hand the conversation to ([`AgentRuntime::handoff`](super::AgentRuntime::handoff)).
    pub(super) handoffs: Vec<Handoff>,
    /// The budget this runtime's runs share with the agents below them
    /// ([`AgentRuntime::tree_budget`](super::AgentRuntime::tree_budget)).
    pub(super) tree_budget: Option<super::TreeBudget>,
    /// What prices the run's calls ([`AgentRuntime::prices`](super::AgentRuntime::prices)); `None`: the built-in table.
    pub(super) prices: Option<Arc<PriceTable>>,
    /// The most a run's calls may cost ([`AgentRuntime::max_cost`](super::AgentRuntime::max_cost)).
    pub(super) max_cost: Option<Usd>,
    /// The keys states that leave are sealed with ([`AgentRuntime::seal_states`](super::AgentRuntime::seal_states)).
    pub(super) state_keys: Option<Arc<StateKeys>>,
    /// Where continued pauses are recorded ([`AgentRuntime::pause_claims`](super::AgentRuntime::pause_claims)).
    pub(super) claims: Option<Arc<dyn PauseClaims>>,
}

impl Settings {
    /// The defaults [`AgentRuntime::new`](super::AgentRuntime::new) documents.
    pub(super) fn new(provider: Arc<dyn LlmProvider>, registry: Arc<Registry>) -> Self {
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
