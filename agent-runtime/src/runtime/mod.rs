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
//! `journal.rs`) and its abilities (plan mode, the typed answer, handoffs, children's usage,
//! the cost budget and tree budgets: the table in `ability.rs`), each a wrapper in its own file; the pause is `pause.rs`. A state that comes back is checked in
//! `admit.rs` (its format, its seal from `seal.rs`, its pause claimed once) before the decisions
//! are. A run starts one way, a [`RunRequest`] (`start.rs`), kept in a session by
//! `in_session.rs`.
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

mod ability;
mod admit;
mod agent_runtime;
mod ancestry;
mod answer;
mod compaction;
mod cost_budget;
mod drive;
mod effects;
mod error;
mod finish;
mod guards;
mod handoff;
mod in_session;
mod inner;
mod journal;
mod journaled;
mod nesting;
mod outcome;
mod output;
mod pause;
mod plan;
mod reason;
mod record;
mod repair;
mod run;
mod seal;
mod settings;
mod spans;
mod start;
mod state;
mod sub_agent;
mod tree_budget;
mod typed;

pub use agent_core::pending::{CallRef, Decision, Hop, PendingCall};
pub use agent_runtime::AgentRuntime;
pub use error::{AgentError, ConfigError, ResumeError};
pub use handoff::TranscriptFilter;
pub use inner::InnerCalls;
pub use journal::{Journal, JournalError, JournalStep, StepFuture, StepResult};
pub use outcome::RunOutcome;
pub use output::{FINAL_ANSWER_TOOL, OutputMode, OutputType};
pub use reason::{Budget, FinishReason, TranscriptLimit};
#[doc(hidden)]
pub use seal::bench_support;
pub use seal::{MIN_KEY_LEN, SealError, StateKeys};
pub use start::{RunRequest, TypedRunRequest};
pub use state::{RUN_STATE_VERSION, RunState, Seal};
pub use sub_agent::{Goal, SubAgent};
pub use tree_budget::TreeBudget;
pub use typed::TypedOutcome;
