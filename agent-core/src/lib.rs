//! The core of the eugene agent framework: skills, the registry that describes and runs them,
//! hooks, and retries — what a crate of skills needs, and nothing more.
//!
//! # What it owns, and what it must not depend on
//!
//! | module | central type | what it is for |
//! |---|---|---|
//! | [`skill`](mod@skill) | [`Skill`], [`DynSkill`], [`#[skill]`](macro@skill) | a tool the model can call: typed input, flags, `run`; the attribute that writes one |
//! | [`agent_skills`](mod@agent_skills) | [`AgentSkill`] | instructions the model loads when a task calls for them (`SKILL.md` folders), a level at a time |
//! | [`content`] | [`Media`], [`Content`] | images, documents and audio: in messages, in skills' answers; checked before sending |
//! | [`context`] | [`SkillContext`] | what a running skill reaches: workspace, cancellation, session, extensions |
//! | [`registry`] | [`Registry`] | finding skills, describing them to the model, running calls |
//! | [`hook`] | [`SkillHook`] | allowing, denying, rewriting or replacing calls; inspecting results |
//! | [`retry`] | [`RetryPolicy`] | retrying transient failures with backoff |
//! | [`schema`] | [`ToolDefinition`] | what the model is shown of a skill |
//! | [`call`] | [`ToolCall`], [`ToolResult`] | one call from the model and its answer |
//! | [`error`] | [`SkillError`], [`RegistryError`] | what can go wrong, in words the model can act on |
//!
//! The conversation and the model providers are `agent-llm`'s (`Message`, `LlmProvider`); the
//! agent loop, sessions and run events are `agent-runtime`'s (`AgentRuntime`, `SessionStore`,
//! `AgentEvent`). This crate depends on neither, and on no HTTP, TLS or storage crate: Cargo
//! keeps the skills out of the loop, and an edit to the loop or a provider does not rebuild it
//! or the crates of skills above it. The `eugene` facade re-exports all three.
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
//! (error enums), `strsim` (suggesting close skill names), `foldhash` (the name index's hasher:
//! a lookup per call, on names the registry chose, so a fast hasher without flooding defenses
//! fits), `tracing` (spans for skill calls, named after the OpenTelemetry GenAI conventions).
//!
//! # A crate of skills
//!
//! A library that only defines skills (to serve them over MCP, to plug them into another model
//! client, or to keep its own users' builds light) depends on `agent-core` alone: `#[skill]`,
//! link-time registration, the [`Registry`] and hooks, and the build compiles no HTTP, TLS or
//! storage crate. Feature `agent-skills` adds [`agent_skills!`](macro@agent_skills).

#![warn(missing_docs)]

pub mod agent_skills;
pub mod call;
pub mod content;
pub mod context;
pub mod digest;
pub mod error;
pub mod hook;
mod idempotency;
mod macro_support;
pub mod outcome;
pub mod pending;
pub mod registry;
pub mod retry;
pub mod schema;
mod shared_str;
pub mod skill;

