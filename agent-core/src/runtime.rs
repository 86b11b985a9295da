//! The agent loop: send the transcript to the model, run the tool calls it makes, repeat — until
//! one of eight [`FinishReason`]s.
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

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::call::{ToolCall, ToolResult};
use crate::context::{SkillContext, SkillSession};
use crate::error::SkillError;
use crate::event::{AgentEvent, EventSink};
use crate::llm::{LlmProvider, ProviderError, StreamEvent};
use crate::message::{
    ChatRequest, ChatResponse, Message, Role, StopReason, ThinkingConfig, ToolChoice, Usage,
};
use crate::registry::Registry;

/// Why a run ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FinishReason {
    /// The model answered without calling tools: the normal end.
    NoMoreToolCalls,
    /// The model stopped for a reason other than finishing its turn (token limit, refusal, ...).
    ProviderStop(StopReason),
    /// A budget ran out.
    BudgetExceeded(Budget),
    /// The model kept doing the same thing.
    Stuck {
        /// The tool it kept calling.
        name: String,
        /// The arguments it kept sending.
        arguments: Value,
        /// How many times in a row.
        repeated: usize,
        /// The error that kept coming back, when that is what repeated.
        error: Option<String>,
    },
    /// The transcript grew past its limit and compaction could not bring it under.
    TranscriptLimit {
        /// Its size, in the limit's unit.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// In plan mode, the model presented its plan. Approve it with [`AgentRuntime::approve_plan`].
    PlanPending {
        /// The plan, as the model wrote it.
        plan: String,
    },
    /// The run's cancellation token fired.
    Cancelled,
    /// Hooks denied too many calls.
    PermissionDenialLimit {
        /// How many denials were counted.
        denials: usize,
    },
}

/// Which budget ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Budget {
    /// The number of model calls.
    Steps {
        /// The limit.
        limit: usize,
    },
    /// The number of tokens.
    Tokens {
        /// The limit.
        limit: u64,
        /// Tokens used.
        used: u64,
    },
}

/// How the transcript's size is measured against its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptLimit {
    /// Characters of text and tool arguments.
    Chars(usize),
    /// Estimated tokens (characters / 4).
    Tokens(usize),
}

/// How a run ended, with everything a caller needs to go on.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Why it ended.
    pub finish: FinishReason,
    /// The whole conversation, ready to continue with [`AgentRuntime::resume`].
    pub transcript: Vec<Message>,
    /// The model's last text, if it wrote any.
    pub final_text: Option<String>,
    /// Tokens used by the run.
    pub usage: Usage,
    /// Model calls made.
    pub steps: usize,
}

/// What ends a run abnormally. Skill failures never do: they go back to the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model could not be reached or answered with an error, after retries.
    #[error("the model call failed: {0}")]
    Provider(#[from] ProviderError),
    /// The runtime is configured in a way that cannot work.
    #[error("invalid runtime configuration: {0}")]
    Config(String),
}

/// How denials are counted against [`AgentRuntime::permission_denial_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DenialCount {
    Consecutive,
    Total,
}

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
    workspace: PathBuf,
    context: Option<SkillContext>,
    sinks: Vec<Arc<dyn EventSink>>,
    streaming: bool,
    thinking: Option<ThinkingConfig>,
    first_tool_choice: ToolChoice,
    cancellation: CancellationToken,
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
            workspace: PathBuf::from("."),
            context: None,
            sinks: Vec::new(),
            streaming: false,
            thinking: None,
            first_tool_choice: ToolChoice::Auto,
            cancellation: CancellationToken::new(),
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

    /// The workspace skills work in.
    pub fn workspace(mut self, path: impl Into<PathBuf>) -> Self {
        self.workspace = path.into();
        self
    }

    /// A context whose extensions (shared clients, settings) every skill call gets. Its workspace
    /// replaces [`AgentRuntime::workspace`]; each run still gets its own session and the runtime's
    /// cancellation token.
    pub fn context(mut self, context: SkillContext) -> Self {
        self.workspace = context.workspace_root().to_path_buf();
        self.context = Some(context);
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
        self.drive(transcript, self.plan_mode).await
    }

    /// Approves the plan of a run that ended with [`FinishReason::PlanPending`]: the same
    /// transcript continues, with plan mode off.
    pub async fn approve_plan(
        &self,
        mut transcript: Vec<Message>,
    ) -> Result<RunOutcome, AgentError> {
        transcript.push(Message::user("The plan is approved. Carry it out now."));
        self.drive(transcript, false).await
    }

    async fn drive(
        &self,
        mut transcript: Vec<Message>,
        plan_mode: bool,
    ) -> Result<RunOutcome, AgentError> {
        if transcript.is_empty() {
            return Err(AgentError::Config(
                "a run needs at least one message (the goal)".into(),
            ));
        }
        let span = tracing::info_span!(
            "invoke_agent",
            "gen_ai.operation.name" = "invoke_agent",
            "gen_ai.system" = self.provider.name(),
            "gen_ai.usage.input_tokens" = tracing::field::Empty,
            "gen_ai.usage.output_tokens" = tracing::field::Empty,
        );
        answer_unanswered_calls(&mut transcript);
        let mut run = Run::new(self, transcript, plan_mode);
        let result = run.go().instrument(span.clone()).await;
        span.record("gen_ai.usage.input_tokens", run.usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", run.usage.output_tokens);
        let finish = result?;
        run.emit(|| AgentEvent::TurnFinished {
            step: run.step,
            finish: Some(finish.clone()),
        });
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
        })
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

