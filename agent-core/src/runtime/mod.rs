//! The agent loop: send the transcript to the model, run the tool calls it makes, repeat — until
//! one of eight [`FinishReason`]s, or a ninth, [`FinishReason::AwaitingApproval`], when a hook asks a
//! person about a call and the run pauses.
//!
//! ```text
//!            ┌───────────────────────────── next step ─────────────────────────────┐
//!            ▼                                                                      │
//!   goal ─► checks ─► compact? ─► model call ─► assistant message ─► tool calls? ──yes─► hooks,
//!     (cancelled? steps? tokens? (summarise the  (stream or whole,   (text, calls)     │   batches,
//!      transcript size?)          oldest turns)   retried)                             no  results ─┘
//!                                                                                      ▼  (in order)
//!                                                                  NoMoreToolCalls / PlanPending /
//!                                                                  ProviderStop
//! ```
//!
//! The loop is closed on purpose: new abilities arrive as skills, hooks, providers or wrappers
//! around the run, never as branches in it. Every step emits [`AgentEvent`](crate::AgentEvent)s,
//! and every turn's tool calls are all answered (errors included) before the next model call, so
//! the transcript is always valid for both wire formats.
//!
//! # The run as a value
//!
//! A run is one serializable [`RunState`]: the transcript, the counters and guards, the loaded
//! deferred skills, plan mode, a typed run's progress, and what comes next: ask the model, run the
//! calls of its last answer, wait for decisions, or done. The loop steps it (`run.rs`); a pause is
//! the loop stopping with the value in hand, a resume the loop stepping it again. Where each
//! finish reason is decided is one file, `finish.rs`. What the run does besides the loop is chosen
//! once when it starts (`drive.rs`): its I/O ([`Journal`]ed or direct, `effects.rs` and
//! `journal.rs`) and its abilities (plan mode in `plan.rs`, the typed answer in `answer.rs`), each
//! a wrapper in its own file; the pause is `pause.rs`. A run starts one way, a [`RunRequest`]
//! (`start.rs`), kept in a session by `in_session.rs`.
//!
//! ```
//! use agent_core::{AgentRuntime, FinishReason, MockProvider, MockReply, Registry};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let provider = MockProvider::new([MockReply::text("Hello!")]);
//! let runtime = AgentRuntime::new(provider, Registry::new()).max_steps(10);
//! let outcome = runtime.run("Say hello.").await.unwrap();
//! assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
//! assert_eq!(outcome.final_text.as_deref(), Some("Hello!"));
//! # }
//! ```
//!
//! # Decisions
//!
//! - A response with no tool calls ends the run: [`FinishReason::NoMoreToolCalls`] when the model
//!   ended its turn (or hit a stop sequence), [`FinishReason::ProviderStop`] when it was cut off
//!   (`MaxTokens`), refused, or stopped for another reason.
//! - Tool calls are run whatever the stop reason says (some servers report `stop` with tool
//!   calls). A call cut off by the token limit is never run: the model is told, in a user message
//!   after the results of the calls it did finish, that its call to `x` was cut off and not run,
//!   and the loop goes on.
//! - The step budget counts model calls (default 25). The token budget counts every token of every
//!   call, cache reads and writes included.
//! - `Stuck`: the same call (name and arguments, compared canonically) `stuck_after` times in a
//!   row, or the same error result `stuck_after` times in a row (default 3).
//! - Permission denials (`SkillError::Denied` results) end the run after
//!   `permission_denial_limit` of them — consecutive by default, or in total with
//!   [`AgentRuntime::count_denials_in_total`].
//! - Compaction starts when the transcript is over its limit: the goal (first message) and the
//!   newest turns stay; everything between is summarised by the same provider into one message.
//!   The cut never separates a tool call from its results. After two failed attempts the run ends
//!   with `TranscriptLimit` instead of trying forever.
//! - A hook that answers [`HookOutcome::Ask`](crate::HookOutcome::Ask) pauses the run: the turn's
//!   other calls run (batch rules unchanged), their results are kept out of the transcript, and
//!   the run ends with [`FinishReason::AwaitingApproval`] and its [`RunState`] in
//!   [`RunOutcome::state`]. [`AgentRuntime::continue_paused`] finishes the turn with the decisions
//!   (results enter the transcript in call order) and goes on where the run stopped, counters and
//!   budgets included. A session ([`RunRequest::in_session`]) keeps the conversation and the
//!   paused state in a [`SessionStore`](crate::SessionStore) under an id.
//! - A typed run ([`RunRequest::typed`]) ends when the model's answer passes the output's
//!   check: a `final_answer` call (tool mode) or a text answer holding the JSON (native and
//!   prompted modes; native sends the schema only on a turn where no tool can be chosen). It is
//!   still [`FinishReason::NoMoreToolCalls`], with the value in [`RunOutcome::output`]; answers
//!   that fail go back to the model with the error, and `output_retries` of them end the run with
//!   [`Budget::OutputRetries`]. The modes are described on [`OutputMode`].

