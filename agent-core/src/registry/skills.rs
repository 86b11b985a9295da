//! The skills a registry holds, and the index that finds one by its name or an alias.

use std::collections::HashMap;
use std::sync::Arc;

use super::entry::{Entry, names_of};
use super::load_skill::{self, LoadSkill};
use super::names::is_valid_name;
use super::tool_search::{self, SearchDoc, SearchIndex, ToolSearch};
use crate::agent_skills::AgentSkill;
use crate::call::SharedStr;
use crate::error::{RegistryError, SourceLocation};
use crate::schema::ToolDefinition;
use crate::skill::DynSkill;

/// The skills, in the order they were added, and every name and alias that leads to one.
#[derive(Default)]
pub(super) struct Skills {
    entries: Vec<Entry>,
    /// Names and aliases to positions in `entries`; the hasher is fast because the registry
    /// chose the names.
    by_name: HashMap<SharedStr, usize, foldhash::fast::RandomState>,
    /// What `tool_search` searches (the deferred skills, and the registry's live sets), shared
    /// with that built-in skill.
    search_index: Arc<SearchIndex>,
    /// The Agent Skills the built-in `load_skill` offers, sorted by name.
    agent_skills: Arc<[AgentSkill]>,
    /// Whether these are a live set's skills ([`super::live::LiveSkills`]): then no built-in is
    /// added; the registry holding the set has them.
    live: bool,
}

impl Skills {
    /// An empty set of a [`super::live::LiveSkills`]: deferred skills bring no `tool_search`.
    pub(super) fn live() -> Skills {
        Skills {
            live: true,
            ..Skills::default()
        }
    }

    /// Whether a skill is deferred.
    pub(super) fn has_deferred(&self) -> bool {
        self.entries.iter().any(|e| e.metadata.should_defer)
    }

    /// What `tool_search` searches.
    pub(super) fn search_index(&self) -> &Arc<SearchIndex> {
        &self.search_index
    }

    /// The entry for a name or alias, with the registry's own copy of that name.
    #[inline]
    pub(super) fn lookup(&self, name_or_alias: &str) -> Option<(&SharedStr, &Entry)> {
        self.by_name
            .get_key_value(name_or_alias)
            .map(|(name, &i)| (name, &self.entries[i]))
    }

    /// The entry for a name or alias.
    #[inline]
    pub(super) fn get(&self, name_or_alias: &str) -> Option<&Entry> {
        self.lookup(name_or_alias).map(|(_, entry)| entry)
    }

    /// Every entry, in the order added.
    pub(super) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Every name and alias a call may use.
    pub(super) fn names_and_aliases(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(|name| &**name)
    }

    /// The names of the skills the model is shown without a search: the ones not deferred.
    pub(super) fn visible_names(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|e| !e.metadata.should_defer)
            .map(|e| e.definition.name.as_str())
    }

    /// The definitions of the skills not deferred, and of the deferred ones `loaded` accepts.
    pub(super) fn definitions(&self, loaded: impl Fn(&str) -> bool) -> Vec<ToolDefinition> {
        self.entries
            .iter()
            .filter(|e| !e.metadata.should_defer || loaded(&e.definition.name))
            .map(|e| e.definition.clone())
            .collect()
    }

    /// Adds a skill, or says why it cannot be added and changes nothing. A deferred skill brings
    /// the built-in `tool_search` with it; a skill of the user's with a built-in's name replaces
    /// the built-in.
    pub(super) fn insert(
        &mut self,
        skill: Arc<dyn DynSkill>,
        location: Option<SourceLocation>,
    ) -> Result<(), RegistryError> {
        let metadata = skill.metadata();
        let names = names_of(&metadata);
        self.check_names(&names, location)?;
        let entry = Entry::new(skill, metadata, location)?;
        for name in &names {
            self.remove_builtin(name);
        }
        let deferred = entry.metadata.should_defer;
        if deferred {
            self.index_for_search(&entry);
        }
        self.push(entry, names);
        if deferred && !self.live {
            self.ensure_tool_search();
        }
        Ok(())
    }

    /// Adds the built-in `tool_search` unless a skill has its name.
    pub(super) fn ensure_tool_search(&mut self) {
        if !self.by_name.contains_key(tool_search::NAME) {
            self.add_tool_search();
        }
    }

    /// Refuses names model APIs reject, a name given twice, and a name another skill of the
    /// user's already has (a built-in's name is free to take).
    fn check_names(
        &self,
        names: &[Arc<str>],
        location: Option<SourceLocation>,
    ) -> Result<(), RegistryError> {
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
            if let Some(existing) = self.get(name)
                && !existing.builtin
            {
                return Err(RegistryError::Duplicate {
                    name: name.to_string(),
                    first: existing.location,
                    second: location,
                });
            }
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

    /// Removes the built-in skill called `name`, if there is one.
    fn remove_builtin(&mut self, name: &str) {
        let Some(&index) = self.by_name.get(name) else {
            return;
        };
        if !self.entries[index].builtin {
            return;
        }
        self.entries.remove(index);
        self.by_name.retain(|_, i| *i != index);
        for i in self.by_name.values_mut() {
            if *i > index {
                *i -= 1;
            }
        }
    }

    fn index_for_search(&mut self, entry: &Entry) {
        let doc = SearchDoc::new(&entry.metadata, &entry.definition.description);
        self.search_index.add(doc);
    }

    /// The Agent Skills offered through `load_skill`.
    pub(super) fn agent_skills(&self) -> &[AgentSkill] {
        &self.agent_skills
    }

    /// Replaces the Agent Skills, and the built-in `load_skill` that lists them (unless a skill of
    /// the user's has its name), whose pieces fit in `output_budget` characters.
    pub(super) fn set_agent_skills(&mut self, skills: Vec<AgentSkill>, output_budget: usize) {
        self.agent_skills = skills.into();
        self.remove_builtin(load_skill::NAME);
        if self.by_name.contains_key(load_skill::NAME) || self.agent_skills.is_empty() {
            return;
        }
        let entry = Entry::builtin(Arc::new(LoadSkill::new(
            self.agent_skills.clone(),
            output_budget,
        )));
        let names = vec![entry.metadata.name.clone()];
        self.push(entry, names);
    }

    /// Tells the built-in `load_skill`, if there is one, the registry's new output budget (in
    /// place: the order of the definitions does not change).
    pub(super) fn set_output_budget(&mut self, output_budget: usize) {
        let Some(&index) = self.by_name.get(load_skill::NAME) else {
            return;
        };
        if !self.entries[index].builtin {
            return;
        }
        let skill = LoadSkill::new(self.agent_skills.clone(), output_budget);
        self.entries[index] = Entry::builtin(Arc::new(skill));
    }

    /// Adds the built-in `tool_search`, which searches the deferred skills.
    fn add_tool_search(&mut self) {
        let entry = Entry::builtin(Arc::new(ToolSearch::new(self.search_index.clone())));
        let names = vec![entry.metadata.name.clone()];
        self.push(entry, names);
    }
}
