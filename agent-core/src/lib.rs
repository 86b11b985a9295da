//! The core of the eugene agent framework: skills, the registry that describes and runs them,
//! hooks, and retries.
//!
//! # The pieces
//!
//! | module | central type | what it is for |
//! |---|---|---|
//! | [`skill`] | [`Skill`], [`DynSkill`] | a tool the model can call: typed input, flags, `run` |
//! | [`context`] | [`SkillContext`] | what a running skill reaches: workspace, cancellation, session, extensions |
//! | [`registry`] | [`Registry`] | finding skills, describing them to the model, running calls |
//! | [`hook`] | [`SkillHook`] | allowing, denying, rewriting or replacing calls; inspecting results |
//! | [`retry`] | [`RetryPolicy`] | retrying transient failures with backoff |
//! | [`schema`] | [`ToolDefinition`] | what the model is shown of a skill |
//! | [`call`] | [`ToolCall`], [`ToolResult`] | one call from the model and its answer |
//! | [`error`] | [`SkillError`], [`RegistryError`] | what can go wrong, in words the model can act on |
//!
//! # One turn of tool calls
//!
//! ```text
//! model's tool calls ──► resolve name/alias ──► validate args ──► hooks.before (in order)
//!                                                                      │
//!   results, in call order ◄── truncate ◄── hooks.after ◄── run (timeout, retry, cancel)
//! ```
//!
//! Consecutive concurrency-safe calls run together (bounded); every other call runs alone. Every
//! call gets exactly one result, errors included, in the order the calls were made — see
//! [`Registry::run_many`].
//!
//! # Dependencies, and why
//!
//! `serde`/`serde_json` (arguments), `serde_path_to_error` (errors that name the bad field),
//! `schemars` (JSON Schemas of inputs), `inventory` (link-time discovery of `#[skill]`s),
//! `async-trait` (object-safe async traits), `tokio` and `tokio-util` (timers, `select!`,
//! `CancellationToken`), `futures` (bounded ordered concurrency, panic capture), `thiserror`
//! (error enums), `strsim` (suggesting close skill names).

#![warn(missing_docs)]

pub mod call;
pub mod context;
pub mod error;
pub mod hook;
mod macro_support;
pub mod registry;
pub mod retry;
pub mod schema;
pub mod skill;

pub use agent_macros::skill;
pub use async_trait::async_trait;
pub use call::{ToolCall, ToolResult};
pub use context::{SkillContext, SkillSession};
pub use error::{RegistryError, SkillError, SourceLocation};
pub use hook::{HookOutcome, PermissionGate, SkillHook};
pub use registry::Registry;
pub use retry::{RetryPolicy, RetryableError, with_retry, with_retry_notify};
pub use schema::ToolDefinition;
pub use skill::{DynSkill, ParsedInput, Skill, SkillMetadata, SkillOutput, SkillRegistration};
pub use tokio_util::sync::CancellationToken;

/// Paths used by code that `#[skill]` generates. Not a stable API: use the crates directly.
#[doc(hidden)]
pub mod __private {
    pub use crate::macro_support::*;
    pub use async_trait;
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;
}
