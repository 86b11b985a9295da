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

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

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
/// nothing, so a hook implements only what it needs. Implement them as `async fn`s in an
/// `#[async_trait]` impl:
///
/// ```
/// use agent_core::{async_trait, HookOutcome, SkillError, SkillHook, SkillMetadata, SkillOutput};
/// use serde_json::Value;
///
/// /// Refuses destructive skills and marks every failed result.
/// struct Careful;
///
/// #[async_trait]
/// impl SkillHook for Careful {
///     async fn before(
///         &self,
///         skill_name: &str,
///         metadata: &SkillMetadata,
///         _args: &Value,
///     ) -> Result<HookOutcome, SkillError> {
///         Ok(if metadata.is_destructive {
///             HookOutcome::Deny(format!("`{skill_name}` is not allowed here"))
///         } else {
///             HookOutcome::Proceed
///         })
///     }
///
///     async fn after(
///         &self,
///         _skill_name: &str,
///         _args: &Value,
///         result: &mut Result<SkillOutput, SkillError>,
///     ) {
///         if let Err(error) = result {
///             *result = Err(SkillError::tool(format!("(checked) {error}")));
///         }
///     }
/// }
/// ```
///
/// The trait writes out the signatures `#[async_trait]` generates instead of declaring `async fn`s,
/// so that each default is a future of size zero: a hook that leaves a method out costs no
/// allocation for it per call.
pub trait SkillHook: Send + Sync + 'static {
    /// Decides about a call before the skill runs. An `Err` ends the call with that error.
    ///
    /// Declared as `async fn before(&self, skill_name: &str, metadata: &SkillMetadata, args:
    /// &Value) -> Result<HookOutcome, SkillError>`.
    fn before<'life0, 'life1, 'life2, 'life3, 'async_trait>(
        &'life0 self,
        skill_name: &'life1 str,
        metadata: &'life2 SkillMetadata,
        args: &'life3 Value,
    ) -> HookFuture<'async_trait, Result<HookOutcome, SkillError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        'life3: 'async_trait,
        Self: 'async_trait,
    {
        let _ = (skill_name, metadata, args);
        Box::pin(Proceed)
    }

    /// Sees every result, errors included, and may change it: what it leaves in `result` is what
    /// the model gets.
    ///
    /// Declared as `async fn after(&self, skill_name: &str, args: &Value, result: &mut
    /// Result<SkillOutput, SkillError>)`.
    fn after<'life0, 'life1, 'life2, 'life3, 'async_trait>(
        &'life0 self,
        skill_name: &'life1 str,
        args: &'life2 Value,
        result: &'life3 mut Result<SkillOutput, SkillError>,
    ) -> HookFuture<'async_trait, ()>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        'life3: 'async_trait,
        Self: 'async_trait,
    {
        let _ = (skill_name, args, result);
        Box::pin(std::future::ready(()))
    }
}

/// The future a [`SkillHook`] method returns, as `#[async_trait]` writes it.
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// `before`'s answer when a call may go ahead (the default, and an allowing `PermissionGate`): a
/// unit struct, so boxing it allocates nothing.
struct Proceed;

impl Future for Proceed {
    type Output = Result<HookOutcome, SkillError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Ok(HookOutcome::Proceed))
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

// Written out instead of `#[async_trait]`: the rule decides at once, so an allowed call gets the
// zero-sized `Proceed` future and costs no allocation; only a denial boxes its answer.
impl<F> SkillHook for PermissionGate<F>
where
    F: Fn(&str, &SkillMetadata) -> bool + Send + Sync + 'static,
{
    fn before<'life0, 'life1, 'life2, 'life3, 'async_trait>(
        &'life0 self,
        skill_name: &'life1 str,
        metadata: &'life2 SkillMetadata,
        _args: &'life3 Value,
    ) -> HookFuture<'async_trait, Result<HookOutcome, SkillError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        'life3: 'async_trait,
        Self: 'async_trait,
    {
        if (self.allow)(skill_name, metadata) {
            return Box::pin(Proceed);
        }
        Box::pin(std::future::ready(Ok(HookOutcome::Deny(format!(
            "permission to run `{skill_name}` was not granted; do not retry it, \
             explain what you wanted to do instead"
        )))))
    }
}
