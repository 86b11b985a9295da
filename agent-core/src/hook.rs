//! Hooks: code that runs around every skill call, to allow, deny, rewrite or replace it, and to
//! inspect or change its result.
//!
//! Hooks run in the order they were added to the registry. For each call:
//!
//! 1. the arguments are validated against the skill's schema;
//! 2. each hook's [`SkillHook::before`] runs in turn: [`HookOutcome::Proceed`] passes to the next
//!    hook, [`HookOutcome::Modify`] replaces the arguments (which are validated again before the next
//!    hook sees them), [`HookOutcome::Deny`] ends the call with a [`SkillError::Denied`] result, and
//!    [`HookOutcome::Replace`] ends it with the given text as a successful result, skipping the skill;
//! 3. the skill runs (unless denied or replaced);
//! 4. each hook's [`SkillHook::after`] sees the result, errors included, and may change it.
//!
//! Both methods receive the skill's own name, also when the model called it by an alias, so a rule
//! about `delete_file` cannot be dodged by calling it `rm`.
//!
//! Before-hooks of a batch of concurrent calls run one call at a time, in call order, so a hook
//! that asks a person for permission asks one question at a time.
//!
//! ```
//! use agent_core::{PermissionGate, Registry};
//!
//! let mut registry = Registry::new();
//! // Allow everything that only reads; deny the rest.
//! registry.with_hook(PermissionGate::new(|_name, metadata| metadata.is_read_only));
//! ```

use async_trait::async_trait;
use serde_json::Value;

use crate::error::SkillError;
use crate::skill::{SkillMetadata, SkillOutput};

/// What a before-hook decides about a call.
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutcome {
    /// Go on with the arguments as they are.
    Proceed,
    /// Go on with these arguments instead; they are validated again.
    Modify(Value),
    /// Refuse the call; the text is the reason the model reads.
    Deny(String),
    /// Skip the skill and answer the call with this text.
    Replace(String),
}

/// Code that runs before and after every skill call. Both methods have defaults that change
/// nothing, so a hook implements only what it needs.
#[async_trait]
pub trait SkillHook: Send + Sync + 'static {
    /// Decides about a call before the skill runs. An `Err` ends the call with that error.
    async fn before(
        &self,
        skill_name: &str,
        metadata: &SkillMetadata,
        args: &Value,
    ) -> Result<HookOutcome, SkillError> {
        let _ = (skill_name, metadata, args);
        Ok(HookOutcome::Proceed)
    }

    /// Sees every result, errors included, and returns the one the model gets.
    async fn after(
        &self,
        skill_name: &str,
        args: &Value,
        result: Result<SkillOutput, SkillError>,
    ) -> Result<SkillOutput, SkillError> {
        let _ = (skill_name, args);
        result
    }
}

/// A hook that allows or denies calls by a rule: `PermissionGate::new(|name, metadata| allowed)`.
/// A denied call gets a [`SkillError::Denied`] result the model can read.
pub struct PermissionGate<F> {
    allow: F,
}

impl<F> PermissionGate<F>
where
    F: Fn(&str, &SkillMetadata) -> bool + Send + Sync + 'static,
{
    /// A gate that lets a call through when `allow(skill_name, metadata)` is true.
    pub fn new(allow: F) -> Self {
        PermissionGate { allow }
    }
}

#[async_trait]
impl<F> SkillHook for PermissionGate<F>
where
    F: Fn(&str, &SkillMetadata) -> bool + Send + Sync + 'static,
{
    async fn before(
        &self,
        skill_name: &str,
        metadata: &SkillMetadata,
        _args: &Value,
    ) -> Result<HookOutcome, SkillError> {
        if (self.allow)(skill_name, metadata) {
            Ok(HookOutcome::Proceed)
        } else {
            Ok(HookOutcome::Deny(format!(
                "permission to run `{skill_name}` was not granted; do not retry it, \
                 explain what you wanted to do instead"
            )))
        }
    }
}
