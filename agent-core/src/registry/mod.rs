//! The registry: the set of skills an agent can use, what the model is told about them, and how
//! their calls are run.
//!
//! ```
//! use agent_core::{async_trait, Registry, Skill, SkillContext, SkillError, SkillOutput, ToolCall};
//! # use agent_core::{schemars, serde};
//! # #[derive(serde::Deserialize, schemars::JsonSchema)]
//! # #[serde(crate = "agent_core::serde")]
//! # #[schemars(crate = "agent_core::schemars")]
//! # struct Input { text: String }
//! # struct Shout;
//! # #[async_trait]
//! # impl Skill for Shout {
//! #     type Input = Input;
//! #     fn name(&self) -> &str { "shout" }
//! #     fn description(&self) -> &str { "Upper-case the text." }
//! #     fn is_read_only(&self) -> bool { true }
//! #     async fn run(&self, input: Input, _: &SkillContext) -> Result<SkillOutput, SkillError> {
//! #         Ok(input.text.to_uppercase().into())
//! #     }
//! # }
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let mut registry = Registry::new();
//! registry.add(Shout);
//! assert_eq!(registry.definitions()[0].name, "shout");
//!
//! let calls = [
//!     ToolCall::new("1", "shout", serde_json::json!({"text": "hi"})),
//!     ToolCall::new("2", "whisper", serde_json::json!({})),
//! ];
//! let results = registry.run_many(&calls, &SkillContext::default()).await;
//! assert_eq!(results[0].content(), "HI");
//! assert_eq!(results[1].content(), "unknown skill `whisper`; available skills: `shout`");
//! # }
//! ```
//!
//! Skills defined with `#[skill]` are found with [`Registry::discover`]; skills written by hand are
//! added with [`Registry::add`]. How calls run (batches, hooks, retries, timeouts, cancellation,
//! truncation) is described on [`Registry::run_many`].

mod current;
mod destructive;
mod discover;
mod dispatch;
mod entry;
mod execute;
mod guard;
mod hooks;
mod load_skill;
mod names;
mod pieces;
mod prepared;
mod registration;
mod settings;
mod skills;
mod suggest;
mod tool_search;
mod truncate;

use std::sync::Arc;

pub use current::CurrentRegistry;
pub use destructive::DestructiveCalls;
pub use names::is_valid_name;
pub use registration::SkillRegistration;
pub use settings::{DEFAULT_MAX_CONCURRENCY, DEFAULT_OUTPUT_BUDGET};
#[cfg(feature = "test-utils")]
pub use truncate::truncate_text;

use crate::context::RunScope;
use crate::error::{RegistryError, SourceLocation};
use crate::hook::SkillHook;
use crate::retry::RetryPolicy;
use crate::schema::ToolDefinition;
use crate::skill::{DynSkill, SkillMetadata};
use hooks::Hooks;
use settings::Settings;
use skills::Skills;

/// The skills an agent can use. See the [module docs](self).
#[derive(Default)]
pub struct Registry {
    /// The skills and the index of their names.
    skills: Skills,
    /// The hooks, in the order added.
    hooks: Hooks,
    /// How calls run.
    settings: Settings,
}

impl Registry {
    /// An empty registry with the default settings: at most [`DEFAULT_MAX_CONCURRENCY`] calls at
    /// once, results cut at [`DEFAULT_OUTPUT_BUDGET`] characters, [`RetryPolicy::default`].
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds a skill.
    ///
    /// # Panics
    /// If its name or an alias is already taken or invalid, like overlapping routes in axum: that is
    /// a bug in the program, found on its first run. Use [`Registry::try_add`] to handle it instead.
    pub fn add<S: DynSkill>(&mut self, skill: S) -> &mut Self {
        if let Err(error) = self.try_add(skill) {
            panic!("{error}");
        }
        self
    }

    /// Adds a skill, or says why it cannot be added (and changes nothing).
    pub fn try_add<S: DynSkill>(&mut self, skill: S) -> Result<&mut Self, RegistryError> {
        self.try_add_shared(Arc::new(skill))
    }

    /// Adds a skill that is already behind an `Arc` (one made at run time, for example).
    pub fn try_add_shared(&mut self, skill: Arc<dyn DynSkill>) -> Result<&mut Self, RegistryError> {
        self.insert(skill, None)?;
        Ok(self)
    }

    /// Adds a hook; hooks run in the order they were added (see [`crate::hook`]).
    pub fn with_hook(&mut self, hook: impl SkillHook) -> &mut Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// How transient failures are retried, for skills that do not set their own policy.
    pub fn with_retry_policy(&mut self, policy: RetryPolicy) -> &mut Self {
        self.settings.retry_policy = policy;
        self
    }

    /// How many concurrency-safe calls may run at once (at least 1).
    pub fn with_max_concurrency(&mut self, limit: usize) -> &mut Self {
        self.settings.max_concurrency = limit.max(1);
        self
    }

    /// How many characters of a result the model gets; longer results are cut with a notice.
    /// The built-in `load_skill` hands longer instructions and files over in pieces that fit.
    pub fn with_output_budget(&mut self, chars: usize) -> &mut Self {
        self.settings.output_budget = chars;
        self.skills.set_output_budget(chars);
        self
    }

    /// Whether a skill has this name or alias.
    pub fn contains(&self, name_or_alias: &str) -> bool {
        self.skills.get(name_or_alias).is_some()
    }

    /// The metadata of the skill with this name or alias.
    pub fn metadata(&self, name_or_alias: &str) -> Option<&SkillMetadata> {
        self.skills.get(name_or_alias).map(|e| &e.metadata)
    }

    /// The skill with this name or alias.
    pub fn get(&self, name_or_alias: &str) -> Option<&Arc<dyn DynSkill>> {
        self.skills.get(name_or_alias).map(|e| &e.skill)
    }

    /// Where the skill with this name or alias was defined, when it was discovered.
    pub fn location(&self, name_or_alias: &str) -> Option<SourceLocation> {
        self.skills.get(name_or_alias).and_then(|e| e.location)
    }

    /// The names of all skills, deferred ones included, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.skills
            .entries()
            .iter()
            .map(|e| e.definition.name.as_str())
    }

    /// How many skills there are, deferred ones and the built-in `tool_search` included.
    pub fn len(&self) -> usize {
        self.skills.entries().len()
    }

    /// Whether there are no skills.
    pub fn is_empty(&self) -> bool {
        self.skills.entries().is_empty()
    }

    /// What the model is shown: every skill that is not deferred, in the order added. The schemas
    /// were generated when the skills were added; this only clones them.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.skills.definitions(|_| false)
    }

    /// What the model is shown in `session`: [`Registry::definitions`] plus the deferred skills
    /// `tool_search` loaded in that session.
    pub fn definitions_for(&self, session: &RunScope) -> Vec<ToolDefinition> {
        self.skills.definitions(|name| session.is_loaded(name))
    }

    /// Adds a skill found at `location` (`None`: added by hand).
    fn insert(
        &mut self,
        skill: Arc<dyn DynSkill>,
        location: Option<SourceLocation>,
    ) -> Result<(), RegistryError> {
        self.skills.insert(skill, location)
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("skills", &self.names().collect::<Vec<_>>())
            .field("hooks", &self.hooks.len())
            .field("max_concurrency", &self.settings.max_concurrency)
            .field("output_budget", &self.settings.output_budget)
            .finish_non_exhaustive()
    }
}
