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
//! calls of its last answer, wait for decisions, or done. The loop steps it; a pause is the loop
//! stopping with the value in hand, a resume the loop stepping it again. What the run does
//! besides the loop is chosen once when it starts: its I/O ([`Journal`]ed or direct) and its
//! abilities (plan mode, the typed answer, handoffs, children's usage, the cost budget and tree
//! budgets), each a wrapper in its own file.
//!
//! # Which file decides what
//!
//! The files are grouped by what they hold, one folder a concept (named here from `runtime/`):
//!
//! | folder | file | what it decides |
//! |---|---|---|
//! | `setup/` | `agent_runtime.rs` | [`AgentRuntime`] and its builder methods |
//! | | `settings.rs` | what the builder methods set, the same for every run |
//! | | `ancestry.rs` | the runtime's place among agents when another runs it as a skill |
//! | `start/` | `run_request.rs` | how a run starts: a [`RunRequest`] (a goal, a transcript, a plan approved, a paused state with decisions) |
//! | | `in_session.rs` | a run kept in a session: loaded, continued, saved |
//! | `step/` | `run_state.rs` | the run as a value, [`RunState`], and its format version |
//! | | `drive.rs` | the run's effects and abilities, chosen once; a handoff carried on; the [`RunOutcome`] made |
//! | | `agent_loop.rs` | the loop: one step at a time, the abilities called at fixed points |
//! | | `effects.rs`, `journal.rs`, `journaled/` | the I/O of a step: direct, or each step journaled ([`Journal`]) |
//! | | `guards.rs`, `repair.rs`, `compaction.rs` | the repetition and denial guards; unanswered calls answered; the transcript summarised |
//! | | `tool_record.rs`, `spans.rs` | a tool call's result as kept; the run's `tracing` spans |
//! | `finish/` | `finish_checks.rs` | where each finish reason is decided, one check each |
//! | | `finish_reason.rs` | the [`FinishReason`]s, [`Budget`]s and [`TranscriptLimit`] |
//! | | `run_outcome.rs`, `agent_error.rs` | what a run hands back: its [`RunOutcome`], or an [`AgentError`] ([`ConfigError`], [`ResumeError`]) |
//! | | `output_type.rs`, `typed_answer.rs`, `typed_outcome.rs` | a typed run: the output asked for and its modes, the ability that checks answers, the [`TypedOutcome`] |
//! | `pause/` | `decisions.rs` | the pause: a turn held with calls waiting; decisions checked and turned back into a turn |
//! | | `admit.rs`, `seal.rs` | a state that comes back: its format, its seal, its pause claimed once; a state that leaves, sealed |
//! | `abilities/` | `ability.rs` | the `Ability` trait, and the table of abilities (checked by a test) |
//! | | `plan_mode.rs`, `cost_budget.rs`, `tree_budget.rs` | plan mode; the money budget; budgets shared with agents above ([`TreeBudget`]) |
//! | `agents/` | `sub_agent.rs` | an agent as a skill ([`SubAgent`]) |
//! | | `nesting.rs` | a run's place among nested agents, their events and usage carried up |
//! | | `inner_calls.rs` | a skill's calls inside its own call ([`InnerCalls`]) |
//! | | `handoff.rs` | handoffs: `transfer_to_<name>`, and the state carried on with the agent handed to |
//!
//! ```
//! use agent_core::Registry;
//! use agent_llm::{MockProvider, MockReply};
//! use agent_runtime::{AgentRuntime, FinishReason};
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
//!   call, cache reads and writes included. Both are the run's own; a [`TreeBudget`]
//!   ([`AgentRuntime::tree_budget`]) is shared with the agents the run calls as skills.
//! - `Stuck`: the same call (name and arguments, compared canonically) `stuck_after` times in a
//!   row, or the same error result `stuck_after` times in a row (default 3).
//! - Permission denials (`SkillError::Denied` results) end the run after
//!   `permission_denial_limit` of them — consecutive by default, or in total with
//!   [`AgentRuntime::count_denials_in_total`].
//! - Compaction starts when the transcript is over its limit: the goal (first message) and the
//!   newest turns stay; everything between is summarised by the same provider into one message.
//!   The cut never separates a tool call from its results. After two failed attempts the run ends
//!   with `TranscriptLimit` instead of trying forever.
//! - A hook that answers [`HookVerdict::Ask`](agent_core::HookVerdict::Ask) pauses the run: the turn's
//!   other calls run (batch rules unchanged), their results are kept out of the transcript, and
//!   the run ends with [`FinishReason::AwaitingApproval`] and its [`RunState`] in
//!   [`RunOutcome::state`]. [`AgentRuntime::continue_paused`] finishes the turn with the decisions
//!   (results enter the transcript in call order) and goes on where the run stopped, counters and
//!   budgets included. A session ([`RunRequest::in_session`]) keeps the conversation and the
//!   paused state in a [`SessionStore`](crate::SessionStore) under an id.
//! - A decision answers the one pending call it names, once: the call with that id, to that
//!   skill, with the arguments the person was shown (or those of their edit); a later call asks
//!   again, whatever id it has. A state whose pending list and transcript disagree, or that
//!   lists an id twice, is refused; with [`AgentRuntime::seal_states`] one changed in any way is
//!   refused ([`AgentError::Sealed`]), and with [`AgentRuntime::pause_claims`] one continued
//!   twice. Every call has an idempotency key
//!   ([`SkillContext::idempotency_key`](agent_core::SkillContext::idempotency_key)).
//! - A typed run ([`RunRequest::typed`]) ends when the model's answer passes the output's
//!   check: a `final_answer` call (tool mode) or a text answer holding the JSON (native and
//!   prompted modes; native sends the schema only on a turn where no tool can be chosen). It is
//!   still [`FinishReason::NoMoreToolCalls`], with the value in [`RunOutcome::output`]; answers
//!   that fail go back to the model with the error, and `output_retries` of them end the run with
//!   [`Budget::OutputRetries`]. The modes are described on [`OutputMode`].

mod abilities;
mod agents;
mod finish;
mod pause;
mod setup;
mod start;
mod step;

pub use abilities::tree_budget::TreeBudget;
pub use agent_core::pending::{CallRef, Decision, PathStep, PendingCall};
pub use agents::handoff::TranscriptFilter;
pub use agents::inner_calls::InnerCalls;
pub use agents::sub_agent::{Goal, SubAgent};
pub use finish::agent_error::{AgentError, ConfigError, ResumeError};
pub use finish::finish_reason::{Budget, FinishReason, TranscriptLimit};
pub use finish::output_type::{FINAL_ANSWER_TOOL, OutputMode, OutputType};
pub use finish::partial_json::{MAX_DEPTH as MAX_PARTIAL_DEPTH, PartialJson};
pub use finish::run_outcome::RunOutcome;
pub use finish::typed_outcome::TypedOutcome;
pub use finish::typed_stream::{PartialAnswer, TypedEvent};
#[doc(hidden)]
pub use pause::seal::bench_support;
pub use pause::seal::{MIN_KEY_LEN, SealError, StateKeys};
pub use setup::agent_runtime::AgentRuntime;
pub use start::run_request::{RunRequest, TypedRunRequest};
pub use step::journal::{Journal, JournalError, JournalStep, StepFuture, StepResult};
pub use step::run_state::{RUN_STATE_VERSION, RunState, Seal};