/// The state of one run.
struct Run<'a> {
    rt: &'a AgentRuntime,
    transcript: Vec<Message>,
    /// Size of the transcript in characters, kept up to date as messages are added.
    chars: usize,
    plan_mode: bool,
    step: usize,
    usage: Usage,
    ctx: SkillContext,
    last_call: Option<(String, usize)>,
    last_error: Option<(String, Value, String, usize)>,
    denials: usize,
    compaction_failures: usize,
}

fn message_chars(message: &Message) -> usize {
    message.content.chars().count()
        + message
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.to_string().len())
            .sum::<usize>()
}

/// Makes a transcript given to `resume` valid for both wire formats before any model sees it: the
/// results right after each assistant message that made calls answer those calls, once each, in
/// call order. A call without a result (a transcript saved before its calls were answered) gets
/// an error result saying it was not run; it is not run now, since it may have run before the
/// transcript was saved. Results that match no call are kept, after the others.
fn answer_unanswered_calls(transcript: &mut Vec<Message>) {
    let mut i = 0;
    while i < transcript.len() {
        if transcript[i].tool_calls.is_empty() {
            i += 1;
            continue;
        }
        let start = i + 1;
        let end = transcript[start..]
            .iter()
            .position(|m| m.role != Role::Tool)
            .map_or(transcript.len(), |n| start + n);
        let calls = &transcript[i].tool_calls;
        let in_order = end - start == calls.len()
            && calls
                .iter()
                .zip(&transcript[start..end])
                .all(|(call, m)| m.tool_call_id.as_ref() == Some(&call.id));
        if in_order {
            i = end;
            continue;
        }
        let calls = calls.clone();
        let mut results: Vec<Message> = transcript.drain(start..end).collect();
        let mut answers = Vec::with_capacity(calls.len() + results.len());
        for call in &calls {
            match results
                .iter()
                .position(|m| m.tool_call_id.as_ref() == Some(&call.id))
            {
                Some(at) => answers.push(results.remove(at)),
                None => answers.push(Message::tool_result(&ToolResult::new(
                    call,
                    Err(SkillError::tool(
                        "this call was not run: the conversation was resumed before it was \
                         answered. Make the call again if you still need it",
                    )),
                ))),
            }
        }
        answers.append(&mut results);
        i = start + answers.len();
        transcript.splice(start..start, answers);
    }
}

