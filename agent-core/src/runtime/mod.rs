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
//! The loop is closed on purpose: new abilities arrive as skills, hooks or providers, never as
//! branches in here. Every step emits [`AgentEvent`]s, and every turn's tool calls are all
//! answered (errors included) before the next model call, so the transcript is always valid for
//! both wire formats.
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
//!   the run ends with [`FinishReason::AwaitingApproval`] and a [`RunState`] in
//!   [`RunOutcome::state`]. [`AgentRuntime::resume_state`] finishes the turn with the decisions
//!   (results enter the transcript in call order) and goes on where the run stopped, counters and
//!   budgets included. A session ([`AgentRuntime::session`]) keeps the conversation and the paused
//!   state in a [`SessionStore`](crate::SessionStore) under an id.
//! - A typed run ([`AgentRuntime::run_typed`]) ends when the model's answer passes the output's
//!   check: a `final_answer` call (tool mode) or a text answer holding the JSON (native and
//!   prompted modes; native sends the schema only on a turn where no tool can be chosen). It is
//!   still [`FinishReason::NoMoreToolCalls`], with the value in [`RunOutcome::output`]; answers
//!   that fail go back to the model with the error, and `output_retries` of them end the run with
//!   [`Budget::OutputRetries`]. The modes are described on [`OutputMode`].

mod compaction;
mod guards;
mod journal;
pub(crate) mod outcome;
mod output;
pub(crate) mod pause;
mod repair;
mod run;
pub(crate) mod state;
mod typed;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::SkillContext;
use crate::event::{AgentEvent, EventSink};
use crate::llm::LlmProvider;
use crate::message::{Message, Role, ThinkingConfig, ToolChoice};
use crate::registry::Registry;

use guards::DenialCount;
pub use journal::{Journal, JournalError, JournalStep, StepFuture, StepOutcome};
pub use outcome::{AgentError, Budget, FinishReason, RunOutcome, TranscriptLimit};
pub use output::{FINAL_ANSWER_TOOL, OutputMode, OutputType};
pub use state::{Decision, PendingCall, RUN_STATE_VERSION, RunState};
pub use typed::TypedOutcome;

use run::Run;

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

    /// Runs an agent on a goal.
    pub async fn run(&self, goal: impl Into<String>) -> Result<RunOutcome, AgentError> {
        self.resume(vec![Message::user(goal)]).await
    }

    /// Continues a conversation (multi-turn chat): append the user's next message to the previous
    /// outcome's transcript and resume.
    ///
    /// A tool call the transcript leaves unanswered (one saved before its results were) is
    /// answered with an error result saying it was not run, so the model is never sent a call
    /// without its result; the model may make it again.
    pub async fn resume(&self, transcript: Vec<Message>) -> Result<RunOutcome, AgentError> {
        self.drive(transcript, self.plan_mode, None).await
    }

    /// Approves the plan of a run that ended with [`FinishReason::PlanPending`]: the same
    /// transcript continues, with plan mode off.
    pub async fn approve_plan(&self, transcript: Vec<Message>) -> Result<RunOutcome, AgentError> {
        self.drive(approved(transcript), false, None).await
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

    async fn drive(
        &self,
        transcript: Vec<Message>,
        plan_mode: bool,
        output: Option<OutputType>,
    ) -> Result<RunOutcome, AgentError> {
        self.drive_from(Start::Fresh(transcript), plan_mode, output)
            .await
    }

    async fn drive_from(
        &self,
        start: Start,
        plan_mode: bool,
        output: Option<OutputType>,
    ) -> Result<RunOutcome, AgentError> {
        // In plan mode the run ends in a plan; the typed value is asked for once it is approved.
        let output = match output.filter(|_| !plan_mode) {
            Some(output) => Some(self.output_state(output)?),
            None => None,
        };
        let span = tracing::info_span!(
            "invoke_agent",
            "gen_ai.operation.name" = "invoke_agent",
            "gen_ai.system" = self.provider.name(),
            "gen_ai.usage.input_tokens" = tracing::field::Empty,
            "gen_ai.usage.output_tokens" = tracing::field::Empty,
        );
        let result;
        let mut run;
        match start {
            Start::Fresh(mut transcript) => {
                if transcript.is_empty() {
                    return Err(AgentError::Config(
                        "a run needs at least one message (the goal)".into(),
                    ));
                }
                repair::answer_unanswered_calls(&mut transcript);
                run = Run::new(self, transcript, plan_mode, output);
                result = run.go().instrument(span.clone()).await;
            }
            Start::Paused(state, decisions) => {
                let RunState {
                    transcript,
                    pending,
                    done,
                    notice,
                    ..
                } = (*state).clone();
                run = Run::new(self, transcript, plan_mode, output);
                run.restore(&state);
                let resumed = async {
                    match run
                        .finish_paused_turn(done, pending, decisions, notice)
                        .await
                    {
                        Some(finish) => Ok(finish),
                        None => run.go().await,
                    }
                };
                result = resumed.instrument(span.clone()).await;
            }
        }
        span.record("gen_ai.usage.input_tokens", run.usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", run.usage.output_tokens);
        let finish = result?;
        run.emit(|| AgentEvent::TurnFinished {
            step: run.step,
            finish: Some(finish.clone()),
        });
        let state = run
            .paused
            .take()
            .map(|paused| Box::new(run.state_of(paused)));
        let final_text = run
            .transcript
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.content.is_empty())
            .map(|m| m.content.clone());
        Ok(RunOutcome {
            finish,
            transcript: run.transcript,
            final_text,
            usage: run.usage,
            steps: run.step,
            output: run.answer,
            state,
        })
    }
}

/// The transcript with the user's approval of the plan added.
fn approved(mut transcript: Vec<Message>) -> Vec<Message> {
    transcript.push(Message::user("The plan is approved. Carry it out now."));
    transcript
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

/// Where a run starts: a transcript, or a paused run and the decisions that continue it.
enum Start {
    Fresh(Vec<Message>),
    Paused(Box<RunState>, HashMap<String, Decision>),
}
