//! eugene: build AI agents in Rust, where a tool ("skill") is an ordinary `async fn`.
//!
//! The root holds what a first agent needs: a skill ([`#[skill]`](macro@skill), [`SkillContext`],
//! [`SkillError`]), a [`Registry`] of them, a model ([`AnthropicProvider`], [`OpenAiProvider`],
//! [`OpenAiResponsesProvider`], [`GeminiProvider`], or [`MockProvider`] for tests), an
//! [`AgentRuntime`] that runs them, what a run ends with ([`RunOutcome`], [`FinishReason`]), a
//! person's say over calls ([`PermissionGate`], [`Decision`]), and media ([`Media`], [`Content`]).
//! Everything else lives in a module named by what it is about:
//!
//! | module | what it holds | the crate behind it |
//! |---|---|---|
//! | [`skills`] | the skill model: the registry, hooks, contexts, retries, tool calls, pending calls, digests | `agent-core` |
//! | [`media`] | images, documents and audio: parts, their checks, files read as media | `agent-core`'s `content` |
//! | [`llm`] | messages, the providers and their wire formats, prices, cassettes (feature `cassette`) | `agent-llm` |
//! | [`run`] | the loop and its settings, run states and seals, sessions, events, journals, tracing | `agent-runtime` |
//! | `mcp`, `a2a`, `agui`, `code`, `restate`, `eval`, `otel` | the protocols and integrations, each behind its feature | `agent-mcp`, … |
//!
//! Features: `http` (default) brings the HTTP providers, `redb` (default) sessions kept in a
//! file, `agent-skills` (default) `agent_skills!`, `mcp` the `mcp` module, `a2a` the `a2a` module,
//! `agui` the `agui` module (AG-UI for user interfaces), `code` the `code` module (code mode), `restate` the `restate` module, `eval` the `eval` module
//! (evals), `cassette` recorded model traffic for tests (`llm::cassette`), `otel` the `otel`
//! module (OpenTelemetry export of the runs' spans). A crate that only defines skills can depend
//! on `agent-core` alone instead: no providers, no loop, no HTTP/TLS or storage crate.
//!
//! The wire formats are the providers' business, not a first agent's: they are in [`llm`], never
//! at the root.
//!
//! ```
//! use eugene::llm::{AnthropicWire, HttpProvider, MediaRules, SseDecoder, WireCodec};
//! ```
//!
//! ```compile_fail
//! use eugene::AnthropicWire;
//! ```
//!
//! ```compile_fail
//! use eugene::HttpProvider;
//! ```
//!
//! ```compile_fail
//! use eugene::WireCodec;
//! ```
//!
//! ```compile_fail
//! use eugene::SseDecoder;
//! ```
//!
//! ```compile_fail
//! use eugene::MediaRules;
//! ```

#![warn(missing_docs)]

// What a first agent needs.
#[cfg(feature = "agent-skills")]
pub use agent_core::{AgentSkill, agent_skills};
pub use agent_core::{
    Content, Decision, Media, Permission, PermissionGate, Registry, Skill, SkillContext,
    SkillError, SkillOutput, ToolCall, skill,
};
#[cfg(feature = "http")]
pub use agent_llm::{AnthropicProvider, GeminiProvider, OpenAiProvider, OpenAiResponsesProvider};
pub use agent_llm::{LlmProvider, Message, MockProvider, MockReply, ProviderError, Usage};
pub use agent_runtime::{AgentError, AgentEvent, AgentRuntime, FinishReason, RunOutcome, RunState};

/// The `schemars` a skill's JSON Schemas are derived with.
pub use agent_core::schemars;
/// The `serde` a skill's arguments are read with (derive `Deserialize` with it).
pub use agent_core::serde;
/// The `serde_json` a skill's arguments and outputs are values of.
pub use agent_core::serde_json;

// What `#[skill]` and `agent_skills!` expand to, where a crate names eugene rather than
// agent-core: not an API.
#[doc(hidden)]
pub use agent_core::{__private, DynSkill, EmbeddedAgentSkill, EmbeddedFile, SkillRegistration};

/// The skill model (`agent-core`): the registry and dispatch, hooks and permission rules, what a
/// running skill reaches, retries, tool calls and results, calls waiting for a person and their
/// digests.
pub use agent_core as skills;

/// Images, documents and audio (`agent-core`'s `content`): [`Media`],
/// [`Content`], their checks before sending, files read as media.
pub use agent_core::content as media;

/// Messages and models (`agent-llm`): the conversation, the providers and their wire formats,
/// streaming, prices and costs, recorded model traffic (`cassette`, with its feature).
pub use agent_llm as llm;

/// Runs (`agent-runtime`): the loop and its settings, run states and their seals, sessions,
/// events, journals, tracing.
pub use agent_runtime as run;

/// Model Context Protocol: serve a registry as an MCP server, use MCP servers' tools as skills
/// (cargo feature `mcp`; `oauth` adds logging in to remote servers behind OAuth 2.1).
#[cfg(feature = "mcp")]
pub use agent_mcp as mcp;

/// Agent2Agent (A2A 1.0): serve a runtime as an A2A agent, use remote A2A agents as skills
/// (cargo feature `a2a`).
#[cfg(feature = "a2a")]
pub use agent_a2a as a2a;

/// AG-UI 1.0: serve a runtime to user interfaces as a stream of AG-UI events over SSE, its pauses
/// as interrupts a person resumes with decisions (cargo feature `agui`).
#[cfg(feature = "agui")]
pub use agent_agui as agui;

/// Code mode: `run_code` runs a JavaScript program whose functions are the registry's skills, in
/// a QuickJS sandbox, every call gated, paused and journaled like a direct one (cargo feature
/// `code`).
#[cfg(feature = "code")]
pub use agent_code as code;

/// Durable runs on Restate (`agent-restate`), with the `restate` feature.
#[cfg(feature = "restate")]
pub use agent_restate as restate;

/// Evals: datasets of cases run against an agent, pass rates, cost and latency, JUnit XML and
/// comparisons (`agent-eval`, cargo feature `eval`).
#[cfg(feature = "eval")]
pub use agent_eval as eval;

/// OpenTelemetry: the runs' `invoke_agent`, `chat` and `execute_tool` spans (the GenAI semantic
/// conventions) exported over OTLP, HTTP or gRPC, set up in one call (`agent-otel`, cargo feature
/// `otel`).
#[cfg(feature = "otel")]
pub use agent_otel as otel;

pub mod guide;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