/// Arguments in a canonical form: object keys sorted at every level.
fn canonical(value: &Value) -> String {
    fn sort(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let sorted: BTreeMap<&String, Value> =
                    map.iter().map(|(k, v)| (k, sort(v))).collect();
                Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(value).to_string()
}

impl<'a> Run<'a> {
    fn new(rt: &'a AgentRuntime, transcript: Vec<Message>, plan_mode: bool) -> Self {
        let base = rt
            .context
            .clone()
            .unwrap_or_else(|| SkillContext::new(rt.workspace.clone()));
        let ctx = base
            .with_cancellation(rt.cancellation.clone())
            .with_session(SkillSession::new());
        let chars = transcript.iter().map(message_chars).sum();
        Run {
            rt,
            transcript,
            chars,
            plan_mode,
            step: 0,
            usage: Usage::default(),
            ctx,
            last_call: None,
            last_error: None,
            denials: 0,
            compaction_failures: 0,
        }
    }

    /// Sends an event to every sink. The event is built only when there is a sink to see it: an
    /// event copies the call or result it reports.
    fn emit(&self, event: impl FnOnce() -> AgentEvent) {
        if self.rt.sinks.is_empty() {
            return;
        }
        let event = event();
        for sink in &self.rt.sinks {
            sink.send(&event);
        }
    }

    fn push(&mut self, message: Message) {
        self.chars += message_chars(&message);
        self.transcript.push(message);
    }

    fn size(&self) -> Option<(usize, usize)> {
        self.rt.transcript_limit.map(|limit| match limit {
            TranscriptLimit::Chars(n) => (self.chars, n),
            TranscriptLimit::Tokens(n) => (self.chars.div_ceil(4), n),
        })
    }

    async fn go(&mut self) -> Result<FinishReason, AgentError> {
        loop {
            if let Some(finish) = self.before_step().await {
                // The caller's `TurnFinished` with this reason ends the last step.
                return Ok(finish);
            }
            // The previous step ends here, once it is known the run goes on: each step gets
            // exactly one `TurnFinished`, and only the last one carries a reason.
            if self.step > 0 {
                let step = self.step;
                self.emit(|| AgentEvent::TurnFinished { step, finish: None });
            }
            self.step += 1;
            let turn = tracing::info_span!("turn", "agent.step" = self.step);
            if let Some(finish) = self.turn().instrument(turn).await? {
                return Ok(finish);
            }
        }
    }

    /// The checks before each model call (cancellation, budgets, the transcript's size, compacting
    /// it if need be); `Some` ends the run.
    async fn before_step(&mut self) -> Option<FinishReason> {
        if self.rt.cancellation.is_cancelled() {
            return Some(FinishReason::Cancelled);
        }
        if self.step >= self.rt.max_steps {
            return Some(FinishReason::BudgetExceeded(Budget::Steps {
                limit: self.rt.max_steps,
            }));
        }
        if let Some(limit) = self.rt.max_tokens_total
            && self.usage.total() >= limit
        {
            return Some(FinishReason::BudgetExceeded(Budget::Tokens {
                limit,
                used: self.usage.total(),
            }));
        }
        self.keep_within_limit().await
    }

    /// One model call and the tool calls it makes. `Some` ends the run.
    async fn turn(&mut self) -> Result<Option<FinishReason>, AgentError> {
        let step = self.step;
        let Some(response) = self.call_model().await? else {
            return Ok(Some(FinishReason::Cancelled));
        };
        self.usage += response.usage;
        self.emit(|| AgentEvent::Usage {
            step,
            usage: response.usage,
            total: self.usage,
        });
        if !response.message.content.is_empty() {
            self.emit(|| AgentEvent::AssistantText {
                step,
                text: response.message.content.clone(),
            });
        }
        let ChatResponse {
            message,
            stop_reason,
            truncated_tool_calls,
            ..
        } = response;
        let calls = message.tool_calls.clone();
        self.push(message);
        // Calls the token limit cut off are never run, but the model must hear of them: after the
        // results of the calls it finished, if any.
        let cut_off = (!truncated_tool_calls.is_empty()).then(|| {
            let names: Vec<String> = truncated_tool_calls
                .iter()
                .map(|c| format!("`{}`", c.name))
                .collect();
            Message::user(format!(
                "Your answer was cut off by the token limit while you were writing a call to {}; \
                 it was not run. Make the call again with shorter arguments (for example, split the work).",
                names.join(", ")
            ))
        });

        if calls.is_empty() {
            if let Some(notice) = cut_off {
                self.push(notice);
                return Ok(None);
            }
            return Ok(Some(match stop_reason {
                // Only an answer the model finished is a plan: one cut off by the token limit or
                // refused is not something to approve.
                StopReason::EndTurn | StopReason::ToolUse | StopReason::StopSequence(_)
                    if self.plan_mode =>
                {
                    let plan = self
                        .transcript
                        .last()
                        .map(|m| m.content.clone())
                        .unwrap_or_default();
                    FinishReason::PlanPending { plan }
                }
                StopReason::EndTurn | StopReason::ToolUse | StopReason::StopSequence(_) => {
                    FinishReason::NoMoreToolCalls
                }
                other => FinishReason::ProviderStop(other),
            }));
        }

        if let Some(stuck) = self.repeated_call(&calls) {
            // Answer the calls so the transcript stays valid, without running them again.
            for call in &calls {
                let result = ToolResult::new(
                    call,
                    Err(SkillError::Denied(
                        "the same call was repeated; the run stops here".into(),
                    )),
                );
                self.emit(|| AgentEvent::ToolCall {
                    step,
                    call: call.clone(),
                });
                self.emit(|| AgentEvent::ToolResult {
                    step,
                    result: result.clone(),
                });
                self.push(Message::tool_result(&result));
            }
            return Ok(Some(stuck));
        }

        for call in &calls {
            self.emit(|| AgentEvent::ToolCall {
                step,
                call: call.clone(),
            });
        }
        let results = self.run_calls(&calls).await;
        for result in &results {
            self.emit(|| AgentEvent::ToolResult {
                step,
                result: result.clone(),
            });
            self.push(Message::tool_result(result));
        }
        if let Some(notice) = cut_off {
            self.push(notice);
        }
        if self.rt.cancellation.is_cancelled() {
            return Ok(Some(FinishReason::Cancelled));
        }
        if let Some(finish) = self.count_denials(&results) {
            return Ok(Some(finish));
        }
        if let Some(finish) = self.repeated_error(&results, &calls) {
            return Ok(Some(finish));
        }
        Ok(None)
    }

    /// Calls the model; `None` when the run was cancelled meanwhile.
    async fn call_model(&mut self) -> Result<Option<ChatResponse>, AgentError> {
        let step = self.step;
        let definitions = self.rt.registry.definitions_for(self.ctx.session());
        let mut request = ChatRequest::new(&self.transcript)
            .tools(&definitions)
            .max_tokens(self.rt.max_tokens_per_call);
        request.thinking = self.rt.thinking;
        if step == 1 {
            request.tool_choice = self.rt.first_tool_choice.clone();
        }
        let request = match &self.rt.system {
            Some(system) => request.system(system),
            None => request,
        };
        let span = tracing::info_span!(
            "chat",
            "gen_ai.operation.name" = "chat",
            "gen_ai.system" = self.rt.provider.name(),
            "gen_ai.usage.input_tokens" = tracing::field::Empty,
            "gen_ai.usage.output_tokens" = tracing::field::Empty,
        );
        let sinks = &self.rt.sinks;
        let emit = |event: AgentEvent| sinks.iter().for_each(|s| s.send(&event));
        let call = async {
            if !self.rt.streaming {
                return self.rt.provider.complete(&request).await;
            }
            let mut stream = self.rt.provider.stream(&request);
            while let Some(event) = stream.next().await {
                match event? {
                    StreamEvent::TextDelta(text) => emit(AgentEvent::TextDelta { step, text }),
                    StreamEvent::ThinkingDelta(text) => {
                        emit(AgentEvent::ThinkingDelta { step, text })
                    }
                    StreamEvent::Retry {
                        attempt,
                        delay,
                        error,
                    } => emit(AgentEvent::Retry {
                        step,
                        attempt,
                        delay,
                        error,
                    }),
                    StreamEvent::Done(response) => return Ok(response),
                    _ => {}
                }
            }
            Err(ProviderError::Stream {
                provider: self.rt.provider.name().to_owned(),
                error_type: None,
                message: "the stream ended without a complete answer".into(),
            })
        }
        .instrument(span.clone());
        let response = tokio::select! {
            biased;
            _ = self.rt.cancellation.cancelled() => return Ok(None),
            response = call => response?,
        };
        span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
        Ok(Some(response))
    }

    /// Runs the calls through the registry; in plan mode, calls that are not read-only are denied
    /// with an explanation instead.
    async fn run_calls(&mut self, calls: &[ToolCall]) -> Vec<ToolResult> {
        if !self.plan_mode {
            return self.rt.registry.run_many(calls, &self.ctx).await;
        }
        let allowed: Vec<ToolCall> = calls
            .iter()
            .filter(|c| {
                self.rt
                    .registry
                    .metadata(&c.name)
                    .is_none_or(|m| m.is_read_only)
            })
            .cloned()
            .collect();
        let mut ran = self
            .rt
            .registry
            .run_many(&allowed, &self.ctx)
            .await
            .into_iter();
        calls
            .iter()
            .map(|call| {
                if self.rt.registry.metadata(&call.name).is_none_or(|m| m.is_read_only) {
                    ran.next().expect("one result per allowed call")
                } else {
                    ToolResult::new(
                        call,
                        Err(SkillError::Denied(format!(
                            "plan mode: `{}` changes things and cannot run yet. Use read-only tools to \
                             investigate, then present your plan as your answer, without tool calls",
                            call.name
                        ))),
                    )
                }
            })
            .collect()
    }

    fn repeated_call(&mut self, calls: &[ToolCall]) -> Option<FinishReason> {
        for call in calls {
            let key = format!("{}:{}", call.name, canonical(&call.arguments));
            let count = match &self.last_call {
                Some((last, n)) if *last == key => n + 1,
                _ => 1,
            };
            self.last_call = Some((key, count));
            if count >= self.rt.stuck_after {
                return Some(FinishReason::Stuck {
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    repeated: count,
                    error: None,
                });
            }
        }
        None
    }

    fn repeated_error(
        &mut self,
        results: &[ToolResult],
        calls: &[ToolCall],
    ) -> Option<FinishReason> {
        for (result, call) in results.iter().zip(calls) {
            match &result.output {
                Err(error) if !matches!(error, SkillError::Cancelled) => {
                    let text = error.to_string();
                    let count = match &self.last_error {
                        Some((name, _, last, n)) if *name == call.name && *last == text => n + 1,
                        _ => 1,
                    };
                    self.last_error = Some((
                        call.name.clone(),
                        call.arguments.clone(),
                        text.clone(),
                        count,
                    ));
                    if count >= self.rt.stuck_after {
                        return Some(FinishReason::Stuck {
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                            repeated: count,
                            error: Some(text),
                        });
                    }
                }
                _ => self.last_error = None,
            }
        }
        None
    }

    fn count_denials(&mut self, results: &[ToolResult]) -> Option<FinishReason> {
        let limit = self.rt.denial_limit?;
        for result in results {
            match (&result.output, self.rt.denial_count) {
                (Err(SkillError::Denied(_)), _) => self.denials += 1,
                (_, DenialCount::Consecutive) => self.denials = 0,
                (_, DenialCount::Total) => {}
            }
        }
        (self.denials >= limit).then_some(FinishReason::PermissionDenialLimit {
            denials: self.denials,
        })
    }

    /// Compacts the transcript when it is over its limit; `Some` when it cannot be kept under, or
    /// when the run is cancelled while the summary is written (the transcript is then unchanged).
    async fn keep_within_limit(&mut self) -> Option<FinishReason> {
        loop {
            let (size, limit) = self.size()?;
            if size <= limit {
                return None;
            }
            if self.compaction_failures >= 2 {
                return Some(FinishReason::TranscriptLimit { size, limit });
            }
            let Some(cut) = self.compaction_cut() else {
                return Some(FinishReason::TranscriptLimit { size, limit });
            };
            // The summary is a model call like any other: the run's token cancels it.
            let summary = tokio::select! {
                biased;
                _ = self.rt.cancellation.cancelled() => return Some(FinishReason::Cancelled),
                summary = self.summarise(1..cut) => summary,
            };
            // The summary's tokens are the run's like any others, and count against its budget.
            let summary = summary.map(|(summary, usage)| {
                self.usage += usage;
                summary
            });
            match summary.filter(|s| !s.trim().is_empty()) {
                Some(summary) => {
                    let removed = cut - 1;
                    let summary_chars = summary.chars().count();
                    let message = Message::user(format!(
                        "[Summary of the earlier part of this conversation]\n{summary}"
                    ));
                    self.transcript.splice(1..cut, [message]);
                    self.chars = self.transcript.iter().map(message_chars).sum();
                    let kept = self.transcript.len() - 1;
                    self.emit(|| AgentEvent::Compacted {
                        step: self.step,
                        removed,
                        kept,
                        summary_chars,
                    });
                    let (size, _) = self.size()?;
                    if size > limit && self.compaction_cut().is_none() {
                        return Some(FinishReason::TranscriptLimit { size, limit });
                    }
                }
                None => self.compaction_failures += 1,
            }
        }
    }

    /// Where the kept tail starts: at least `keep_recent` messages from the end, at a message that
    /// is not a tool result (so no call is separated from its results), after the goal and leaving
    /// at least two messages to summarise.
    fn compaction_cut(&self) -> Option<usize> {
        let len = self.transcript.len();
        let mut cut = len.saturating_sub(self.rt.keep_recent.max(1));
        while cut > 0 && self.transcript[cut].role == Role::Tool {
            cut -= 1;
        }
        (cut >= 3).then_some(cut)
    }

    /// A summary of `range` by the run's model, with the tokens it took; `None` when the call
    /// failed. The text may be empty (the model wrote nothing).
    async fn summarise(&self, range: std::ops::Range<usize>) -> Option<(String, Usage)> {
        let mut text = String::new();
        for message in &self.transcript[range] {
            let who = match message.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool result",
            };
            text.push_str(&format!("[{who}] {}\n", message.content));
            for call in &message.tool_calls {
                text.push_str(&format!("[tool call] {} {}\n", call.name, call.arguments));
            }
        }
        let prompt = [Message::user(format!(
            "Summarise this part of an agent's work so it can continue without it: what was \
             tried, what was found (files, facts, numbers), what failed and what is left to do. \
             Be concise.\n\n{text}"
        ))];
        let request = ChatRequest::new(&prompt)
            .system("You write concise, factual summaries.")
            .max_tokens(1024);
        let response = self.rt.provider.complete(&request).await.ok()?;
        Some((response.message.content, response.usage))
    }
}
