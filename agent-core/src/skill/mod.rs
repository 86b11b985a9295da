//! The skill model: the typed [`Skill`] trait a tool implements, its object-safe twin [`DynSkill`]
//! that registries store, the [`SkillMetadata`] hooks and runtimes read, the [`SkillOutput`] a skill
//! returns. (What `#[skill]` submits for link-time discovery is in [`crate::registry`].)
//!
//! Most skills are written with the [`#[skill]`](macro@crate::skill) attribute, which generates the
//! `Skill` impl; its manual (keys, parameters, return types, what it generates) is on the
//! attribute's page, not this module's. Written by hand, a skill looks like this:
//!
//! ```
//! use agent_core::{async_trait, schemars, serde, Skill, SkillContext, SkillError, SkillOutput};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(crate = "agent_core::serde", deny_unknown_fields)]
//! #[schemars(crate = "agent_core::schemars")]
//! struct EchoInput {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! struct Echo;
//!
//! #[async_trait]
//! impl Skill for Echo {
//!     type Input = EchoInput;
//!     fn name(&self) -> &str { "echo" }
//!     fn description(&self) -> &str { "Send the text back unchanged." }
//!     fn is_read_only(&self) -> bool { true }
//!     async fn run(&self, input: EchoInput, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
//!         Ok(input.text.into())
//!     }
//! }
//! ```

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::content::Content;
use crate::context::SkillContext;
use crate::error::SkillError;
use crate::retry::RetryPolicy;
use crate::schema;

mod args;

pub use args::{kind_of, parse_args};

/// A tool the model can call, with a typed input.
///
/// The flags are conservative by default: a skill is assumed to write (`is_read_only` is `false`),
/// and only read-only skills run concurrently unless they say otherwise. A registry reads every
/// flag once, when the skill is added.
#[async_trait]
pub trait Skill: Send + Sync + 'static {
    /// The arguments, deserialized from the model's JSON. Its `JsonSchema` is what the model is shown.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;

    /// The name the model calls the skill by; it must match `^[a-zA-Z0-9_-]{1,64}$`.
    fn name(&self) -> &str;

    /// What the skill does, written for the model.
    fn description(&self) -> &str;

    /// Whether the skill only reads. Defaults to `false`: a skill that does not say is treated as
    /// one that writes (fail closed), so plan modes and permission gates stop it.
    fn is_read_only(&self) -> bool {
        false
    }

    /// Whether the skill does something hard to undo (delete, overwrite, run commands).
    fn is_destructive(&self) -> bool {
        false
    }

    /// Whether calls may run at the same time as other concurrency-safe calls. Defaults to
    /// [`Skill::is_read_only`].
    fn is_concurrency_safe(&self) -> bool {
        self.is_read_only()
    }

    /// Whether running a call again has no further effect: the skill hands
    /// [`SkillContext::idempotency_key`] to what it changes (an API that deduplicates by it, a
    /// unique key), or its effect is the same however often it happens. Defaults to
    /// [`Skill::is_read_only`]. A durable run runs a call again when the process died while it
    /// ran only if its skill is idempotent (read-only skills are); any other such call is
    /// answered as interrupted instead, since it may have taken effect.
    fn is_idempotent(&self) -> bool {
        self.is_read_only()
    }

    /// Whether the skill is left out of the definitions sent to the model until `tool_search`
    /// loads it into the session. Useful for rarely needed or risky skills.
    fn should_defer(&self) -> bool {
        false
    }

    /// Extra words `tool_search` matches against, beyond the name and description.
    fn search_hint(&self) -> Option<&str> {
        None
    }

    /// Other names the model may use for this skill.
    fn aliases(&self) -> &[&'static str] {
        &[]
    }

    /// How long one attempt may take before it fails with [`SkillError::Timeout`].
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// How transient failures of this skill are retried; `None` uses the registry's policy.
    fn retry_policy(&self) -> Option<RetryPolicy> {
        None
    }

    /// Whether the skill records the steps it takes in the run's journal itself (an agent used as
    /// a skill: its model and tool calls are journaled steps of the durable run it runs in). A
    /// journaled run then does not wrap the call in a step of its own, which would nest steps.
    /// Default: `false`.
    fn journals_its_steps(&self) -> bool {
        false
    }

    /// The JSON Schema of the structured value the skill answers with ([`SkillOutput::Json`]),
    /// if it declares one. A registry calls this once, when the skill is added, and shows it in
    /// [`ToolDefinition::output_schema`](crate::ToolDefinition::output_schema) and
    /// [`SkillMetadata::output_schema`]; MCP serves it as the tool's `outputSchema`. `#[skill]`
    /// generates it from a typed return value
    /// ([`schema_for_output`](crate::schema::schema_for_output)); a skill written by hand may
    /// declare one the same way. Default: none.
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// Runs the skill.
    async fn run(&self, input: Self::Input, ctx: &SkillContext) -> Result<SkillOutput, SkillError>;
}

