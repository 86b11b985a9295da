//! What happens to a destructive skill's call when the application has not said: a person is
//! asked ([`DestructiveCalls::Ask`], the default). The safe path needs no code; running such calls
//! unasked is a choice the application writes down ([`Registry::destructive_calls`], or a hook
//! that decides permissions, such as a [`PermissionGate`](crate::PermissionGate)).

use serde_json::Value;

use super::Registry;
use super::entry::Entry;
use super::execute::parse;
use crate::context::SkillContext;
use crate::error::SkillError;

/// What a registry does with a call of a destructive skill (`#[skill(destructive)]`) that every
/// hook let through, when none of its hooks decides permissions
/// ([`SkillHook::decides_permissions`](crate::SkillHook::decides_permissions): a
/// [`PermissionGate`](crate::PermissionGate) does). Set with [`Registry::destructive_calls`].
///
/// ```
/// use agent_core::{DestructiveCalls, Registry};
///
/// let mut registry = Registry::new();
/// // This application trusts its destructive skills (a sandboxed job with nothing to lose).
/// registry.destructive_calls(DestructiveCalls::Allow);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DestructiveCalls {
    /// A person decides. In an agent run the run pauses on the call
    /// (`FinishReason::AwaitingApproval`) and the call runs once, if approved; outside a run (a
    /// direct [`Registry::run_many`], an MCP server) the call is answered with
    /// [`SkillError::ApprovalRequired`] and does not run. The default.
    #[default]
    Ask,
    /// They run like any other call.
    Allow,
    /// They are refused with [`SkillError::Denied`]; the model reads why.
    Deny,
}

impl Registry {
    /// Sets what happens to calls of destructive skills when no hook decides permissions (see
    /// [`DestructiveCalls`]; by default a person is asked).
    pub fn destructive_calls(&mut self, policy: DestructiveCalls) -> &mut Self {
        self.settings.destructive = policy;
        self
    }

    /// The answer a call of `entry` with `args` gets instead of running, by the default for
    /// destructive calls; `None` when it may run. `ctx` is the call's own (a call a person
    /// approved runs). Nobody is asked about arguments the skill would refuse: their error is the
    /// answer, as it is when a hook asks.
    #[inline]
    pub(super) fn destructive_answer(
        &self,
        entry: &Entry,
        args: &Value,
        ctx: &SkillContext,
    ) -> Option<SkillError> {
        if !entry.metadata.is_destructive || self.hooks.decides_permissions() {
            return None;
        }
        let name = &entry.definition.name;
        match self.settings.destructive {
            DestructiveCalls::Allow => None,
            DestructiveCalls::Ask if ctx.is_approved() => None,
            DestructiveCalls::Ask if let Err(error) = parse(entry, args) => Some(error),
            DestructiveCalls::Ask => Some(SkillError::ApprovalRequired(format!(
                "`{name}` is destructive (it does something hard to undo): a person must approve this call"
            ))),
            DestructiveCalls::Deny => Some(SkillError::Denied(format!(
                "`{name}` is destructive and this application does not run destructive skills; \
                 do not retry it, explain what you wanted to do instead"
            ))),
        }
    }
}
