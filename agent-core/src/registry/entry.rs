//! One skill as a registry keeps it: the skill, what was read from it once when it was added, and
//! what the model is shown of it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::error::{RegistryError, SourceLocation};
use crate::retry::RetryPolicy;
use crate::schema::{self, ToolDefinition};
use crate::skill::{DynSkill, SkillMetadata};

/// A skill in a registry. Everything a call needs is read from the skill once, here.
pub(super) struct Entry {
    /// The skill.
    pub(super) skill: Arc<dyn DynSkill>,
    /// Its flags, aliases and hint, as hooks and runtimes read them.
    pub(super) metadata: SkillMetadata,
    /// Its name, description, input schema and output schema, as the model is shown them.
    pub(super) definition: ToolDefinition,
    /// Where it was defined, when it was discovered.
    pub(super) location: Option<SourceLocation>,
    /// How long one attempt may take.
    pub(super) timeout: Option<Duration>,
    /// Its own retry policy, in place of the registry's.
    pub(super) retry_policy: Option<RetryPolicy>,
    /// Whether the registry added it itself (`tool_search`): a skill of the user's with its name
    /// replaces it.
    pub(super) builtin: bool,
}

impl Entry {
    /// The entry of a skill of the user's, whose `metadata` was already read. Its input must be a
    /// JSON object, as every model API requires.
    pub(super) fn new(
        skill: Arc<dyn DynSkill>,
        metadata: SkillMetadata,
        location: Option<SourceLocation>,
    ) -> Result<Entry, RegistryError> {
        let input_schema = schema::normalise_root(skill.input_schema());
        if !schema::is_object_schema(&input_schema) {
            return Err(RegistryError::InputNotObject {
                name: metadata.name.to_string(),
                schema: input_schema.to_string(),
            });
        }
        Ok(Entry::with_schema(skill, metadata, input_schema, location))
    }

    /// The entry of a skill the registry adds itself.
    pub(super) fn builtin(skill: Arc<dyn DynSkill>) -> Entry {
        let metadata = skill.metadata();
        let input_schema = schema::normalise_root(skill.input_schema());
        Entry {
            builtin: true,
            ..Entry::with_schema(skill, metadata, input_schema, None)
        }
    }

    /// The entry, with the output schema read from the skill once, here: kept in the metadata
    /// (shared) and in the definition.
    fn with_schema(
        skill: Arc<dyn DynSkill>,
        mut metadata: SkillMetadata,
        input_schema: Value,
        location: Option<SourceLocation>,
    ) -> Entry {
        let output_schema = skill.output_schema().map(Arc::new);
        metadata.output_schema = output_schema.clone();
        Entry {
            definition: ToolDefinition {
                name: metadata.name.to_string(),
                description: skill.description().to_owned(),
                input_schema,
                output_schema: output_schema.as_deref().cloned(),
            },
            timeout: skill.timeout(),
            retry_policy: skill.retry_policy(),
            skill,
            metadata,
            location,
            builtin: false,
        }
    }
}

/// The names a skill is called by: its name, then its aliases.
pub(super) fn names_of(metadata: &SkillMetadata) -> Vec<Arc<str>> {
    let mut names = vec![metadata.name.clone()];
    names.extend(metadata.aliases.iter().cloned());
    names
}