mod ability;
mod answer;
mod compaction;
mod drive;
mod effects;
mod finish;
mod guards;
mod in_session;
mod journal;
pub(crate) mod outcome;
mod output;
mod pause;
mod plan;
mod record;
mod repair;
mod run;
mod start;
pub(crate) mod state;
mod typed;

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::context::SkillContext;
use crate::event::EventSink;
use crate::llm::LlmProvider;
use crate::message::{ThinkingConfig, ToolChoice};
use crate::registry::Registry;

use guards::DenialCount;
pub use journal::{Journal, JournalError, JournalStep, StepFuture, StepOutcome};
pub use outcome::{AgentError, Budget, FinishReason, RunOutcome, TranscriptLimit};
pub use output::{FINAL_ANSWER_TOOL, OutputMode, OutputType};
pub use start::{RunRequest, TypedRunRequest};
pub use state::{Decision, PendingCall, RUN_STATE_VERSION, RunState};
pub use typed::TypedOutcome;

/// Runs agents: a provider, a registry and settings. Built in one expression; cheap to clone.
/// See the [module docs](self).
#[derive(Clone)]
pub struct AgentRuntime {
    provider: Arc<dyn LlmProvider>,
    registry: Arc<Registry>,
    system: Option<String>,
    max_steps: usize,
    max_tokens_total: Option<u64>,
    max_tokens_per_call: u32,
    transcript_limit: Option<TranscriptLimit>,
    keep_recent: usize,
    stuck_after: usize,
    denial_limit: Option<usize>,
    denial_count: DenialCount,
    plan_mode: bool,
    /// The base context of every run: workspace, extensions. Each run gets its own session and
    /// the runtime's cancellation token on a clone of it.
    context: SkillContext,
    sinks: Vec<Arc<dyn EventSink>>,
    streaming: bool,
    thinking: Option<ThinkingConfig>,
    first_tool_choice: ToolChoice,
    cancellation: CancellationToken,
    output_mode: OutputMode,
    output_retries: usize,
    /// Where a durable run keeps its steps' results ([`AgentRuntime::journal`]).
    journal: Option<Arc<dyn Journal>>,
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
    /// plan, and the run ends with [`FinishReason::PlanPending`] (an answer cut off by the token
    /// limit or refused ends it with [`FinishReason::ProviderStop`] instead, as outside plan mode).
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

    /// Streams answers (text arrives as [`AgentEvent::TextDelta`]s).
    pub fn streaming(mut self, on: bool) -> Self {
        self.streaming = on;
        self
    }

    /// Asks the model to think before each answer (see [`ThinkingConfig`]); the thinking text
    /// arrives as [`AgentEvent::ThinkingDelta`]s when streaming, and is kept in the transcript
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
    /// the error, before it ends with [`Budget::OutputRetries`]. Default 2.
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
