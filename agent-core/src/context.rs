//! What a running skill can reach: the workspace root, the run's cancellation token, the id of the
//! call being answered, the run's scope (its [`RunScope`]), and typed extensions for shared resources.
//!
//! Extensions replace globals. Put a database pool or an HTTP client in the context once, and every
//! skill asks for it by type:
//!
//! ```
//! use agent_core::SkillContext;
//!
//! struct ApiClient { base: String }
//!
//! let ctx = SkillContext::new("/srv/project")
//!     .with_extension(ApiClient { base: "http://localhost:8080".into() });
//! assert_eq!(ctx.extension::<ApiClient>().unwrap().base, "http://localhost:8080");
//! assert!(ctx.extension::<String>().is_none());
//! ```
//!
//! Cloning a context is cheap and clones share everything (scope, extensions, token) except the
//! call id, which the registry sets per call.

use std::any::{Any, TypeId};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::shared_str::SharedStr;

type Extensions = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// The environment a skill runs in. See the [module docs](self).
#[derive(Clone)]
pub struct SkillContext {
    shared: Arc<Shared>,
    call_id: Option<SharedStr>,
}

/// Everything clones of a context share; copied on write by the builder methods.
#[derive(Clone)]
struct Shared {
    workspace_root: PathBuf,
    cancellation: CancellationToken,
    scope: RunScope,
    extensions: Extensions,
}

impl Default for SkillContext {
    /// A context rooted at the current directory (`.`), with a fresh scope and token.
    fn default() -> Self {
        SkillContext::new(".")
    }
}

impl SkillContext {
    /// A context whose workspace is `workspace_root`, with a fresh scope and cancellation token.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        SkillContext {
            shared: Arc::new(Shared {
                workspace_root: workspace_root.into(),
                cancellation: CancellationToken::new(),
                scope: RunScope::default(),
                extensions: Extensions::new(),
            }),
            call_id: None,
        }
    }

    /// The directory skills that touch files are confined to.
    pub fn workspace_root(&self) -> &Path {
        &self.shared.workspace_root
    }

    /// The same context (extensions, scope, token) with another workspace.
    pub fn with_workspace_root(mut self, workspace_root: impl Into<PathBuf>) -> Self {
        Arc::make_mut(&mut self.shared).workspace_root = workspace_root.into();
        self
    }

    /// Uses `token` to cancel the calls made with this context.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        Arc::make_mut(&mut self.shared).cancellation = token;
        self
    }

    /// The token that cancels this run. A long-running skill may poll it or await
    /// [`CancellationToken::cancelled`]; the registry also drops running calls when it fires.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.shared.cancellation
    }

    /// Whether the run has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.shared.cancellation.is_cancelled()
    }

    /// Sets the id of the tool call being answered (the registry does this for every call).
    pub fn with_call_id(mut self, call_id: impl Into<SharedStr>) -> Self {
        self.call_id = Some(call_id.into());
        self
    }

    /// The id of the tool call being answered, inside a skill; `None` outside a call.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// Takes the call id out of a context that is done with.
    pub(crate) fn into_call_id(self) -> Option<SharedStr> {
        self.call_id
    }

    /// Uses `scope` instead of this context's own (to share one run's scope between contexts).
    pub fn with_scope(mut self, scope: RunScope) -> Self {
        Arc::make_mut(&mut self.shared).scope = scope;
        self
    }

    /// The scope (one agent run, or one chat or MCP connection) this call belongs to: the deferred
    /// skills loaded in it and the calls a person approved.
    pub fn scope(&self) -> &RunScope {
        &self.shared.scope
    }

    /// Whether a person approved the call being answered, after the run paused on it. A skill
    /// that asks for approval itself (returning [`SkillError::ApprovalRequired`](
    /// crate::SkillError::ApprovalRequired)) checks this when it runs again.
    pub fn is_approved(&self) -> bool {
        self.call_id
            .as_deref()
            .is_some_and(|id| self.shared.scope.is_approved(id))
    }

    /// What the call being answered gets back when it suspended
    /// ([`SkillError::Suspended`](crate::SkillError::Suspended)) and its run now continues: its
    /// state and the decisions about its pending calls. Taken once; `None` for a fresh call.
    pub fn take_resumption(&self) -> Option<crate::pending::Resumption> {
        let id = self.call_id.as_deref()?;
        self.shared.scope.take_resumption(id)
    }

    /// Adds a value skills can look up by its type; a second value of the same type replaces the first.
    pub fn with_extension<T: Any + Send + Sync>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.shared)
            .extensions
            .insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// The value of type `T` added with [`SkillContext::with_extension`], if any.
    pub fn extension<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.shared
            .extensions
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
    }
}

