//! A registry's hooks, and how they run around a call: every `before` in order on validated
//! arguments, every `after` in order on the result, each chain under one panic guard.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;

use super::entry::Entry;
use super::execute::parse;
use super::guard::{hook_panic_error, until_cancelled};
use super::prepared::{Decision, Next};
use crate::context::SkillContext;
use crate::error::SkillError;
use crate::hook::{HookVerdict, SkillHook};
use crate::skill::{ParsedInput, SkillOutput};

/// The hooks, in the order they were added.
#[derive(Default)]
pub(super) struct Hooks(Vec<Arc<dyn SkillHook>>);

impl Hooks {
    /// Adds a hook after the others.
    pub(super) fn push(&mut self, hook: Arc<dyn SkillHook>) {
        self.0.push(hook);
    }

    /// Whether a hook decides permissions: then destructive calls are left to it. Asked only
    /// about calls of destructive skills.
    pub(super) fn decides_permissions(&self) -> bool {
        self.0.iter().any(|hook| hook.decides_permissions())
    }

    /// Whether there are none: then a call needs no validation before its skill starts.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many there are.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Validates the arguments, then runs each hook's `before` in order. Nobody is asked about a
    /// call of a cancelled run (hooks may ask a person).
    pub(super) async fn before<'a>(
        &self,
        entry: &'a Entry,
        args: &Value,
        ctx: &SkillContext,
    ) -> Decision<'a> {
        if ctx.is_cancelled() {
            return Decision::answer(Err(SkillError::Cancelled));
        }
        let mut input = match parse(entry, args) {
            Ok(input) => input,
            Err(error) => return Decision::answer(Err(error)),
        };
        let mut modified = None;
        // One panic guard around the whole chain (one per hook cost ~13 ns each): a hook that
        // panics, as it is called (a `PermissionGate`'s rule) or polled, answers the call.
        let chain = self.before_chain(entry, args, &mut modified, &mut input, ctx);
        let next = match AssertUnwindSafe(chain).catch_unwind().await {
            Ok(None) => Next::Run(entry, Some(input)),
            Ok(Some(answer)) => Next::Answer(Box::new(answer)),
            Err(panic) => Next::Answer(Box::new(Err(hook_panic_error(&*panic)))),
        };
        Decision { next, modified }
    }

    /// Runs each hook's `before` in order on the validated `input`; `Some` is the call's answer
    /// when a hook ends it (a denial, a replacement, an error, or new arguments that are invalid).
    /// New arguments a hook sends are validated, then kept in `modified`.
    async fn before_chain(
        &self,
        entry: &Entry,
        args: &Value,
        modified: &mut Option<Box<Value>>,
        input: &mut ParsedInput,
        ctx: &SkillContext,
    ) -> Option<Result<SkillOutput, SkillError>> {
        for hook in &self.0 {
            let current = modified.as_deref().unwrap_or(args);
            let before = hook.before(&entry.definition.name, &entry.metadata, current);
            match until_cancelled(ctx, before).await {
                Ok(HookVerdict::Proceed) => {}
                Ok(HookVerdict::Modify(new_args)) => {
                    *input = match parse(entry, &new_args) {
                        Ok(new_input) => new_input,
                        Err(error) => return Some(Err(error)),
                    };
                    *modified = Some(Box::new(new_args));
                }
                Ok(HookVerdict::Deny(reason)) => return Some(Err(SkillError::Denied(reason))),
                Ok(HookVerdict::Replace(text)) => return Some(Ok(SkillOutput::Text(text))),
                // A person already approved this call (the run paused on it and was resumed).
                Ok(HookVerdict::Ask(_)) if ctx.is_approved() => {}
                Ok(HookVerdict::Ask(reason)) => {
                    return Some(Err(SkillError::ApprovalRequired(reason)));
                }
                Err(error) => return Some(Err(error)),
            }
        }
        None
    }

    /// Runs each hook's `after` in order on the result.
    pub(super) async fn after(
        &self,
        name: &str,
        args: &Value,
        mut output: Result<SkillOutput, SkillError>,
    ) -> Result<SkillOutput, SkillError> {
        // One panic guard around the rest of the chain, as in `before`. After a panic, what the
        // hook left half changed is not trusted: the later hooks see the failure instead.
        let mut from = 0;
        while from < self.0.len() {
            let mut at = from;
            let rest = AssertUnwindSafe(async {
                for (i, hook) in self.0.iter().enumerate().skip(from) {
                    at = i;
                    hook.after(name, args, &mut output).await;
                }
            });
            match rest.catch_unwind().await {
                Ok(()) => break,
                Err(panic) => {
                    output = Err(hook_panic_error(&*panic));
                    from = at + 1;
                }
            }
        }
        output
    }
}
