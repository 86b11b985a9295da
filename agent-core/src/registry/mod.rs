//! The registry: the set of skills an agent can use, what the model is told about them, and how
//! their calls are run.
//!
//! ```
//! use agent_core::{async_trait, Registry, Skill, SkillContext, SkillError, SkillOutput, ToolCall};
//! # use agent_core::__private::{schemars, serde};
//! # #[derive(serde::Deserialize, schemars::JsonSchema)]
//! # #[serde(crate = "agent_core::__private::serde")]
//! # #[schemars(crate = "agent_core::__private::schemars")]
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

mod dispatch;
mod suggest;
mod tool_search;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

pub use dispatch::truncate_text;

use crate::call::SharedStr;
use crate::context::SkillSession;
use crate::error::{RegistryError, SourceLocation};
use crate::hook::SkillHook;
use crate::retry::RetryPolicy;
use crate::schema::{self, ToolDefinition};
use crate::skill::{DynSkill, SkillMetadata, SkillRegistration};
use tool_search::{SearchDoc, ToolSearch};

/// How many concurrency-safe calls run at once, unless [`Registry::with_max_concurrency`] says otherwise.
pub const DEFAULT_MAX_CONCURRENCY: usize = 10;

/// How many characters of a result the model gets, unless [`Registry::with_output_budget`] says otherwise.
pub const DEFAULT_OUTPUT_BUDGET: usize = 16_000;

/// The skills an agent can use. See the [module docs](self).
pub struct Registry {
    entries: Vec<Entry>,
    by_name: HashMap<SharedStr, usize, foldhash::fast::RandomState>,
    hooks: Vec<Arc<dyn SkillHook>>,
    retry_policy: RetryPolicy,
    max_concurrency: usize,
    output_budget: usize,
    search_index: Option<Arc<RwLock<Vec<SearchDoc>>>>,
}

