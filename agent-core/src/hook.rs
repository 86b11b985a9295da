//! Hooks: code that runs around every skill call, to allow, deny, rewrite or replace it, and to
//! inspect or change its result.
//!
//! Hooks run in the order they were added to the registry. For each call:
//!
//! 1. the arguments are validated against the skill's schema;
//! 2. each hook's [`SkillHook::before`] runs in turn: [`HookVerdict::Proceed`] passes to the next
//!    hook, [`HookVerdict::Modify`] replaces the arguments (which are validated again before the next
//!    hook sees them), [`HookVerdict::Deny`] ends the call with a [`SkillError::Denied`] result, and
//!    [`HookVerdict::Replace`] ends it with the given text as a successful result, skipping the skill;
//! 3. a call of a destructive skill that every hook let through meets the registry's
//!    [`DestructiveCalls`](crate::DestructiveCalls), unless a hook decides permissions
//!    ([`SkillHook::decides_permissions`], as a [`PermissionGate`] does): by default a person is
//!    asked, as if a hook had answered [`HookVerdict::Ask`];
//! 4. the skill runs (unless denied, replaced or waiting for a person);
//! 5. each hook's [`SkillHook::after`] sees the result, errors included, and may change it.
//!
//! Both methods receive the skill's own name, also when the model called it by an alias, so a rule
//! about `delete_file` cannot be dodged by calling it `rm`.
//!
//! Before-hooks of a batch of concurrent calls run one call at a time, in call order, so a hook
//! that asks a person for permission asks one question at a time.
//!
//! # The words of permissions, side by side
//!
//! | word | what it is | who uses it |
//! |---|---|---|
//! | [`PermissionGate`] | the hook most programs want: a rule that says, per call, allow, deny or ask | you, once: `registry.with_hook(PermissionGate::new(..))` |
//! | [`Permission`] | what a three-way rule answers: `Allow`, `Deny(reason)`, `Ask(reason)` | your rule, with [`PermissionGate::with`] |
//! | [`PermissionRule`] | the trait a gate's rule implements; [`AllowFn`] wraps a closure that answers `bool` ([`PermissionGate::new`]), [`PermissionFn`] one that answers a [`Permission`] ([`PermissionGate::with`]) | the gate; you name them only to store a gate's type |
//! | [`HookVerdict`] | what any hook's `before` answers, a gate's included: proceed, modify, deny, replace or ask | a hook you write yourself |
//! | [`DestructiveCalls`](crate::DestructiveCalls) | what the registry does with a destructive call no hook decided: ask (the default), allow or deny | the registry's setting |
//! | [`Decision`](crate::Decision) | a person's answer to a call that waits: approve, deny, or edit its arguments | whoever continues a paused run |
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

use async_trait::async_trait;
use serde_json::Value;

use crate::error::SkillError;
use crate::skill::{SkillMetadata, SkillOutput};

/// What a before-hook decides about a call.
#[derive(Debug, Clone, PartialEq)]
pub enum HookVerdict {
    /// Go on with the arguments as they are.
    Proceed,
    /// Go on with these arguments instead; they are validated again.
    Modify(Value),
    /// Refuse the call; the text is the reason the model reads.
    Deny(String),
    /// Skip the skill and answer the call with this text.
    Replace(String),
    /// The call needs a decision from outside the run: the text is the reason a person reads.
    /// An agent run pauses on it (agent-runtime's `FinishReason::AwaitingApproval`) and
    /// continues when it is decided (`AgentRuntime::continue_paused`); the
    /// call runs only if approved. A call approved that way passes this hook's `Ask` again; other
    /// hooks' denials still apply. Outside a run the call gets a
    /// [`SkillError::ApprovalRequired`] result.
    Ask(String),
}

/// Code that runs before and after every skill call. Both methods have defaults that change
/// nothing, so a hook implements only what it needs. Implement them as `async fn`s in an
/// `#[async_trait]` impl:
///
/// ```
/// use agent_core::{async_trait, HookVerdict, SkillError, SkillHook, SkillMetadata, SkillOutput};
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
///     ) -> Result<HookVerdict, SkillError> {
///         Ok(if metadata.is_destructive {
///             HookVerdict::Deny(format!("`{skill_name}` is not allowed here"))
///         } else {
///             HookVerdict::Proceed
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
/// Like every `#[async_trait]` method, each returns a boxed future ([`HookFuture`]); a method left
/// to its default costs one small allocation per call.
#[async_trait]
pub trait SkillHook: Send + Sync + 'static {
    /// Decides about a call before the skill runs. An `Err` ends the call with that error.
    ///
    /// Declared as `async fn before(&self, skill_name: &str, metadata: &SkillMetadata, args:
    /// &Value) -> Result<HookVerdict, SkillError>`.
    async fn before(
        &self,
        skill_name: &str,
        metadata: &SkillMetadata,
        args: &Value,
    ) -> Result<HookVerdict, SkillError> {
        let _ = (skill_name, metadata, args);
        Ok(HookVerdict::Proceed)
    }

    /// Sees every finished result, errors included, and may change it: what it leaves in `result`
    /// is what the model gets. A call that waits for a decision
    /// ([`Outcome::Paused`](crate::Outcome::Paused)) has not finished and is not shown: its
    /// after-hooks run when it has run.
    ///
    /// Declared as `async fn after(&self, skill_name: &str, args: &Value, result: &mut
    /// Result<SkillOutput, SkillError>)`.
    async fn after(
        &self,
        skill_name: &str,
        args: &Value,
        result: &mut Result<SkillOutput, SkillError>,
    ) {
        let _ = (skill_name, args, result);
    }

    /// Whether this hook is the application's permission policy. A registry with such a hook
    /// leaves calls of destructive skills to it; without one, they meet the registry's
    /// [`DestructiveCalls`](crate::DestructiveCalls) (by default a person is asked). A
    /// [`PermissionGate`] says yes; a hook that allows or refuses calls by its own rule should
    /// too. Default: `false`.
    fn decides_permissions(&self) -> bool {
        false
    }
}

