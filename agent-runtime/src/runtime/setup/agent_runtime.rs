//! [`AgentRuntime`]: a provider, a registry and the settings every run it starts shares (held in
//! its [`Settings`], `setup/settings.rs`), and its place among agents when another runs it as a skill
//! ([`Ancestry`], `setup/ancestry.rs`); the builder methods that set them. How a run starts is
//! `start/run_request.rs`; what it does, the rest of this module.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::event::EventSink;
use agent_core::context::SkillContext;
use agent_core::registry::Registry;
use agent_llm::llm::LlmProvider;
use agent_llm::message::{ThinkingConfig, ToolChoice};
use agent_llm::price::{PriceTable, Usd};

use crate::runtime::finish::finish_reason::TranscriptLimit;
use crate::runtime::finish::output_type::OutputMode;
use crate::runtime::pause::seal::StateKeys;
use crate::runtime::setup::ancestry::Ancestry;
use crate::runtime::setup::settings::Settings;
use crate::runtime::step::guards::DenialCount;
use crate::runtime::step::journal::Journal;
use crate::session::PauseClaims;

/// Runs agents: a provider, a registry and settings. Built in one expression; cheap to clone.
/// See the [module docs](crate::runtime).
#[derive(Clone)]
pub struct AgentRuntime {
    /// What the builder methods set: the same for every run this runtime starts.
    pub(in crate::runtime) settings: Settings,
    /// Where this runtime runs among agents: set when another runtime runs it as a skill.
    pub(in crate::runtime) ancestry: Ancestry,
}

impl AgentRuntime {
    /// A runtime with 25 steps at most, no token budget, no transcript limit, `stuck_after(3)`,
    /// no denial limit, plan mode off, the current directory as workspace, whole (not streamed)
    /// answers of up to 4,096 tokens.
    pub fn new(provider: impl LlmProvider + 'static, registry: Registry) -> Self {
        AgentRuntime::from_shared(Arc::new(provider), Arc::new(registry))
    }

    /// Like [`AgentRuntime::new`], for a provider and registry already shared.
    pub fn from_shared(provider: Arc<dyn LlmProvider>, registry: Arc<Registry>) -> Self {
        AgentRuntime {
            settings: Settings::new(provider, registry),
            ancestry: Ancestry::default(),
        }
    }