/// What a skill returns: text, JSON the provider serializes for the model, or content with
/// media.
///
/// A `#[skill]` function that returns a typed value (a struct, an enum, a `Vec`, a number...)
/// answers with [`SkillOutput::Json`]: the model reads it as compact JSON text, hooks' `after`
/// sees the structured value, and MCP sends it as `structuredContent`. One that returns a
/// [`Media`](crate::content::Media) or a [`Content`] answers with [`SkillOutput::Content`]: the
/// model sees the image, document or sound itself (see `agent_llm`'s providers for how each wire
/// format carries media in a tool result).
#[derive(Debug, Clone, PartialEq)]
pub enum SkillOutput {
    /// Plain text, sent as is.
    Text(String),
    /// Structured data, sent as compact JSON text.
    Json(Value),
    /// Text and media, in order.
    Content(Content),
}

impl SkillOutput {
    /// Structured output.
    pub fn json(value: Value) -> Self {
        SkillOutput::Json(value)
    }

    /// The text the model sees (of content with media: its text parts, joined by newlines).
    pub fn to_text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            SkillOutput::Text(text) => std::borrow::Cow::Borrowed(text),
            SkillOutput::Json(value) => std::borrow::Cow::Owned(value.to_string()),
            SkillOutput::Content(content) => content.text_only(),
        }
    }

    /// The media the model sees beside the text, in order (none for text and JSON).
    pub fn media(&self) -> impl Iterator<Item = &crate::content::Media> {
        let parts: &[crate::content::Part] = match self {
            SkillOutput::Content(content) => &content.parts,
            SkillOutput::Text(_) | SkillOutput::Json(_) => &[],
        };
        parts.iter().filter_map(crate::content::Part::as_media)
    }
}

impl From<Content> for SkillOutput {
    fn from(content: Content) -> Self {
        SkillOutput::Content(content)
    }
}

impl From<crate::content::Media> for SkillOutput {
    fn from(media: crate::content::Media) -> Self {
        SkillOutput::Content(media.into())
    }
}

impl From<String> for SkillOutput {
    fn from(text: String) -> Self {
        SkillOutput::Text(text)
    }
}

impl From<&str> for SkillOutput {
    fn from(text: &str) -> Self {
        SkillOutput::Text(text.to_owned())
    }
}

impl From<Value> for SkillOutput {
    fn from(value: Value) -> Self {
        SkillOutput::Json(value)
    }
}

/// Everything about a skill except how to run it: what hooks, permission gates and runtimes
/// decide on. Cloning is cheap (reference counts only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillMetadata {
    /// The skill's name.
    pub name: Arc<str>,
    /// See [`Skill::is_read_only`].
    pub is_read_only: bool,
    /// See [`Skill::is_destructive`].
    pub is_destructive: bool,
    /// See [`Skill::is_concurrency_safe`].
    pub is_concurrency_safe: bool,
    /// See [`Skill::is_idempotent`].
    pub is_idempotent: bool,
    /// See [`Skill::should_defer`].
    pub should_defer: bool,
    /// See [`Skill::aliases`].
    pub aliases: Arc<[Arc<str>]>,
    /// See [`Skill::search_hint`].
    pub search_hint: Option<Arc<str>>,
    /// The skill's output schema ([`DynSkill::output_schema`]), filled in by the registry when the
    /// skill is added; [`DynSkill::metadata`] itself leaves it `None`, since generating a schema
    /// may be costly.
    pub output_schema: Option<Arc<Value>>,
}

/// Arguments that passed validation, ready for [`DynSkill::run_parsed`]. Opaque: only the skill
/// that parsed them can use them.
pub struct ParsedInput(Box<dyn Any + Send>);

impl ParsedInput {
    /// Wraps a parsed value. Implementations of [`DynSkill`] that are not [`Skill`]s (for example a
    /// skill proxied from an MCP server) use this to carry their own representation.
    pub fn new<T: Any + Send>(value: T) -> Self {
        ParsedInput(Box::new(value))
    }

    /// Takes the value back, if it is a `T`.
    pub fn downcast<T: Any>(self) -> Result<T, SkillError> {
        self.0.downcast::<T>().map(|b| *b).map_err(|_| {
            SkillError::tool("internal error: arguments were parsed by a different skill")
        })
    }
}

