//! The built-in `tool_search` skill: finds deferred skills and loads them into the session.
//!
//! A registry adds it as soon as it holds a deferred skill. The query is split into words, and each
//! deferred skill is scored by where the words occur: the whole query equal to the name scores
//! highest, then a word equal to a word of the name or an alias, then a word inside the name or an
//! alias, then a word of the search hint, then a word of the description. The best matches (5 by
//! default) are loaded into the calling session, so the definitions sent next include them.

use std::sync::{Arc, PoisonError, RwLock};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::SkillContext;
use crate::error::SkillError;
use crate::skill::{Skill, SkillMetadata, SkillOutput};

/// The built-in skill's name.
pub(crate) const NAME: &str = "tool_search";

const DEFAULT_RESULTS: usize = 5;

/// What `tool_search` knows of one deferred skill, split into lower-case words once.
pub(crate) struct SearchDoc {
    name: String,
    description: String,
    name_words: Vec<String>,
    hint_words: Vec<String>,
    text_words: Vec<String>,
}

impl SearchDoc {
    pub(crate) fn new(metadata: &SkillMetadata, description: &str) -> Self {
        let mut name_words = vec![metadata.name.to_lowercase()];
        name_words.extend(split_words(&metadata.name));
        for alias in metadata.aliases.iter() {
            name_words.push(alias.to_lowercase());
            name_words.extend(split_words(alias));
        }
        SearchDoc {
            name: metadata.name.to_string(),
            description: description.to_owned(),
            name_words,
            hint_words: split_words(metadata.search_hint.as_deref().unwrap_or_default()),
            text_words: split_words(description),
        }
    }

    fn score(&self, query: &str, terms: &[String]) -> u32 {
        let mut score = if self.name.eq_ignore_ascii_case(query) {
            100
        } else {
            0
        };
        for term in terms {
            // Short terms must match a whole word; longer ones may match part of a word.
            let long = term.chars().count() >= 3;
            if self.name_words.contains(term) {
                score += 10;
            } else if long && self.name_words.iter().any(|w| w.contains(term.as_str())) {
                score += 5;
            }
            if self.hint_words.contains(term)
                || (long && self.hint_words.iter().any(|w| w.starts_with(term.as_str())))
            {
                score += 4;
            }
            if self.text_words.contains(term)
                || (long && self.text_words.iter().any(|w| w.starts_with(term.as_str())))
            {
                score += 2;
            }
        }
        score
    }
}

/// Words too common to say anything about which tool is wanted.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "the", "to", "of", "for", "in", "on", "or", "with", "my", "me", "i", "some",
    "tool", "tools", "that", "this", "it",
];

fn split_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn query_terms(query: &str) -> Vec<String> {
    split_words(query)
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// What `tool_search` searches: the deferred skills of a registry (or of a live set), and the
/// indexes of the live sets the registry holds.
#[derive(Default)]
pub(crate) struct SearchIndex {
    docs: RwLock<Vec<SearchDoc>>,
    live: RwLock<Vec<Arc<SearchIndex>>>,
}

impl SearchIndex {
    /// Adds a deferred skill.
    pub(crate) fn add(&self, doc: SearchDoc) {
        self.docs
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(doc);
    }

    /// Puts the documents of `other` in place of these (a live set's new skills).
    pub(crate) fn replace_with(&self, other: &SearchIndex) {
        let docs = std::mem::take(&mut *other.docs.write().unwrap_or_else(PoisonError::into_inner));
        *self.docs.write().unwrap_or_else(PoisonError::into_inner) = docs;
    }

    /// Searches a live set's index too, from now on.
    pub(crate) fn add_live(&self, index: Arc<SearchIndex>) {
        self.live
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(index);
    }
}

/// The arguments of `tool_search`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolSearchInput {
    /// Words describing the ability you need (e.g. "delete file"), or a tool's exact name.
    query: String,
    /// How many tools to load at most (default 5).
    max_results: Option<usize>,
}

/// The built-in skill; shares its index with the registry that made it.
pub(crate) struct ToolSearch {
    index: Arc<SearchIndex>,
}

impl ToolSearch {
    pub(crate) fn new(index: Arc<SearchIndex>) -> Self {
        ToolSearch { index }
    }
}

#[async_trait]
impl Skill for ToolSearch {
    type Input = ToolSearchInput;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Find tools that are available but not loaded yet, and load them. Describe the ability you \
         need in a few words; the matching tools are listed and can be called from the next turn on."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(
        &self,
        input: ToolSearchInput,
        ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        let query = input.query.trim().to_lowercase();
        let terms = query_terms(&query);
        if terms.is_empty() {
            return Err(SkillError::bad_args(
                "query",
                "describe the tool you need in a few words",
            ));
        }
        let own = self
            .index
            .docs
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let live = self
            .index
            .live
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let sets: Vec<_> = live
            .iter()
            .map(|set| set.docs.read().unwrap_or_else(PoisonError::into_inner))
            .collect();
        let index: Vec<&SearchDoc> = own
            .iter()
            .chain(sets.iter().flat_map(|d| d.iter()))
            .collect();
        let mut hits: Vec<(u32, &SearchDoc)> = index
            .iter()
            .copied()
            .map(|doc| (doc.score(&query, &terms), doc))
            .filter(|(score, _)| *score > 0)
            .collect();
        hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        hits.truncate(input.max_results.unwrap_or(DEFAULT_RESULTS).max(1));
        if hits.is_empty() {
            let names = index
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            return Ok(format!(
                "No tool matches `{}`. Tools that can be loaded: {names}.",
                input.query.trim()
            )
            .into());
        }
        let mut text = format!(
            "Loaded {} tool{}; call {} like any other tool:",
            hits.len(),
            if hits.len() == 1 { "" } else { "s" },
            if hits.len() == 1 { "it" } else { "them" }
        );
        for (_, doc) in &hits {
            ctx.scope().load(doc.name.clone());
            text.push_str(&format!("\n- {}: {}", doc.name, doc.description));
        }
        Ok(text.into())
    }
}