    /// The system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.settings.system = Some(prompt.into());
        self
    }

    /// The most model calls in one run (at least 1).
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.settings.max_steps = steps.max(1);
        self
    }

    /// The most tokens one run may use, all calls together.
    pub fn max_tokens_total(mut self, tokens: u64) -> Self {
        self.settings.max_tokens_total = Some(tokens);
        self
    }

    /// The prices the run's calls are priced at ([`RunOutcome::cost`](crate::runtime::RunOutcome::cost),
    /// [`AgentEvent::Usage`](crate::AgentEvent::Usage), [`max_cost`](AgentRuntime::max_cost)).
    /// Default: the built-in table ([`PriceTable::builtin`]). To change a few prices, put your
    /// own in front of it: `PriceTable::from_file("prices.json")?.before(PriceTable::builtin())`.
    pub fn prices(mut self, table: impl Into<Arc<PriceTable>>) -> Self {
        self.settings.prices = Some(table.into());
        self
    }

    /// The table the run's calls are priced at.
    pub fn price_table(&self) -> &PriceTable {
        self.settings
            .prices
            .as_deref()
            .unwrap_or_else(|| PriceTable::builtin())
    }

    /// What `usage` cost, priced as `model` of `provider` when an answer named them (a
    /// failover's answer names the provider that gave it), else as this runtime's provider and
    /// its model; unpriced when no model is known.
    pub(in crate::runtime) fn price(
        &self,
        provider: Option<&str>,
        model: Option<&str>,
        usage: &agent_llm::message::Usage,
    ) -> agent_llm::price::Cost {
        let provider = provider.unwrap_or(self.settings.provider.name());
        match model.or_else(|| self.settings.provider.model()) {
            Some(model) => self.price_table().cost(provider, model, usage),
            None => agent_llm::price::Cost::UNPRICED,
        }
    }

    /// The most one run's model calls may cost, its sub-agents' included (`abilities/cost_budget.rs`):
    /// the run ends with [`Budget::Cost`](crate::runtime::Budget::Cost) before a call that would pass
    /// it, as far as can be known before the call (the next request repeats the last one's
    /// input, so it costs at least that much), and otherwise right after the call that passed
    /// it: that answer's tool calls are not run (a final answer without calls is kept). A run
    /// with a money budget whose provider names no model, or a model the price table cannot
    /// price, fails to start with [`AgentError::Config`](crate::runtime::AgentError::Config): a budget
    /// that cannot be counted would limit nothing.
    pub fn max_cost(mut self, limit: Usd) -> Self {
        self.settings.max_cost = Some(limit);
        self
    }

    /// The most tokens one answer may have.
    pub fn max_tokens_per_call(mut self, tokens: u32) -> Self {
        self.settings.max_tokens_per_call = tokens;
        self
    }

    /// The transcript's size limit; over it, the oldest turns are summarised.
    pub fn transcript_limit(mut self, limit: TranscriptLimit) -> Self {
        self.settings.transcript_limit = Some(limit);
        self
    }

    /// How many of the newest messages compaction always keeps (default 6).
    pub fn keep_recent(mut self, messages: usize) -> Self {
        self.settings.keep_recent = messages;
        self
    }

    /// After how many identical calls (or identical errors) in a row the run is `Stuck` (at least 2).
    pub fn stuck_after(mut self, times: usize) -> Self {
        self.settings.stuck_after = times.max(2);
        self
    }

    /// After how many denied calls the run ends (consecutive ones, unless
    /// [`AgentRuntime::count_denials_in_total`]).
    pub fn permission_denial_limit(mut self, denials: usize) -> Self {
        self.settings.denial_limit = Some(denials.max(1));
        self
    }

    /// Counts every denial of the run against the limit, not only consecutive ones.
    pub fn count_denials_in_total(mut self) -> Self {
        self.settings.denial_count = DenialCount::Total;
        self
    }

    /// Plan mode: only read-only skills run; the model's first answer without tool calls is its
    /// plan, and the run ends with [`FinishReason::PlanPending`](crate::runtime::FinishReason::PlanPending) (an answer cut off by the token
    /// limit or refused ends it with [`FinishReason::ProviderStop`](crate::runtime::FinishReason::ProviderStop) instead, as outside plan mode).
    pub fn plan_mode(mut self, on: bool) -> Self {
        self.settings.plan_mode = on;
        self
    }

    /// The workspace skills work in (default `.`). Keeps the extensions of a context given with
    /// [`AgentRuntime::context`].
    pub fn workspace(mut self, path: impl Into<PathBuf>) -> Self {
        self.settings.context = self.settings.context.with_workspace_root(path);
        self
    }

    /// A context whose workspace and extensions (shared clients, settings) every skill call gets.
    /// It replaces the workspace set before; each run still gets its own session and the
    /// runtime's cancellation token.
    pub fn context(mut self, context: SkillContext) -> Self {
        self.settings.context = context;
        self
    }

    /// Adds a sink for events; several may be added.
    pub fn event_sink(mut self, sink: impl EventSink + 'static) -> Self {
        self.settings.sinks.push(Arc::new(sink));
        self
    }

    /// Streams answers (text arrives as [`AgentEvent::TextDelta`](crate::AgentEvent::TextDelta)s).
    pub fn streaming(mut self, on: bool) -> Self {
        self.settings.streaming = on;
        self
    }

    /// Asks the model to think before each answer (see [`ThinkingConfig`]); the thinking text
    /// arrives as [`AgentEvent::ThinkingDelta`](crate::AgentEvent::ThinkingDelta)s when streaming, and is kept in the transcript
    /// (with its signature) so the provider can check it on the next turn.
    pub fn thinking(mut self, thinking: ThinkingConfig) -> Self {
        self.settings.thinking = Some(thinking);
        self
    }

    /// The tool choice of a run's first model call, e.g. [`ToolChoice::Required`] to make sure a
    /// tool is used (also the first call after a resume). Later calls are [`ToolChoice::Auto`], so
    /// the run can end. Default `Auto`.
    pub fn first_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.settings.first_tool_choice = choice;
        self
    }

    /// The token that cancels runs. A cancelled token cancels every later run too: give a new
    /// token (on a clone of the runtime) for the next one.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.settings.cancellation = token;
        self
    }

    /// Makes runs durable: each model call, compaction summary and tool call is a step whose
    /// result the [`Journal`] records, and a later attempt at the same run replays recorded steps
    /// instead of doing them again. Tool calls then run one at a time, in call order, and events go
    /// through [`Journal::emit`]. Without a journal (the default) nothing of this costs anything.
    /// `agent-restate` gives each Restate invocation its own.
    pub fn journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.settings.journal = Some(journal);
        self
    }

    /// Seals every state that leaves this runtime (a paused run's [`RunState`](crate::runtime::RunState),
    /// a session's record) with `keys`' current key, and checks every one that comes back
    /// ([`AgentRuntime::continue_paused`](crate::runtime::AgentRuntime::continue_paused), [`AgentRuntime::
    /// decide`](crate::runtime::AgentRuntime::decide), a session's [`run`](crate::runtime::AgentRuntime::run))
    /// before anything runs: one that was changed, sealed with a key not in `keys`, or not
    /// sealed is refused with [`AgentError::Sealed`](crate::runtime::AgentError::Sealed), and nothing
    /// runs or is saved. See [`StateKeys`] for rotation.
    ///
    /// Without keys (the default) a state is trusted as it comes back, checked only for
    /// consistency (its pending calls against its transcript): keep it where nobody else can
    /// write.
    pub fn seal_states(mut self, keys: StateKeys) -> Self {
        self.settings.state_keys = Some(Arc::new(keys));
        self
    }

    /// Records every paused state continued through this runtime in `claims`, after the
    /// state's checks and before anything runs, and refuses a state whose pause was continued
    /// before ([`AgentError::Resume`](crate::runtime::AgentError::Resume)): the same state continued
    /// twice, in two processes or from a copy, runs its approved calls once. A session's pause
    /// is claimed by the session's version check already; this is for states kept elsewhere.
    /// See [`PauseClaims`] for what it cannot see.
    pub fn pause_claims(mut self, claims: Arc<dyn PauseClaims>) -> Self {
        self.settings.claims = Some(claims);
        self
    }

    /// A budget this runtime's runs share with every agent they call as a skill, and theirs in
    /// turn (see [`TreeBudget`](crate::runtime::TreeBudget)): its model calls and tokens count the whole
    /// tree's. The run's own [`max_steps`](AgentRuntime::max_steps) and [`max_tokens_total`](
    /// AgentRuntime::max_tokens_total) still apply to it alone; a child with a tree budget of its
    /// own draws from both. A conversation handed to another agent keeps this budget.
    pub fn tree_budget(mut self, budget: crate::runtime::TreeBudget) -> Self {
        self.settings.tree_budget = Some(budget);
        self
    }

    /// The registry this runtime dispatches to.
    pub fn registry(&self) -> &Registry {
        &self.settings.registry
    }

    /// How a typed run asks the model for its result (default [`OutputMode::Auto`]; see
    /// [`OutputMode`] for what each mode sends).
    pub fn output_mode(mut self, mode: OutputMode) -> Self {
        self.settings.output_mode = mode;
        self
    }

    /// How many answers that fail the output's check a typed run sends back to the model, with
    /// the error, before it ends with [`Budget::OutputRetries`](crate::runtime::Budget::OutputRetries). Default 2.
    pub fn output_retries(mut self, retries: usize) -> Self {
        self.settings.output_retries = retries;
        self
    }
}

impl std::fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuntime")
            .field("provider", &self.settings.provider.name())
            .field("registry", &self.settings.registry)
            .field("max_steps", &self.settings.max_steps)
            .field("plan_mode", &self.settings.plan_mode)
            .field("streaming", &self.settings.streaming)
            .finish_non_exhaustive()
    }
}
