//! A call on its way to its result: its name looked up once (a skill the registry knows, or not),
//! then what happens next once the before-hooks have seen it.

use serde_json::Value;

use super::Registry;
use super::entry::Entry;
use super::live::LiveView;
use crate::call::{SharedStr, ToolCall};
use crate::context::SkillContext;
use crate::error::SkillError;
use crate::skill::{ParsedInput, SkillOutput};

/// A call whose name was looked up: the one lookup a call gets.
#[derive(Clone, Copy)]
pub(super) enum PreparedCall<'a> {
    /// A name or alias of a skill.
    Known {
        /// The call.
        call: &'a ToolCall,
        /// The registry's copy of the name the model used.
        called_as: &'a SharedStr,
        /// The skill.
        entry: &'a Entry,
    },
    /// A name no skill has: answered with an error that suggests close names.
    Unknown(&'a ToolCall),
}

// The small functions on every call's path are `#[inline]`, so that they are inlined across
// codegen units too: without, a call without hooks took ~10 % longer.
impl<'a> PreparedCall<'a> {
    /// The call as the model made it.
    #[inline]
    pub(super) fn call(self) -> &'a ToolCall {
        match self {
            PreparedCall::Known { call, .. } | PreparedCall::Unknown(call) => call,
        }
    }

    /// The context the call runs in, the `position`-th of the calls run together: `ctx` with
    /// the call's id and key, approved when a person's decision granted exactly this call (its
    /// id, skill and arguments); the grant is used up.
    #[inline]
    pub(super) fn context(self, ctx: &SkillContext, position: usize) -> SkillContext {
        let call = self.call();
        ctx.for_call(
            call.id.clone(),
            self.skill_name(),
            &call.arguments,
            position,
        )
    }

    /// Whether the call may run together with other concurrency-safe calls. A call of an unknown
    /// name only produces an error, so it may.
    #[inline]
    pub(super) fn is_concurrency_safe(self) -> bool {
        match self {
            PreparedCall::Known { entry, .. } => entry.metadata.is_concurrency_safe,
            PreparedCall::Unknown(_) => true,
        }
    }

    /// The name hooks see: the skill's own, whatever alias the model used (a rule about
    /// `delete_file` must not be dodged by calling `rm`); an unknown name stays as called.
    #[inline]
    pub(super) fn skill_name(self) -> &'a str {
        match self {
            PreparedCall::Known { entry, .. } => &entry.definition.name,
            PreparedCall::Unknown(call) => &call.name,
        }
    }

    /// The name the result carries: the one the model used (an unknown name is copied).
    #[inline]
    pub(super) fn called_as(self) -> SharedStr {
        match self {
            PreparedCall::Known { called_as, .. } => called_as.clone(),
            PreparedCall::Unknown(call) => SharedStr::from(call.name.as_str()),
        }
    }
}

impl Registry {
    /// Looks the call's name or alias up: among the registry's own skills, then the live sets'
    /// as `live` has them.
    #[inline]
    pub(super) fn prepare<'a>(
        &'a self,
        call: &'a ToolCall,
        live: &'a LiveView,
    ) -> PreparedCall<'a> {
        match self
            .skills
            .lookup(&call.name)
            .or_else(|| live.lookup(&call.name))
        {
            Some((called_as, entry)) => PreparedCall::Known {
                call,
                called_as,
                entry,
            },
            None => PreparedCall::Unknown(call),
        }
    }
}

/// A call on which the before-hooks (if any) have decided, with its own context (the caller's,
/// with the call's id).
pub(super) struct Decided<'a> {
    /// The call.
    pub(super) call: PreparedCall<'a>,
    /// What happens next.
    pub(super) decision: Decision<'a>,
    /// The context the skill and its result get.
    pub(super) ctx: SkillContext,
}

/// What happens to a call once the before-hooks (if any) have seen it.
pub(super) struct Decision<'a> {
    /// Run the skill, or answer without it.
    pub(super) next: Next<'a>,
    /// The arguments a hook put in place of the model's (boxed: rare, and it keeps this small).
    pub(super) modified: Option<Box<Value>>,
}

/// The step after the before-hooks.
pub(super) enum Next<'a> {
    /// Run this skill. The input is already parsed when hooks had to see valid arguments first;
    /// otherwise the skill parses and starts in one step.
    Run(&'a Entry, Option<ParsedInput>),
    /// Answer without running a skill: an unknown name, bad arguments, a cancelled run, a hook's
    /// denial, replacement, error or panic.
    Answer(Box<Result<SkillOutput, SkillError>>),
}

impl<'a> Decision<'a> {
    /// Run `entry`'s skill on the model's arguments, parsing them as it starts.
    #[inline]
    pub(super) fn run(entry: &'a Entry) -> Self {
        Decision {
            next: Next::Run(entry, None),
            modified: None,
        }
    }

    /// Answer with `output`, running nothing.
    #[inline]
    pub(super) fn answer(output: Result<SkillOutput, SkillError>) -> Self {
        Decision {
            next: Next::Answer(Box::new(output)),
            modified: None,
        }
    }
}
