//! [`AgentRuntime`]: a provider, a registry and the settings every run it starts shares. How a run
//! starts is `start.rs`; what it does, the rest of this module.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::event::EventSink;
use agent_core::context::SkillContext;
use agent_core::registry::Registry;
use agent_llm::llm::LlmProvider;
use agent_llm::message::{Message, ThinkingConfig, ToolChoice};
use agent_llm::price::{PriceTable, Usd};

use super::guards::DenialCount;
use super::journal::Journal;
use super::output::OutputMode;
use super::reason::TranscriptLimit;
use super::seal::StateKeys;
use crate::session::PauseClaims;

/// Runs agents: a provider, a registry and settings. Built in one expression; cheap to clone.
/// See the [module docs](crate::runtime).
#[derive(Clone)]
pub struct AgentRuntime {
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
    /// Where a durable run keeps its steps' results ([`AgentRuntime::journal`]).
    pub(super) journal: Option<Arc<dyn Journal>>,
    /// The agents from the outermost run to this one, when this runtime runs as another's skill
    /// ([`AgentRuntime::into_skill`]); empty otherwise.
    pub(super) path: Vec<String>,
    /// The agents this runtime may hand the conversation to ([`AgentRuntime::handoff`]).
    pub(super) handoffs: Vec<Handoff>,
    /// The budget this runtime's runs share with the agents below them
    /// ([`AgentRuntime::tree_budget`]).
    pub(super) tree_budget: Option<super::TreeBudget>,
    /// The tree budgets of the runs above, when this runtime runs as another's skill.
    pub(super) tree: Vec<Arc<super::tree_budget::TreeCounter>>,
    /// What prices the run's calls ([`AgentRuntime::prices`]); `None`: the built-in table.
    pub(super) prices: Option<Arc<PriceTable>>,
    /// The most a run's calls may cost ([`AgentRuntime::max_cost`]).
    pub(super) max_cost: Option<Usd>,
    /// The keys states that leave are sealed with ([`AgentRuntime::seal_states`]).
    pub(super) state_keys: Option<Arc<StateKeys>>,
    /// Where continued pauses are recorded ([`AgentRuntime::pause_claims`]).
    pub(super) claims: Option<Arc<dyn PauseClaims>>,
    /// When this runtime runs as another's skill: the idempotency key of that call, which a
    /// new run's id derives from, so a replay of the outer call makes the same inner keys.
    pub(super) parent_key: Option<String>,
}

/// What of the transcript the agent handed to sees ([`AgentRuntime::handoff_filtered`]).
pub type TranscriptFilter = Arc<dyn Fn(&[Message]) -> Vec<Message> + Send + Sync>;

/// An agent a runtime may hand the conversation to (`handoff.rs`).
#[derive(Clone)]
pub(crate) struct Handoff {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) runtime: Arc<AgentRuntime>,
    pub(crate) filter: Option<TranscriptFilter>,
}

impl AgentRuntime {
    /// The handoff offered under `name`.
    pub(super) fn handoff_named(&self, name: &str) -> Option<&Handoff> {
        self.handoffs.iter().find(|h| h.name == name)
    }

    /// A runtime with 25 steps at most, no token budget, no transcript limit, `stuck_after(3)`,
    /// no denial limit, plan mode off, the current directory as workspace, whole (not streamed)
    /// answers of up to 4,096 tokens.
    pub fn new(provider: impl LlmProvider + 'static, registry: Registry) -> Self {
        AgentRuntime::from_shared(Arc::new(provider), Arc::new(registry))
    }

    /// Like [`AgentRuntime::new`], for a provider and registry already shared.
    pub fn from_shared(provider: Arc<dyn LlmProvider>, registry: Arc<Registry>) -> Self {
        AgentRuntime {
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
            path: Vec::new(),
            handoffs: Vec::new(),
            tree_budget: None,
            tree: Vec::new(),
            prices: None,
            max_cost: None,
            state_keys: None,
            claims: None,
            parent_key: None,
        }
    }