/// Compiles a folder of Agent Skills (`SKILL.md` folders) into the program, checked against the
/// format's specification at compile time and offered by [`Registry::discover`] through
/// `load_skill` (feature `agent-skills`; see [`agent_skills`](mod@agent_skills) for the model).
#[cfg(feature = "agent-skills")]
pub use agent_macros::agent_skills;
/// Turns an ordinary `async fn` into a skill the model can call.
///
/// ```
/// use agent_core::{skill, Registry, SkillContext, SkillError};
///
/// /// Search the project for a regular expression.
/// ///
/// /// Longer prose here is part of the description the model sees.
/// ///
/// /// # Arguments
/// /// * `pattern` - A Rust regex.
/// /// * `max_results` - Stop after this many hits.
/// #[skill(read_only, aliases = ["grep", "rg"], search_hint = "find text regex", timeout = "30s")]
/// pub async fn search_files(
///     ctx: &SkillContext,
///     pattern: String,
///     max_results: Option<u32>,
/// ) -> Result<String, SkillError> {
///     Ok(format!("searched {} for {pattern}", ctx.workspace_root().display()))
/// }
///
/// let mut registry = Registry::new();
/// registry.add(SearchFilesSkill); // the generated unit struct
/// assert_eq!(registry.definitions()[0].input_schema["required"], serde_json::json!(["pattern"]));
/// ```
///
/// # Keys
///
#[doc = include_str!("skill_keys.md")]
///
///
/// # Parameters
///
/// - At most one `&SkillContext`, in any position; it is not part of the schema.
/// - Every other parameter is a field of the input: any owned type that implements
///   `Deserialize` and `JsonSchema`, the user's own structs and enums included. Borrowed types
///   (`&str`), `impl Trait` and patterns are compile errors that say what to write instead.
/// - `Option<T>` is not required. `#[arg(default)]` (the type's `Default`) and
///   `#[arg(default = expr)]` make a parameter optional with that default; `#[arg(rename = "q")]`
///   changes the name the model uses.
/// - Descriptions come from the doc comment's `# Arguments` section, written
///   `` * `name` - text `` or `` - `name`: text `` (continuation lines are joined). Every
///   parameter needs one, because the model reads nothing else about it: a parameter without an
///   entry is a compile error at its name, and so is describing a name that is not a parameter.
///   `#[arg(undocumented)]` opts one parameter out, for a name that says it all (`path`, `url`).
/// - The context is borrowed for the call: `ctx: SkillContext` by value is a compile error that
///   says to take `&SkillContext`.
///
/// # Return type
///
/// `Result<T, E>` (or a one-parameter alias such as `std::io::Result<T>` or `anyhow::Result<T>`):
///
/// - `T` is `String` or `&'static str` (plain text, sent as is), `serde_json::Value` or
///   [`SkillOutput`] (passed on as they are), `()` (answered with the short confirmation `done`),
///   or any type with `Serialize` and `JsonSchema`: your own structs and enums, `Vec<_>`, maps,
///   numbers, `bool`, `Option<_>`. A typed value is [`SkillOutput::Json`]: the model reads it as
///   compact JSON text, hooks' `after` sees it structured, and its JSON Schema, generated once
///   when the skill is added ([`schema::schema_for_output`]), is [`Skill::output_schema`], in
///   [`ToolDefinition::output_schema`] and served by MCP as `outputSchema`. A value that fails to
///   serialize (a map whose keys are not strings) is an error result, not a panic. `T` is owned
///   (or `'static`): a `&str` borrowed from the context would end with the call, so it is a
///   compile error that says to return `String`; so is `impl Trait`, which has no schema.
/// - `E: Into<SkillError>` keeps its meaning (return `SkillError::Transient` to be retried).
///   Any other error that converts into `Box<dyn Error + Send + Sync>` works too and becomes
///   [`SkillError::Tool`] with the error as its source: `std::io::Error`, your own error types,
///   boxed errors and `anyhow::Error` all need no conversion code.
///
/// # What it generates
///
/// - The function, unchanged and still callable (a skill is a plain function you can unit test).
/// - A unit struct named after the function in UpperCamelCase with a `Skill` suffix
///   (`search_files` → `SearchFilesSkill`), or `struct_name = ...`, with the function's
///   visibility, implementing [`Skill`]: `registry.add(SearchFilesSkill)`.
/// - A hidden input struct with `#[serde(deny_unknown_fields)]` whose `Deserialize` and
///   `JsonSchema` are derived through agent-core's re-exports: your crate needs no serde,
///   schemars, async-trait or inventory dependency of its own. Your own parameter and output
///   types can derive through the re-exports [`serde`](mod@serde) and
///   [`schemars`](mod@schemars), as below.
/// - An `inventory` registration with the name, module path, file and line, unless
///   `register = false`.
/// - Checks that turn trait errors into one sentence at your tokens: a parameter type without
///   `Deserialize`/`JsonSchema` (the only error of the build for it, at the parameter's type), a future that is not `Send` (pointing at the `.await` that holds
///   the culprit), an `Ok` type without `Serialize` or `JsonSchema` (saying what to derive).
///
/// # Names
///
/// The unit struct is the one generated name you write, and the `Skill` suffix keeps it apart
/// from the names you give your own types: a skill `forecast` may return a `Forecast`, a skill
/// `query` take a `Query`, a skill `user` return a `User`. Everything else the attribute
/// generates sits in an anonymous `const _` block and steps aside from every identifier written
/// in the function, so it never takes one of your names either.
///
/// ```
/// use agent_core::{schemars, serde, skill, Registry, SkillError};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// #[serde(crate = "agent_core::serde")]
/// #[schemars(crate = "agent_core::schemars")]
/// pub struct Forecast {
///     pub celsius: f64,
/// }
///
/// /// Forecast tomorrow's weather.
/// #[skill(read_only)]
/// pub async fn forecast() -> Result<Forecast, SkillError> {
///     Ok(Forecast { celsius: 21.5 })
/// }
///
/// /// Forecast the weather in a named city.
/// ///
/// /// # Arguments
/// /// * `city` - The city's name in English.
/// #[skill(read_only, struct_name = CityForecaster)]
/// pub async fn city_forecast(city: String) -> Result<Forecast, SkillError> {
///     Ok(Forecast { celsius: if city == "Oslo" { 4.0 } else { 21.5 } })
/// }
///
/// let mut registry = Registry::new();
/// registry.add(ForecastSkill).add(CityForecaster);
/// assert!(registry.contains("forecast") && registry.contains("city_forecast"));
/// ```
///
/// If a type of yours in the same module is named exactly like the generated struct (a
/// `struct ForecastSkill` beside `fn forecast`), yours keeps the name and the build fails with one
/// error at the function's name: "`#[skill]` on `forecast` generates a unit struct
/// `ForecastSkill`, but `ForecastSkill` already names another type in this module: rename that
/// type, or name the generated struct with `#[skill(struct_name = ...)]`". Two functions whose
/// names differ only in case style (`get_user`, `getUser`) would both generate `GetUserSkill`,
/// which rustc reports as ambiguous at both: give one a `struct_name`.
///
/// # Linking
///
/// [`Registry::discover`] finds every skill of every crate linked into the binary, in every
/// module, in debug and release. A crate is linked once the binary names anything from it; if it
/// names nothing, add one line, `use my_skills as _;`. Forgetting it when no other skill is
/// linked makes `discover()` fail with [`RegistryError::NothingDiscovered`], which says so.
pub use agent_macros::skill;
pub use agent_skills::{AgentSkill, AgentSkillFiles, EmbeddedAgentSkill, EmbeddedFile};
pub use async_trait::async_trait;
pub use call::{SharedStr, ToolCall, ToolResult};
pub use content::{Content, Media, MediaKind, Part};
pub use context::{RunScope, SkillContext};
pub use error::{RegistryError, SkillError, SourceLocation};
pub use hook::{
    AllowFn, HookFuture, HookVerdict, Permission, PermissionFn, PermissionGate, PermissionRule,
    SkillHook,
};
#[doc(hidden)]
pub use idempotency::TurnKeys;
pub use outcome::{Outcome, Pause};
#[doc(hidden)]
pub use pending::{CallRef, Decision, PathStep, PendingCall, Resumption, Suspension};
pub use registry::{
    CurrentRegistry, DestructiveCalls, LiveSkills, Registry, SkillRegistration, WeakLiveSkills,
};
pub use retry::{RetryPolicy, RetryableError, with_retry, with_retry_notify};
pub use schema::ToolDefinition;
/// The `schemars` this crate derives JSON Schemas with, re-exported so that a crate of skills
/// can derive `JsonSchema` for its own parameter and output types without depending on
/// schemars itself (and always with the version the registry reads):
/// `#[derive(agent_core::schemars::JsonSchema)] #[schemars(crate = "agent_core::schemars")]`.
pub use schemars;
/// The `serde` this crate reads arguments and writes outputs with, re-exported so that a crate
/// of skills can derive `Serialize`/`Deserialize` for its own types without depending on serde
/// itself: `#[derive(agent_core::serde::Deserialize)] #[serde(crate = "agent_core::serde")]`.
pub use serde;
/// The `serde_json` this crate's arguments and outputs are values of, re-exported so that a crate
/// of skills can write `agent_core::serde_json::json!` and name `Value` without depending on it.
pub use serde_json;
pub use skill::{DynSkill, ParsedInput, Skill, SkillFuture, SkillMetadata, SkillOutput};
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
