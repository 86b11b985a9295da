//! eugene: build AI agents in Rust, where a tool ("skill") is an ordinary `async fn`.
//!
//! This facade re-exports everything from [`agent_core`] (skills, the registry, hooks, retries),
//! [`agent_llm`] (messages and model providers) and [`agent_runtime`] (the agent loop, sessions,
//! events); depend on `eugene` alone. See the README for the walkthrough and those crates' docs
//! for the manual.
//!
//! Features: `http` (default) brings the Anthropic and OpenAI-compatible providers, `redb`
//! (default) sessions kept in a file, `mcp` the `mcp` module, `a2a` the `a2a` module, `code` the `code`
//! module (code mode), `restate` the `restate` module, `eval` the `eval` module (evals),
//! `cassette` the `cassette` module (recorded model traffic for tests), `otel` the `otel` module
//! (OpenTelemetry export of the runs' spans).
//! A crate that only defines skills can depend on `agent-core` alone instead: no providers, no
//! loop, no HTTP/TLS or storage crate.

#![warn(missing_docs)]

pub use agent_core::*;
pub use agent_llm::*;
pub use agent_runtime::*;

/// Model Context Protocol: serve a registry as an MCP server, use MCP servers' tools as skills
/// (cargo feature `mcp`; `oauth` adds logging in to remote servers behind OAuth 2.1).
#[cfg(feature = "mcp")]
pub use agent_mcp as mcp;

/// Agent2Agent (A2A 1.0): serve a runtime as an A2A agent, use remote A2A agents as skills
/// (cargo feature `a2a`).
#[cfg(feature = "a2a")]
pub use agent_a2a as a2a;

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

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