    /// The system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = Some(prompt.into());
        self
    }

    /// The most model calls in one run (at least 1).
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps.max(1);
        self
    }

    /// The most tokens one run may use, all calls together.
    pub fn max_tokens_total(mut self, tokens: u64) -> Self {
        self.max_tokens_total = Some(tokens);
        self
    }

    /// The prices the run's calls are priced at ([`RunOutcome::cost`](super::RunOutcome::cost),
    /// [`AgentEvent::Usage`](crate::AgentEvent::Usage), [`max_cost`](AgentRuntime::max_cost)).
    /// Default: the built-in table ([`PriceTable::builtin`]). To change a few prices, put your
    /// own in front of it: `PriceTable::from_file("prices.json")?.before(PriceTable::builtin())`.
    pub fn prices(mut self, table: impl Into<Arc<PriceTable>>) -> Self {
        self.prices = Some(table.into());
        self
    }

    /// The table the run's calls are priced at.
    pub fn price_table(&self) -> &PriceTable {
        self.prices
            .as_deref()
            .unwrap_or_else(|| PriceTable::builtin())
    }

    /// The most one run's model calls may cost, its sub-agents' included (`cost_budget.rs`):
    /// the run ends with [`Budget::Cost`](super::Budget::Cost) before a call that would pass
    /// it, as far as can be known before the call (the next request repeats the last one's
    /// input, so it costs at least that much), and otherwise right after the call that passed
    /// it: that answer's tool calls are not run (a final answer without calls is kept). A run
    /// with a money budget whose provider names no model, or a model the price table cannot
    /// price, fails to start with [`AgentError::Config`](super::AgentError::Config): a budget
    /// that cannot be counted would limit nothing.
    pub fn max_cost(mut self, limit: Usd) -> Self {
        self.max_cost = Some(limit);
        self
    }

    /// The most tokens one answer may have.
    pub fn max_tokens_per_call(mut self, tokens: u32) -> Self {
        self.max_tokens_per_call = tokens;
        self
    }

    /// The transcript's size limit; over it, the oldest turns are summarised.
    pub fn transcript_limit(mut self, limit: TranscriptLimit) -> Self {
        self.transcript_limit = Some(limit);
        self
    }

    /// How many of the newest messages compaction always keeps (default 6).
    pub fn keep_recent(mut self, messages: usize) -> Self {
        self.keep_recent = messages;
        self
    }

    /// After how many identical calls (or identical errors) in a row the run is `Stuck` (at least 2).
    pub fn stuck_after(mut self, times: usize) -> Self {
        self.stuck_after = times.max(2);
        self
    }

    /// After how many denied calls the run ends (consecutive ones, unless
    /// [`AgentRuntime::count_denials_in_total`]).
    pub fn permission_denial_limit(mut self, denials: usize) -> Self {
        self.denial_limit = Some(denials.max(1));
        self
    }

    /// Counts every denial of the run against the limit, not only consecutive ones.
    pub fn count_denials_in_total(mut self) -> Self {
        self.denial_count = DenialCount::Total;
        self
    }

    /// Plan mode: only read-only skills run; the model's first answer without tool calls is its
    /// plan, and the run ends with [`FinishReason::PlanPending`](super::FinishReason::PlanPending) (an answer cut off by the token
    /// limit or refused ends it with [`FinishReason::ProviderStop`](super::FinishReason::ProviderStop) instead, as outside plan mode).
    pub fn plan_mode(mut self, on: bool) -> Self {
        self.plan_mode = on;
        self
    }

    /// The workspace skills work in (default `.`). Keeps the extensions of a context given with
    /// [`AgentRuntime::context`].
    pub fn workspace(mut self, path: impl Into<PathBuf>) -> Self {
        self.context = self.context.with_workspace_root(path);
        self
    }

    /// A context whose workspace and extensions (shared clients, settings) every skill call gets.
    /// It replaces the workspace set before; each run still gets its own session and the
    /// runtime's cancellation token.
    pub fn context(mut self, context: SkillContext) -> Self {
        self.context = context;
        self
    }

    /// Adds a sink for events; several may be added.
    pub fn event_sink(mut self, sink: impl EventSink + 'static) -> Self {
        self.sinks.push(Arc::new(sink));
        self
    }

    /// Streams answers (text arrives as [`AgentEvent::TextDelta`](crate::AgentEvent::TextDelta)s).
    pub fn streaming(mut self, on: bool) -> Self {
        self.streaming = on;
        self
    }

    /// Asks the model to think before each answer (see [`ThinkingConfig`]); the thinking text
    /// arrives as [`AgentEvent::ThinkingDelta`](crate::AgentEvent::ThinkingDelta)s when streaming, and is kept in the transcript
    /// (with its signature) so the provider can check it on the next turn.
    pub fn thinking(mut self, thinking: ThinkingConfig) -> Self {
        self.thinking = Some(thinking);
        self
    }

    /// The tool choice of a run's first model call, e.g. [`ToolChoice::Required`] to make sure a
    /// tool is used (also the first call after a resume). Later calls are [`ToolChoice::Auto`], so
    /// the run can end. Default `Auto`.
    pub fn first_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.first_tool_choice = choice;
        self
    }

    /// The token that cancels runs. A cancelled token cancels every later run too: give a new
    /// token (on a clone of the runtime) for the next one.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// Makes runs durable: each model call, compaction summary and tool call is a step whose
    /// result the [`Journal`] records, and a later attempt at the same run replays recorded steps
    /// instead of doing them again. Tool calls then run one at a time, in call order, and events go
    /// through [`Journal::emit`]. Without a journal (the default) nothing of this costs anything.
    /// `agent-restate` gives each Restate invocation its own.
    pub fn journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Seals every state that leaves this runtime (a paused run's [`RunState`](super::RunState),
    /// a session's record) with `keys`' current key, and checks every one that comes back
    /// ([`AgentRuntime::continue_paused`](super::AgentRuntime::continue_paused), [`AgentRuntime::
    /// decide`](super::AgentRuntime::decide), a session's [`run`](super::AgentRuntime::run))
    /// before anything runs: one that was changed, sealed with a key not in `keys`, or not
    /// sealed is refused with [`AgentError::Sealed`](super::AgentError::Sealed), and nothing
    /// runs or is saved. See [`StateKeys`] for rotation.
    ///
    /// Without keys (the default) a state is trusted as it comes back, checked only for
    /// consistency (its pending calls against its transcript): keep it where nobody else can
    /// write.
    pub fn seal_states(mut self, keys: StateKeys) -> Self {
        self.state_keys = Some(Arc::new(keys));
        self
    }

    /// Records every paused state continued through this runtime in `claims`, after the
    /// state's checks and before anything runs, and refuses a state whose pause was continued
    /// before ([`AgentError::Resume`](super::AgentError::Resume)): the same state continued
    /// twice, in two processes or from a copy, runs its approved calls once. A session's pause
    /// is claimed by the session's version check already; this is for states kept elsewhere.
    /// See [`PauseClaims`] for what it cannot see.
    pub fn pause_claims(mut self, claims: Arc<dyn PauseClaims>) -> Self {
        self.claims = Some(claims);
        self
    }

    /// A budget this runtime's runs share with every agent they call as a skill, and theirs in
    /// turn (see [`TreeBudget`](super::TreeBudget)): its model calls and tokens count the whole
    /// tree's. The run's own [`max_steps`](AgentRuntime::max_steps) and [`max_tokens_total`](
    /// AgentRuntime::max_tokens_total) still apply to it alone; a child with a tree budget of its
    /// own draws from both. A conversation handed to another agent keeps this budget.
    pub fn tree_budget(mut self, budget: super::TreeBudget) -> Self {
        self.tree_budget = Some(budget);
        self
    }

    /// The registry this runtime dispatches to.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// How a typed run asks the model for its result (default [`OutputMode::Auto`]; see
    /// [`OutputMode`] for what each mode sends).
    pub fn output_mode(mut self, mode: OutputMode) -> Self {
        self.output_mode = mode;
        self
    }

    /// How many answers that fail the output's check a typed run sends back to the model, with
    /// the error, before it ends with [`Budget::OutputRetries`](super::Budget::OutputRetries). Default 2.
    pub fn output_retries(mut self, retries: usize) -> Self {
        self.output_retries = retries;
        self
    }
}

impl std::fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuntime")
            .field("provider", &self.provider.name())
            .field("registry", &self.registry)
            .field("max_steps", &self.max_steps)
            .field("plan_mode", &self.plan_mode)
            .field("streaming", &self.streaming)
            .finish_non_exhaustive()
    }
}
