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
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::idempotency::{CallKey, TurnKeys};
use crate::shared_str::SharedStr;

type Extensions = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// The environment a skill runs in. See the [module docs](self).
#[derive(Clone)]
pub struct SkillContext {
    shared: Arc<Shared>,
    call_id: Option<SharedStr>,
    /// Whether a person approved this very call (set per call by the registry, from the
    /// scope's grant for the call's id, skill and arguments).
    approved: bool,
    /// What this call's idempotency key is made of (set per call by the registry), and the key
    /// once a skill asked for it. Behind a pointer: a context is moved and cloned on every
    /// call's path, and most calls never ask.
    key: Option<Arc<KeyCell>>,
    /// For a run's context: the parts of the keys of the turn's calls about to run.
    turn: Option<Arc<TurnKeys>>,
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
            approved: false,
            key: None,
            turn: None,
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
    /// A context made this way is not approved: only the registry, which checks the call
    /// against the person's decision, makes an approved one.
    pub fn with_call_id(mut self, call_id: impl Into<SharedStr>) -> Self {
        self.call_id = Some(call_id.into());
        self.approved = false;
        self.key = None;
        self
    }

    /// The context of one call about to run, the `position`-th of the calls run together:
    /// `call_id`, approved when the scope holds a grant for exactly this call (its id, `skill`
    /// and `arguments`). The grant is taken either way: it answers one call, once.
    ///
    /// Its idempotency key is made of the turn's parts and the call's place in the turn, or,
    /// for a call made from inside another (a program's call, under the program's context), of
    /// the outer call's key and this call's id.
    pub(crate) fn for_call(
        &self,
        call_id: SharedStr,
        skill: &str,
        arguments: &Value,
        position: usize,
    ) -> Self {
        let approved = self.shared.scope.take_grant(&call_id, skill, arguments);
        let key = match (&self.call_id, &self.turn) {
            (Some(_), _) => self.idempotency_key().map(|outer| CallKey::Inner {
                outer: outer.into(),
                call_id: call_id.clone(),
            }),
            (None, Some(turn)) => Some(turn.call(position)),
            (None, None) => None,
        };
        SkillContext {
            shared: self.shared.clone(),
            call_id: Some(call_id),
            approved,
            key: key.map(|parts| {
                Arc::new(KeyCell {
                    parts,
                    text: OnceLock::new(),
                })
            }),
            turn: None,
        }
    }

    /// This run's context for one turn's calls: their keys are made of `turn`'s parts (the
    /// runtime does this before it runs a turn's calls). Plumbing, not an API.
    #[doc(hidden)]
    pub fn for_turn(&self, turn: TurnKeys) -> Self {
        let mut ctx = self.clone();
        ctx.turn = Some(Arc::new(turn));
        ctx
    }

    /// The context for the call at `position` of a turn's calls run one at a time (a journaled
    /// run's): its key is that call's. Plumbing, not an API.
    #[doc(hidden)]
    pub fn at_position(&self, position: usize) -> Self {
        let mut ctx = self.clone();
        if let Some(turn) = &self.turn {
            ctx.turn = Some(Arc::new(TurnKeys::clone(turn).only(position)));
        }
        ctx
    }