/// The future a [`SkillHook`] method returns, as `#[async_trait]` writes it.
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An allowing `PermissionGate`'s answer: a unit struct, so boxing it allocates nothing.
struct Proceed;

impl Future for Proceed {
    type Output = Result<HookVerdict, SkillError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Ok(HookVerdict::Proceed))
    }
}

/// A hook that allows, denies or asks about calls by a rule on the skill's name and metadata.
///
/// [`PermissionGate::new`] takes a yes-or-no rule: a denied call gets a [`SkillError::Denied`]
/// result the model can read. [`PermissionGate::with`] takes a three-way rule: [`Permission::Ask`]
/// pauses an agent run until a person decides ([`HookVerdict::Ask`]).
///
/// ```
/// use agent_core::{Permission, PermissionGate, Registry};
///
/// let mut registry = Registry::new();
/// // Reads go ahead, destructive skills wait for a person, everything else is refused.
/// registry.with_hook(PermissionGate::with(|name, metadata| {
///     if metadata.is_read_only {
///         Permission::Allow
///     } else if metadata.is_destructive {
///         Permission::Ask(format!("`{name}` is destructive"))
///     } else {
///         Permission::Deny(format!("`{name}` is not allowed here"))
///     }
/// }));
/// ```
pub struct PermissionGate<R> {
    rule: R,
}

/// What a [`PermissionGate`]'s three-way rule decides about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// The call goes ahead.
    Allow,
    /// The call is refused; the text is the reason the model reads.
    Deny(String),
    /// A person decides; the text is the reason they read.
    Ask(String),
}

/// A [`PermissionGate`]'s rule: yes-or-no ([`PermissionGate::new`]) or three-way
/// ([`PermissionGate::with`]).
pub trait PermissionRule: Send + Sync + 'static {
    /// The decision about a call of `skill_name`.
    fn decide(&self, skill_name: &str, metadata: &SkillMetadata) -> Permission;
}

/// A closure that says whether a call may run (`true`) or is refused (`false`), as a
/// [`PermissionGate`]'s rule; made by [`PermissionGate::new`].
pub struct AllowFn<F>(F);

/// A closure that answers a [`Permission`] (allow, deny, or ask a person), as a
/// [`PermissionGate`]'s rule; made by [`PermissionGate::with`].
pub struct PermissionFn<F>(F);

impl<F> PermissionRule for AllowFn<F>
where
    F: Fn(&str, &SkillMetadata) -> bool + Send + Sync + 'static,
{
    fn decide(&self, skill_name: &str, metadata: &SkillMetadata) -> Permission {
        if (self.0)(skill_name, metadata) {
            Permission::Allow
        } else {
            Permission::Deny(format!(
                "permission to run `{skill_name}` was not granted; do not retry it, \
                 explain what you wanted to do instead"
            ))
        }
    }
}

impl<F> PermissionRule for PermissionFn<F>
where
    F: Fn(&str, &SkillMetadata) -> Permission + Send + Sync + 'static,
{
    fn decide(&self, skill_name: &str, metadata: &SkillMetadata) -> Permission {
        (self.0)(skill_name, metadata)
    }
}

impl<F> PermissionGate<AllowFn<F>>
where
    F: Fn(&str, &SkillMetadata) -> bool + Send + Sync + 'static,
{
    /// A gate that lets a call through when `allow(skill_name, metadata)` is true, and denies it
    /// otherwise.
    pub fn new(allow: F) -> Self {
        PermissionGate {
            rule: AllowFn(allow),
        }
    }
}

impl<F> PermissionGate<PermissionFn<F>>
where
    F: Fn(&str, &SkillMetadata) -> Permission + Send + Sync + 'static,
{
    /// A gate whose rule allows, denies or asks a person about each call.
    pub fn with(rule: F) -> Self {
        PermissionGate {
            rule: PermissionFn(rule),
        }
    }
}

// Written out instead of `#[async_trait]`: the rule decides at once, so an allowed call gets the
// zero-sized `Proceed` future and costs no allocation; only a denial or a question boxes its
// answer.
impl<R: PermissionRule> SkillHook for PermissionGate<R> {
    fn before<'life0, 'life1, 'life2, 'life3, 'async_trait>(
        &'life0 self,
        skill_name: &'life1 str,
        metadata: &'life2 SkillMetadata,
        _args: &'life3 Value,
    ) -> HookFuture<'async_trait, Result<HookVerdict, SkillError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        'life3: 'async_trait,
        Self: 'async_trait,
    {
        let outcome = match self.rule.decide(skill_name, metadata) {
            Permission::Allow => return Box::pin(Proceed),
            Permission::Deny(reason) => HookVerdict::Deny(reason),
            Permission::Ask(reason) => HookVerdict::Ask(reason),
        };
        Box::pin(std::future::ready(Ok(outcome)))
    }

    /// A gate is the application's permission policy: its rule decides destructive calls too.
    fn decides_permissions(&self) -> bool {
        true
    }
}
