//! [`LiveSkills`]: skills that may change while a runtime holds the registry, such as an MCP
//! server's tools after the server said its list changed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, Weak};

use super::entry::Entry;
use super::skills::Skills;
use super::tool_search::SearchIndex;
use crate::call::SharedStr;
use crate::error::RegistryError;
use crate::skill::DynSkill;

/// Skills that may change while a runtime holds the registry.
///
/// A [`Registry`](super::Registry) is fixed once a runtime holds it (behind an `Arc`, shared by
/// every call). A live set is the one part of it that is read anew: a registry given one with
/// [`Registry::add_live`](super::Registry::add_live) shows the model the set's skills as they are
/// when each model turn starts, and dispatches each batch of calls to the skills the set has when
/// the batch starts. Whoever owns the set (`agent-mcp`, or the application) replaces its skills
/// with [`LiveSkills::replace`]; nothing else changes.
///
/// ```
/// use agent_core::registry::LiveSkills;
/// use agent_core::{async_trait, DynSkill, Registry, Skill, SkillContext, SkillError, SkillOutput};
/// use std::sync::Arc;
/// # use agent_core::{schemars, serde};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # #[serde(crate = "agent_core::serde")]
/// # #[schemars(crate = "agent_core::schemars")]
/// # struct Input { text: String }
/// # struct Shout;
/// # #[async_trait]
/// # impl Skill for Shout {
/// #     type Input = Input;
/// #     fn name(&self) -> &str { "shout" }
/// #     fn description(&self) -> &str { "Upper-case the text." }
/// #     async fn run(&self, input: Input, _: &SkillContext) -> Result<SkillOutput, SkillError> {
/// #         Ok(input.text.to_uppercase().into())
/// #     }
/// # }
///
/// let live = LiveSkills::default();
/// let mut registry = Registry::new();
/// registry.add_live(live.clone());
/// assert!(registry.definitions().is_empty());
///
/// // Later, while a runtime holds the registry:
/// let refused = live.replace([Arc::new(Shout) as Arc<dyn DynSkill>]);
/// assert!(refused.is_empty());
/// assert_eq!(registry.definitions()[0].name, "shout");
/// ```
///
/// Cloning gives another handle to the same set. A registry keeps the handle it was given; the
/// owner of the set keeps one to replace the skills, or a [`WeakLiveSkills`] when the skills
/// themselves lead back to the owner (an MCP connection), so the set does not keep itself alive.
#[derive(Clone, Default)]
pub struct LiveSkills {
    inner: Arc<Inner>,
}

/// A handle to a [`LiveSkills`] that does not keep it alive.
#[derive(Clone, Default)]
pub struct WeakLiveSkills(Weak<Inner>);

#[derive(Default)]
struct Inner {
    /// The skills now.
    current: RwLock<Arc<Skills>>,
    /// What `tool_search` searches of them (their deferred skills); the same index for the
    /// set's life, so a registry finds it once.
    search: Arc<SearchIndex>,
    /// How many times the skills were put in place.
    version: AtomicU64,
}

impl LiveSkills {
    /// A set of `skills`, or the first reason one of them cannot be in a registry (an invalid
    /// name, a name given twice, an input that is not an object), and no set.
    pub fn try_new(
        skills: impl IntoIterator<Item = Arc<dyn DynSkill>>,
    ) -> Result<LiveSkills, RegistryError> {
        let mut set = Skills::live();
        for skill in skills {
            set.insert(skill, None)?;
        }
        let live = LiveSkills::default();
        live.put(set);
        Ok(live)
    }