    /// This call's idempotency key: the same for every attempt of the call — the registry's
    /// retries, a paused run continued in another process, a durable run replayed after a crash,
    /// a program replayed after its pause — and different for every other call, even one the
    /// model gave the same id (it is derived from the run, the call's place in it and the calls
    /// it was made inside, never from the model's id alone). `None` outside an agent run (a
    /// registry used directly, without a runtime).
    ///
    /// Hand it to what the call changes, so a repeat is harmless: as the `Idempotency-Key`
    /// header of an HTTP API that deduplicates by it, or as a unique key of the row a database
    /// insert writes.
    ///
    /// ```
    /// use agent_core::{skill, SkillContext, SkillError};
    ///
    /// /// Charge a customer.
    /// ///
    /// /// # Arguments
    /// /// * `cents` - The amount.
    /// #[skill(destructive, register = false)]
    /// async fn charge(ctx: &SkillContext, cents: u64) -> Result<String, SkillError> {
    ///     let key = ctx.idempotency_key().unwrap_or_default();
    ///     // e.g. http.post(url).header("Idempotency-Key", key).json(&body)
    ///     Ok(format!("charged {cents} with key {key}"))
    /// }
    /// ```
    pub fn idempotency_key(&self) -> Option<&str> {
        let key = self.key.as_deref()?;
        Some(key.text.get_or_init(|| key.parts.key()))
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
    ///
    /// An approval is for one call: the one the run paused on, with the skill and the
    /// arguments the person was shown (or the arguments of their edit). It is true for that
    /// call when it runs, once; any later call, whatever its id, asks again.
    pub fn is_approved(&self) -> bool {
        self.approved
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
            .field("approved", &self.approved)
            .field("cancelled", &self.is_cancelled())
            .field("extensions", &self.shared.extensions.len())
            .finish_non_exhaustive()
    }
}

/// A call's idempotency key: its parts, and the key once asked for.
#[derive(Debug)]
struct KeyCell {
    parts: CallKey,
    text: OnceLock<String>,
}

/// The state one run shares among all its calls, and loses when it ends (a chat's, or an MCP
/// connection's, for as long as it lasts): which deferred skills `tool_search` has loaded, the
/// calls a person approved after a pause, and what suspended calls get back when the run
/// continues. Every call's [`SkillContext`] reaches it as [`SkillContext::scope`]. Clones share the
/// same state; a new `RunScope` starts empty.
#[derive(Clone, Default, Debug)]
pub struct RunScope {
    loaded: Arc<Mutex<BTreeSet<String>>>,
    /// Calls a person approved after the run paused on them, by call id, each bound to the
    /// skill and the digest of the arguments that may run: taken by the call they answer
    /// ([`SkillContext::is_approved`]), once.
    grants: Arc<Mutex<BTreeMap<String, Grant>>>,
    /// Whether `grants` may hold any: a call in a scope without decisions (nearly every call)
    /// does not take the lock.
    granted: Arc<AtomicBool>,
    /// What suspended calls get back when the run continues (by call id).
    resumptions: Arc<Mutex<BTreeMap<String, crate::pending::Resumption>>>,
    /// Whether `resumptions` may hold any.
    resuming: Arc<AtomicBool>,
}

/// What an approval lets run: one skill with one set of arguments (their digest).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Grant {
    skill: String,
    arguments: String,
}

impl Grant {
    fn new(skill: &str, arguments: &Value) -> Self {
        let mut canonical = Vec::new();
        crate::digest::canonical_json(arguments, &mut canonical);
        Grant {
            skill: skill.to_owned(),
            arguments: crate::digest::sha256_hex(&[&canonical]),
        }
    }
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

    /// Lets the next call with id `call_id` through the hooks that ask, if it is to `skill`
    /// (its own name, not an alias) with exactly `arguments` (the runtime does this when a
    /// paused run is continued with an approval or an edit). The grant is taken by the first
    /// call with that id the registry runs in this scope, whether it matches or not, and
    /// [`RunScope::clear_decisions`] drops the grants no call took. Plumbing between agent-core
    /// and the runtimes, not an API: a skill or hook has no reason to call it.
    #[doc(hidden)]
    pub fn approve(&self, call_id: &str, skill: &str, arguments: &Value) {
        lock_map(&self.grants).insert(call_id.to_owned(), Grant::new(skill, arguments));
        self.granted.store(true, Ordering::Release);
    }

    /// Takes the grant for `call_id`: whether it was for `skill` with `arguments`.
    fn take_grant(&self, call_id: &str, skill: &str, arguments: &Value) -> bool {
        if !self.granted.load(Ordering::Acquire) {
            return false;
        }
        let Some(grant) = lock_map(&self.grants).remove(call_id) else {
            return false;
        };
        grant == Grant::new(skill, arguments)
    }

    /// Drops the grants and resumptions no call took (the runtime does this when a turn's
    /// calls are done): a decision answers the calls of the turn it was made for, never a later
    /// one with a reused id. Plumbing, not an API.
    #[doc(hidden)]
    pub fn clear_decisions(&self) {
        if self.granted.load(Ordering::Acquire) {
            let mut grants = lock_map(&self.grants);
            grants.clear();
            self.granted.store(false, Ordering::Release);
        }
        if self.resuming.swap(false, Ordering::AcqRel) {
            lock_map(&self.resumptions).clear();
        }
    }

    /// Hands the suspended call `call_id` what it needs to go on (the runtime does this when a
    /// run paused on a [`Suspension`](crate::pending::Suspension) continues). Plumbing, not an
    /// API.
    #[doc(hidden)]
    pub fn resume(&self, call_id: &str, resumption: crate::pending::Resumption) {
        lock_map(&self.resumptions).insert(call_id.to_owned(), resumption);
        self.resuming.store(true, Ordering::Release);
    }

    /// Takes what the suspended call `call_id` gets back, once: `None` when it is not resuming.
    pub fn take_resumption(&self, call_id: &str) -> Option<crate::pending::Resumption> {
        lock_map(&self.resumptions).remove(call_id)
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

/// Locks one of a scope's maps, as [`lock`] does its sets.
fn lock_map<V>(map: &Mutex<BTreeMap<String, V>>) -> std::sync::MutexGuard<'_, BTreeMap<String, V>> {
    map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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
