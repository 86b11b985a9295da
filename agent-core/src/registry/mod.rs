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
//!
//! A registry does not change once a runtime holds it (behind an `Arc`), except for the sets of
//! skills added with [`Registry::add_live`] ([`LiveSkills`]), whose owner may replace their
//! skills at any time: an MCP server's tools follow its list that way.

mod current;
mod destructive;
mod discover;
mod dispatch;
mod entry;
mod execute;
mod guard;
mod hooks;
mod live;
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
pub use live::{LiveSkills, WeakLiveSkills};
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
use live::LiveView;
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
    /// The sets whose skills may change while a runtime holds the registry, in the order added.
    live: Vec<LiveSkills>,
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

    /// Adds a set of skills that may change while a runtime holds the registry (see
    /// [`LiveSkills`]): each model turn is shown the skills the set has when it starts, and each
    /// batch of calls runs the ones it has when the batch starts, with the registry's hooks,
    /// rules, timeouts and output budget like any other skill.
    ///
    /// The registry's own skills come first: a skill of the set named like one of them (or like
    /// one of an earlier set) is neither shown nor called; the other is. A set that holds a
    /// deferred skill when it is added brings the built-in `tool_search`, which then finds the
    /// set's deferred skills as they are at each search. In a registry without `tool_search`, a
    /// set's deferred skills are shown like the others, so none is out of the model's reach.
    pub fn add_live(&mut self, skills: LiveSkills) -> &mut Self {
        if skills.snapshot().has_deferred() {
            self.skills.ensure_tool_search();
        }
        self.skills.search_index().add_live(skills.search_index());
        self.live.push(skills);
        self
    }

    /// Whether the registry holds a [`LiveSkills`] set: then its skills may change while a
    /// runtime holds it.
    pub fn has_live_skills(&self) -> bool {
        !self.live.is_empty()
    }

    /// A number that changes whenever one of the registry's [`LiveSkills`] sets is replaced
    /// (the sum of their [`LiveSkills::version`]s); 0 without live sets. Compared before and
    /// after something ran, it says whether the skills may have changed meanwhile.
    pub fn live_version(&self) -> u64 {
        self.live
            .iter()
            .fold(0, |sum, set| sum.wrapping_add(set.version()))
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

    /// Whether a skill has this name or alias (one of a live set's included, as it is now).
    pub fn contains(&self, name_or_alias: &str) -> bool {
        self.skills.get(name_or_alias).is_some() || self.live().lookup(name_or_alias).is_some()
    }

    /// The metadata of the skill with this name or alias (one of a live set's included, as it is
    /// now).
    pub fn metadata(&self, name_or_alias: &str) -> Option<SkillMetadata> {
        match self.skills.get(name_or_alias) {
            Some(entry) => Some(entry.metadata.clone()),
            None => self
                .live()
                .lookup(name_or_alias)
                .map(|(_, e)| e.metadata.clone()),
        }
    }

    /// The skill with this name or alias (one of a live set's included, as it is now).
    pub fn get(&self, name_or_alias: &str) -> Option<Arc<dyn DynSkill>> {
        match self.skills.get(name_or_alias) {
            Some(entry) => Some(entry.skill.clone()),
            None => self
                .live()
                .lookup(name_or_alias)
                .map(|(_, e)| e.skill.clone()),
        }
    }

    /// Where the skill with this name or alias was defined, when it was discovered.
    pub fn location(&self, name_or_alias: &str) -> Option<SourceLocation> {
        self.skills.get(name_or_alias).and_then(|e| e.location)
    }

    /// The names of all skills, deferred ones included, in the order they were added; then those
    /// of the live sets, as they are now.
    pub fn names(&self) -> impl Iterator<Item = String> + '_ {
        let live = self.live();
        let live: Vec<String> = live
            .entries(&self.skills)
            .map(|e| e.definition.name.clone())
            .collect();
        self.skills
            .entries()
            .iter()
            .map(|e| e.definition.name.clone())
            .chain(live)
    }

    /// How many skills there are, deferred ones, the built-in `tool_search` and the live sets'
    /// (as they are now) included.
    pub fn len(&self) -> usize {
        self.skills.entries().len() + self.live().entries(&self.skills).count()
    }

    /// Whether there are no skills.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the model is shown: every skill that is not deferred, in the order added, then the
    /// live sets' as they are now. The schemas were generated when the skills were added; this
    /// only clones them.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.definitions_where(|_| false)
    }

    /// What the model is shown in `session`: [`Registry::definitions`] plus the deferred skills
    /// `tool_search` loaded in that session.
    pub fn definitions_for(&self, session: &RunScope) -> Vec<ToolDefinition> {
        self.definitions_where(|name| session.is_loaded(name))
    }

    /// The definitions of the skills not deferred, and of the deferred ones `loaded` accepts (a
    /// live set's all, when there is no `tool_search` to load them).
    fn definitions_where(&self, loaded: impl Fn(&str) -> bool) -> Vec<ToolDefinition> {
        let mut definitions = self.skills.definitions(&loaded);
        if self.live.is_empty() {
            return definitions;
        }
        let searchable = self.skills.get(tool_search::NAME).is_some();
        let live = self.live();
        definitions.extend(
            live.entries(&self.skills)
                .filter(|e| !e.metadata.should_defer || !searchable || loaded(&e.definition.name))
                .map(|e| e.definition.clone()),
        );
        definitions
    }

    /// The live sets' skills now.
    #[inline]
    fn live(&self) -> LiveView {
        LiveView::of(&self.live)
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
            .field("live_sets", &self.live.len())
            .field("hooks", &self.hooks.len())
            .field("max_concurrency", &self.settings.max_concurrency)
            .field("output_budget", &self.settings.output_budget)
            .finish_non_exhaustive()
    }
}