    /// Puts `skills` in place of the set's skills, at once: a model turn that starts afterwards is
    /// shown the new ones, a batch of calls that starts afterwards runs them, and a batch already
    /// running finishes with the skills it started with. A skill that cannot be in a registry (an
    /// invalid name, a name an earlier one of `skills` has, an input that is not an object) is
    /// left out; the errors say which and why, and the others are put in place.
    pub fn replace(
        &self,
        skills: impl IntoIterator<Item = Arc<dyn DynSkill>>,
    ) -> Vec<RegistryError> {
        let mut set = Skills::live();
        let mut refused = Vec::new();
        for skill in skills {
            if let Err(error) = set.insert(skill, None) {
                refused.push(error);
            }
        }
        self.put(set);
        refused
    }

    /// Puts `set` in place, and its deferred skills in the index `tool_search` searches.
    fn put(&self, set: Skills) {
        let mut current = self
            .inner
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        self.inner.search.replace_with(set.search_index());
        *current = Arc::new(set);
        self.inner.version.fetch_add(1, Ordering::SeqCst);
    }

    /// How many times the skills were replaced (or set when the set was made): a number that
    /// changes whenever the skills may have, for whoever must tell others (an MCP server tells
    /// its clients the tool list changed).
    pub fn version(&self) -> u64 {
        self.inner.version.load(Ordering::SeqCst)
    }

    /// The names of the set's skills now, in the order they were given.
    pub fn names(&self) -> Vec<String> {
        self.snapshot()
            .entries()
            .iter()
            .map(|entry| entry.definition.name.clone())
            .collect()
    }

    /// How many skills the set has now.
    pub fn len(&self) -> usize {
        self.snapshot().entries().len()
    }

    /// Whether the set has no skills now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A handle that does not keep the set alive.
    pub fn downgrade(&self) -> WeakLiveSkills {
        WeakLiveSkills(Arc::downgrade(&self.inner))
    }

    /// The skills the set has now; they stay as they are for whoever holds them.
    pub(super) fn snapshot(&self) -> Arc<Skills> {
        self.inner
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// What `tool_search` searches of the set.
    pub(super) fn search_index(&self) -> Arc<SearchIndex> {
        self.inner.search.clone()
    }
}

impl WeakLiveSkills {
    /// The set, while a handle to it is alive somewhere.
    pub fn upgrade(&self) -> Option<LiveSkills> {
        self.0.upgrade().map(|inner| LiveSkills { inner })
    }
}

impl std::fmt::Debug for LiveSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LiveSkills").field(&self.names()).finish()
    }
}

impl std::fmt::Debug for WeakLiveSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WeakLiveSkills")
            .field(&(self.0.strong_count() > 0))
            .finish()
    }
}

/// The skills a registry's live sets have at one moment: what one model turn is shown, or what
/// one batch of calls is dispatched to. Empty, and free, for a registry without live sets.
pub(super) struct LiveView(Vec<Arc<Skills>>);

impl LiveView {
    /// The sets' skills now.
    pub(super) fn of(sets: &[LiveSkills]) -> LiveView {
        LiveView(sets.iter().map(LiveSkills::snapshot).collect())
    }

    /// The entry for a name or alias in the first set that has it.
    #[inline]
    pub(super) fn lookup(&self, name_or_alias: &str) -> Option<(&SharedStr, &Entry)> {
        self.0.iter().find_map(|set| set.lookup(name_or_alias))
    }

    /// The entries the registry shows or runs: a name the registry's own skills (`own`) or an
    /// earlier set already has is the other skill's, and its entry here is left out.
    pub(super) fn entries<'a>(&'a self, own: &'a Skills) -> impl Iterator<Item = &'a Entry> + 'a {
        self.0.iter().enumerate().flat_map(move |(i, set)| {
            set.entries().iter().filter(move |entry| {
                let name = entry.definition.name.as_str();
                own.get(name).is_none() && self.0[..i].iter().all(|s| s.get(name).is_none())
            })
        })
    }

    /// Every name and alias a call may use.
    pub(super) fn names_and_aliases(&self) -> impl Iterator<Item = &str> {
        self.0.iter().flat_map(|set| set.names_and_aliases())
    }
}