pub(crate) struct Entry {
    pub(crate) skill: Arc<dyn DynSkill>,
    pub(crate) metadata: SkillMetadata,
    pub(crate) definition: ToolDefinition,
    pub(crate) location: Option<SourceLocation>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) retry_policy: Option<RetryPolicy>,
    builtin: bool,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl Registry {
    /// An empty registry with the default settings: at most [`DEFAULT_MAX_CONCURRENCY`] calls at
    /// once, results cut at [`DEFAULT_OUTPUT_BUDGET`] characters, [`RetryPolicy::default`].
    pub fn new() -> Self {
        Registry {
            entries: Vec::new(),
            by_name: HashMap::default(),
            hooks: Vec::new(),
            retry_policy: RetryPolicy::default(),
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            output_budget: DEFAULT_OUTPUT_BUDGET,
            search_index: None,
        }
    }

    /// A registry of every skill registered with `#[skill]` in this binary (and the crates it links),
    /// ordered by name so the definitions sent to the model are the same from run to run.
    ///
    /// Two skills with the same name (or alias) are an error naming both source locations; finding
    /// no skill at all is an error too ([`RegistryError::NothingDiscovered`]), because it almost
    /// always means a crate of skills was not linked.
    pub fn discover() -> Result<Registry, RegistryError> {
        Registry::discover_where(|_| true)
    }

    /// Like [`Registry::discover`], keeping only the registrations `keep` accepts. One binary may
    /// host several agents, each with its own skills:
    ///
    /// ```no_run
    /// # use agent_core::Registry;
    /// let coder = Registry::discover_where(|r| r.is_in_module("my_app::coding"))?;
    /// let reader = Registry::discover_where(|r| ["read_file", "list_dir"].contains(&r.name()))?;
    /// # Ok::<(), agent_core::RegistryError>(())
    /// ```
    pub fn discover_where(
        mut keep: impl FnMut(&SkillRegistration) -> bool,
    ) -> Result<Registry, RegistryError> {
        let mut linked: Vec<&SkillRegistration> = inventory::iter::<SkillRegistration>().collect();
        if linked.is_empty() {
            return Err(RegistryError::NothingDiscovered);
        }
        linked.sort_by_key(|r| (r.name(), r.location().file, r.location().line));
        let kept: Vec<&SkillRegistration> = linked.iter().copied().filter(|r| keep(r)).collect();
        if kept.is_empty() {
            let names = linked
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(RegistryError::NothingKept {
                linked: linked.len(),
                names,
            });
        }
        let mut registry = Registry::new();
        for registration in kept {
            registry.insert(
                Arc::from(registration.construct()),
                Some(registration.location()),
            )?;
        }
        Ok(registry)
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
        self.retry_policy = policy;
        self
    }

    /// How many concurrency-safe calls may run at once (at least 1).
    pub fn with_max_concurrency(&mut self, limit: usize) -> &mut Self {
        self.max_concurrency = limit.max(1);
        self
    }

    /// How many characters of a result the model gets; longer results are cut with a notice.
    pub fn with_output_budget(&mut self, chars: usize) -> &mut Self {
        self.output_budget = chars;
        self
    }

    /// Whether a skill has this name or alias.
    pub fn contains(&self, name_or_alias: &str) -> bool {
        self.by_name.contains_key(name_or_alias)
    }

    /// The metadata of the skill with this name or alias.
    pub fn metadata(&self, name_or_alias: &str) -> Option<&SkillMetadata> {
        self.entry(name_or_alias).map(|e| &e.metadata)
    }

    /// The skill with this name or alias.
    pub fn get(&self, name_or_alias: &str) -> Option<&Arc<dyn DynSkill>> {
        self.entry(name_or_alias).map(|e| &e.skill)
    }

    /// Where the skill with this name or alias was defined, when it was discovered.
    pub fn location(&self, name_or_alias: &str) -> Option<SourceLocation> {
        self.entry(name_or_alias).and_then(|e| e.location)
    }

    /// The names of all skills, deferred ones included, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.definition.name.as_str())
    }

    /// How many skills there are, deferred ones and the built-in `tool_search` included.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no skills.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What the model is shown: every skill that is not deferred, in the order added. The schemas
    /// were generated when the skills were added; this only clones them.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.visible(|_| false)
    }

    /// What the model is shown in `session`: [`Registry::definitions`] plus the deferred skills
    /// `tool_search` loaded in that session.
    pub fn definitions_for(&self, session: &SkillSession) -> Vec<ToolDefinition> {
        self.visible(|name| session.is_loaded(name))
    }

    fn visible(&self, loaded: impl Fn(&str) -> bool) -> Vec<ToolDefinition> {
        self.entries
            .iter()
            .filter(|e| !e.metadata.should_defer || loaded(&e.definition.name))
            .map(|e| e.definition.clone())
            .collect()
    }

    pub(crate) fn entry(&self, name_or_alias: &str) -> Option<&Entry> {
        self.lookup(name_or_alias).map(|(_, entry)| entry)
    }

    /// The entry for a name or alias, with the registry's own copy of that name.
    pub(crate) fn lookup(&self, name_or_alias: &str) -> Option<(&SharedStr, &Entry)> {
        self.by_name
            .get_key_value(name_or_alias)
            .map(|(name, &i)| (name, &self.entries[i]))
    }

    fn insert(
        &mut self,
        skill: Arc<dyn DynSkill>,
        location: Option<SourceLocation>,
    ) -> Result<(), RegistryError> {
        let metadata = skill.metadata();
        let mut names: Vec<Arc<str>> = vec![metadata.name.clone()];
        names.extend(metadata.aliases.iter().cloned());
        for (i, name) in names.iter().enumerate() {
            if !is_valid_name(name) {
                return Err(RegistryError::InvalidName {
                    name: name.to_string(),
                });
            }
            if names[..i].contains(name) {
                return Err(RegistryError::Duplicate {
                    name: name.to_string(),
                    first: location,
                    second: location,
                });
            }
            if let Some(existing) = self.entry(name)
                && !existing.builtin
            {
                return Err(RegistryError::Duplicate {
                    name: name.to_string(),
                    first: existing.location,
                    second: location,
                });
            }
        }
        let input_schema = schema::normalise_root(skill.input_schema());
        if !schema::is_object_schema(&input_schema) {
            return Err(RegistryError::InputNotObject {
                name: metadata.name.to_string(),
                schema: input_schema.to_string(),
            });
        }
        // A skill of the user's that takes a built-in's name replaces the built-in.
        for name in &names {
            if self.entry(name).is_some_and(|e| e.builtin) {
                self.remove_builtin(name);
            }
        }
        let definition = ToolDefinition {
            name: metadata.name.to_string(),
            description: skill.description().to_owned(),
            input_schema,
        };
        let entry = Entry {
            timeout: skill.timeout(),
            retry_policy: skill.retry_policy(),
            skill,
            definition,
            location,
            builtin: false,
            metadata,
        };
        let deferred = entry.metadata.should_defer;
        if deferred {
            self.index_for_search(&entry);
        }
        self.push(entry, names);
        if deferred && !self.contains(tool_search::NAME) {
            let index = self.search_index.clone().unwrap_or_default();
            let skill: Arc<dyn DynSkill> = Arc::new(ToolSearch::new(index));
            let metadata = skill.metadata();
            let definition = ToolDefinition {
                name: metadata.name.to_string(),
                description: skill.description().to_owned(),
                input_schema: schema::normalise_root(skill.input_schema()),
            };
            let names = vec![metadata.name.clone()];
            let entry = Entry {
                timeout: None,
                retry_policy: None,
                skill,
                definition,
                location: None,
                builtin: true,
                metadata,
            };
            self.push(entry, names);
        }
        Ok(())
    }

    fn push(&mut self, entry: Entry, names: Vec<Arc<str>>) {
        let index = self.entries.len();
        self.entries.push(entry);
        for name in names {
            self.by_name.insert(SharedStr::from(name), index);
        }
    }

    fn remove_builtin(&mut self, name: &str) {
        let Some(&index) = self.by_name.get(name) else {
            return;
        };
        self.entries.remove(index);
        self.by_name.retain(|_, i| *i != index);
        for i in self.by_name.values_mut() {
            if *i > index {
                *i -= 1;
            }
        }
    }

    fn index_for_search(&mut self, entry: &Entry) {
        let index = self.search_index.get_or_insert_with(Arc::default);
        let doc = SearchDoc::new(&entry.metadata, &entry.definition.description);
        index
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(doc);
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("skills", &self.names().collect::<Vec<_>>())
            .field("hooks", &self.hooks.len())
            .field("max_concurrency", &self.max_concurrency)
            .field("output_budget", &self.output_budget)
            .finish_non_exhaustive()
    }
}

/// Whether model APIs accept `name` as a tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