impl std::fmt::Debug for ParsedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ParsedInput(..)")
    }
}

/// The object-safe form of [`Skill`], taking JSON arguments. Every `Skill` is a `DynSkill`; a
/// registry stores `Arc<dyn DynSkill>`. Implement it directly only for skills whose schema is known
/// at run time (skills proxied from another process, for example).
#[async_trait]
pub trait DynSkill: Send + Sync + 'static {
    /// See [`Skill::name`].
    fn name(&self) -> &str;
    /// See [`Skill::description`].
    fn description(&self) -> &str;
    /// The skill's flags, aliases and hint.
    fn metadata(&self) -> SkillMetadata;
    /// The JSON Schema of the input, as sent to the model. Generating it may be costly; a registry
    /// calls this once, when the skill is added.
    fn input_schema(&self) -> Value;
    /// See [`Skill::output_schema`]; called once, when the skill is added. Default: none.
    fn output_schema(&self) -> Option<Value> {
        None
    }
    /// See [`Skill::timeout`].
    fn timeout(&self) -> Option<Duration>;
    /// See [`Skill::retry_policy`].
    fn retry_policy(&self) -> Option<RetryPolicy>;
    /// See [`Skill::journals_its_steps`]. Default: `false`.
    fn journals_its_steps(&self) -> bool {
        false
    }
    /// Validates the model's arguments. Errors are [`SkillError::BadArgs`] naming the field.
    fn parse(&self, args: &Value) -> Result<ParsedInput, SkillError>;
    /// Runs the skill on arguments [`DynSkill::parse`] accepted.
    async fn run_parsed(
        &self,
        input: ParsedInput,
        ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError>;

    /// Validates the arguments and starts the skill on them: [`DynSkill::parse`] then
    /// [`DynSkill::run_parsed`] in one step. A registry uses it when no hook has to see the
    /// validated arguments before the skill runs; every [`Skill`] implements it without boxing
    /// the parsed input in between.
    fn start<'a>(
        &'a self,
        args: &Value,
        ctx: &'a SkillContext,
    ) -> Result<SkillFuture<'a>, SkillError> {
        let input = self.parse(args)?;
        Ok(self.run_parsed(input, ctx))
    }
}

/// The future of one running skill call, as [`DynSkill::start`] returns it.
pub type SkillFuture<'a> =
    Pin<Box<dyn Future<Output = Result<SkillOutput, SkillError>> + Send + 'a>>;

#[async_trait]
impl<S: Skill> DynSkill for S {
    fn name(&self) -> &str {
        Skill::name(self)
    }

    fn description(&self) -> &str {
        Skill::description(self)
    }

    fn metadata(&self) -> SkillMetadata {
        SkillMetadata {
            name: Arc::from(Skill::name(self)),
            is_read_only: self.is_read_only(),
            is_destructive: self.is_destructive(),
            is_concurrency_safe: self.is_concurrency_safe(),
            is_idempotent: self.is_idempotent(),
            should_defer: self.should_defer(),
            aliases: self.aliases().iter().map(|a| Arc::from(*a)).collect(),
            search_hint: self.search_hint().map(Arc::from),
            output_schema: None,
        }
    }

    fn input_schema(&self) -> Value {
        schema::schema_for_input::<S::Input>()
    }

    fn output_schema(&self) -> Option<Value> {
        Skill::output_schema(self)
    }

    fn timeout(&self) -> Option<Duration> {
        Skill::timeout(self)
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        Skill::retry_policy(self)
    }

    fn journals_its_steps(&self) -> bool {
        Skill::journals_its_steps(self)
    }

    fn parse(&self, args: &Value) -> Result<ParsedInput, SkillError> {
        parse_args::<S::Input>(args).map(ParsedInput::new)
    }

    // Written out instead of `async fn` so the skill's own boxed future is returned as is: one
    // allocation and one poll layer less per call than wrapping it in another boxed future.
    fn run_parsed<'life0, 'life1, 'async_trait>(
        &'life0 self,
        input: ParsedInput,
        ctx: &'life1 SkillContext,
    ) -> Pin<Box<dyn Future<Output = Result<SkillOutput, SkillError>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        match input.downcast::<S::Input>() {
            Ok(input) => self.run(input, ctx),
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }

    fn start<'a>(
        &'a self,
        args: &Value,
        ctx: &'a SkillContext,
    ) -> Result<SkillFuture<'a>, SkillError> {
        parse_args::<S::Input>(args).map(|input| self.run(input, ctx))
    }
}
