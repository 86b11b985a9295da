//! The agent loop of the eugene agent framework: [`AgentRuntime`] and its [`FinishReason`]s,
//! typed results, runs paused for a person ([`RunState`]), the [`Journal`] of durable runs,
//! sessions kept across processes ([`SessionStore`]), and the [`AgentEvent`]s of a run.
//!
//! # What it owns, and what it must not depend on
//!
//! | module | central type | what it is for |
//! |---|---|---|
//! | [`runtime`] | [`AgentRuntime`] | the agent loop, its [`FinishReason`]s, typed results, runs paused for a person ([`RunState`]) |
//! | [`session`](mod@session) | [`SessionStore`] | conversations and paused runs kept under an id, across processes |
//! | [`event`] | [`AgentEvent`], [`EventSink`] | what happens during a run, as it happens |
//! | [`trace`] | [`trace::TraceContext`] | one trace across processes, and whether content is recorded on spans |
//!
//! It depends on `agent-core` (skills, the registry, hooks) and `agent-llm` (messages and
//! providers). Nothing of the skill model or the providers depends on it: standard skills never
//! reach into the loop, and an edit to the loop rebuilds only what uses it.
//!
//! # Dependencies, and why
//!
//! `serde`/`serde_json` (the run as a value, journals), `schemars` (typed outputs' schemas),
//! `async-trait` (object-safe [`SessionStore`] and [`Journal`]), `tokio`, `tokio-util` and
//! `futures` (cancellation, timers), `thiserror` (error enums), `tracing` (spans for runs, turns
//! and model calls, named after the OpenTelemetry GenAI conventions), `redb` (feature `redb`,
//! default: [`RedbSessionStore`], sessions in one transactional file, pure Rust). It compiles no
//! HTTP or TLS crate of its own: those come with `agent-llm`'s feature `http`.

#![warn(missing_docs)]

pub mod event;
pub mod runtime;
pub mod session;
pub mod trace;

pub use event::{AgentEvent, EventSink};
pub use runtime::{
    AgentError, AgentRuntime, Budget, CallRef, ConfigError, Decision, FINAL_ANSWER_TOOL,
    FinishReason, Goal, InnerCalls, OutputMode, OutputType, PartialAnswer, PathStep, PendingCall,
    RUN_STATE_VERSION, ResumeError, RunOutcome, RunRequest, RunState, SealError, StateKeys,
    SubAgent, TranscriptFilter, TranscriptLimit, TreeBudget, TypedEvent, TypedOutcome,
    TypedRunRequest,
};

#[doc(hidden)]
pub use runtime::bench_support;
pub use runtime::{Journal, JournalError, JournalStep, StepFuture, StepResult};
#[cfg(feature = "redb")]
pub use session::RedbSessionStore;
pub use session::{
    LoadedSession, MemorySessionStore, PauseClaims, SessionRecord, SessionStore, StoreError,
};