impl std::fmt::Debug for SkillContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillContext")
            .field("workspace_root", &self.shared.workspace_root)
            .field("call_id", &self.call_id)
            .field("cancelled", &self.is_cancelled())
            .field("extensions", &self.shared.extensions.len())
            .finish_non_exhaustive()
    }
}

/// State that lives as long as one run (or one chat, or one MCP connection): which deferred skills
/// `tool_search` has loaded. Clones share the same state; a new `RunScope` starts empty.
#[derive(Clone, Default, Debug)]
pub struct RunScope {
    loaded: Arc<Mutex<BTreeSet<String>>>,
    /// Calls a person approved after the run paused on them (by call id): a hook's
    /// [`HookVerdict::Ask`](crate::HookVerdict::Ask) lets them through.
    approved: Arc<Mutex<BTreeSet<String>>>,
    /// What suspended calls get back when the run continues (by call id).
    resumptions: Arc<Mutex<std::collections::BTreeMap<String, crate::pending::Resumption>>>,
}

impl RunScope {
    /// A scope with nothing loaded.
    pub fn new() -> Self {
        RunScope::default()
    }

    /// Makes the deferred skill `name` part of the definitions sent in this scope.
    pub fn load(&self, name: impl Into<String>) {
        self.lock().insert(name.into());
    }

    /// Whether `name` was loaded.
    pub fn is_loaded(&self, name: &str) -> bool {
        self.lock().contains(name)
    }

    /// The names loaded so far, sorted.
    pub fn loaded(&self) -> Vec<String> {
        self.lock().iter().cloned().collect()
    }

    /// Marks the call `call_id` as approved by a person (the runtime does this when a paused run
    /// is resumed with an approval). Plumbing between agent-core and agent-runtime, not an API: a
    /// skill or hook has no reason to call it.
    #[doc(hidden)]
    pub fn approve(&self, call_id: &str) {
        lock(&self.approved).insert(call_id.to_owned());
    }

    /// Whether the call `call_id` was approved by a person.
    pub fn is_approved(&self, call_id: &str) -> bool {
        lock(&self.approved).contains(call_id)
    }

    /// Hands the suspended call `call_id` what it needs to go on (the runtime does this when a
    /// run paused on a [`Suspension`](crate::pending::Suspension) continues). Plumbing, not an
    /// API.
    #[doc(hidden)]
    pub fn resume(&self, call_id: &str, resumption: crate::pending::Resumption) {
        self.resumptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(call_id.to_owned(), resumption);
    }

    /// Takes what the suspended call `call_id` gets back, once: `None` when it is not resuming.
    pub fn take_resumption(&self, call_id: &str) -> Option<crate::pending::Resumption> {
        self.resumptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(call_id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        lock(&self.loaded)
    }
}

/// Locks one of a scope's sets. They are always left consistent, so a poisoned lock is safe to
/// keep using.
fn lock(set: &Mutex<BTreeSet<String>>) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
    set.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_scope_but_new_contexts_do_not() {
        let a = SkillContext::default();
        let b = a.clone().with_call_id("call_1");
        b.scope().load("delete_file");
        assert!(a.scope().is_loaded("delete_file"));
        assert!(!SkillContext::default().scope().is_loaded("delete_file"));
        assert_eq!(b.call_id(), Some("call_1"));
        assert_eq!(a.call_id(), None);
    }

    #[test]
    fn extensions_are_found_by_type_and_replaced_by_type() {
        let ctx = SkillContext::default()
            .with_extension(1u32)
            .with_extension(2u32);
        assert_eq!(ctx.extension::<u32>(), Some(&2));
        let ctx2 = ctx.clone().with_extension(String::from("x"));
        assert!(
            ctx.extension::<String>().is_none(),
            "adding to a clone leaves the original alone"
        );
        assert_eq!(ctx2.extension::<u32>(), Some(&2));
    }

    #[test]
    fn cancellation_is_shared_with_the_token() {
        let token = CancellationToken::new();
        let ctx = SkillContext::default().with_cancellation(token.clone());
        assert!(!ctx.is_cancelled());
        token.cancel();
        assert!(ctx.is_cancelled());
    }
}
