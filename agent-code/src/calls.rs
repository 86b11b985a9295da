//! The caller's side of a program's calls: each one answered from the record of an earlier run
//! of the same program, by a person's decision, or by running it through the run's registry
//! (hooks, permission rules, timeouts and the output budget as for a direct call), and what
//! becomes of a call that waits for a person.
//!
//! A program that paused runs again from the start. Its calls are numbered in the order it makes
//! them, which is the same each time (no clock, no randomness), so call number *k* of the new run
//! is call number *k* of the old one: answered from the [`Kept`] record when it completed, with
//! its decision when it was the one that waited. A call that is not the one recorded under its
//! number (another skill, other arguments) is refused: the program took another path, and
//! nothing that call would do is done.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::RwLock;

use agent_core::{
    Decision, PendingCall, Registry, SkillContext, SkillError, SkillOutput, ToolCall, ToolResult,
};

use agent_runtime::InnerCalls;

use crate::interpreter::{Request, Settle};

/// What a paused program keeps for when it runs again: the calls that completed, and those that
/// wait for a decision, by number.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Kept {
    /// Calls that completed, with what they answered.
    #[serde(default)]
    pub(crate) done: BTreeMap<usize, Recorded>,
    /// Calls that wait for a person, with the hook's reason.
    #[serde(default)]
    pub(crate) waiting: BTreeMap<usize, Waiting>,
}

/// A completed call: which, and its answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Recorded {
    pub(crate) name: String,
    pub(crate) args: Value,
    /// Its value (`ok`), or its error's message.
    pub(crate) ok: bool,
    pub(crate) answer: Value,
}

impl Recorded {
    /// What the program is answered with: the value as JSON text, or the error's message.
    fn settle(&self) -> Settle {
        if self.ok {
            Settle::Value(self.answer.to_string())
        } else {
            Settle::Error(self.answer.as_str().unwrap_or_default().to_owned())
        }
    }
}

/// A call that waits for a person.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Waiting {
    pub(crate) name: String,
    pub(crate) args: Value,
    pub(crate) reason: String,
}

/// The id a call of the program has inside the `run_code` call (`c1` is call number 0): the
/// last part of a pending call's id (`p1/c1`).
pub(crate) fn call_id(index: usize) -> String {
    format!("c{}", index + 1)
}

/// The number of a call from its id, when it is one.
pub(crate) fn index_of(id: &str) -> Option<usize> {
    id.strip_prefix('c')?.parse::<usize>().ok()?.checked_sub(1)
}

/// Everything the calls of one program share.
pub(crate) struct Calls<'a> {
    pub(crate) registry: &'a Registry,
    /// The context inner calls run in: the `run_code` call's, with a scope of its own (a
    /// decision approves the inner call there, not a call of the outer run by the same id).
    pub(crate) ctx: SkillContext,
    /// What an earlier run of the program left.
    pub(crate) before: Kept,
    /// The decisions for calls that waited, by number.
    pub(crate) decisions: BTreeMap<usize, Decision>,
    /// Concurrency-safe calls share it; any other call holds it alone.
    pub(crate) exclusive: RwLock<()>,
    /// The name of the skill that runs programs (a program may not call it).
    pub(crate) own_name: &'a str,
    /// The run the program's call is in: its journal and its sinks.
    pub(crate) inner: InnerCalls<'a>,
}

/// What became of one call: its number, its answer for the program, and what to record.
pub(crate) struct Answered {
    pub(crate) index: usize,
    pub(crate) settle: Settle,
    pub(crate) record: Record,
}

/// What to keep of a call.
pub(crate) enum Record {
    Done(Recorded),
    Waiting(Waiting),
    Nothing,
}

impl Calls<'_> {
    /// Answers `request`: from the record, by its decision, or by running it.
    pub(crate) async fn answer(&self, request: Request) -> Answered {
        let Request { index, name, args } = request;
        let refuse = |message: String| Answered {
            index,
            settle: Settle::Error(message),
            record: Record::Nothing,
        };
        let args: Value = match serde_json::from_str(&args) {
            Ok(args) => args,
            Err(e) => return refuse(format!("the arguments of `{name}` are not JSON: {e}")),
        };
        if name == self.own_name {
            return refuse(format!("`{name}` cannot be called from a program"));
        }
        if let Some(recorded) = self.before.done.get(&index) {
            if recorded.name != name || recorded.args != args {
                return refuse(other_path(index, &recorded.name, &name));
            }
            return Answered {
                index,
                settle: recorded.settle(),
                record: Record::Done(recorded.clone()),
            };
        }
        let mut run_with = args.clone();
        if let Some(waited) = self.before.waiting.get(&index) {
            if waited.name != name || waited.args != args {
                return refuse(other_path(index, &waited.name, &name));
            }
            match self.decisions.get(&index) {
                Some(Decision::Deny(reason)) => {
                    let error = SkillError::Denied(reason.clone()).to_string();
                    return self.done(index, &name, args, Err(error));
                }
                Some(Decision::Edit(edited)) => {
                    run_with = edited.clone();
                    self.ctx
                        .scope()
                        .approve(&call_id(index), &self.skill_of(&name), &run_with);
                }
                Some(Decision::Approve) => {
                    self.ctx
                        .scope()
                        .approve(&call_id(index), &self.skill_of(&name), &run_with)
                }
                None => {}
            }
        }
        let result = self.run(index, &name, run_with).await;
        match result.output {
            Ok(SkillOutput::Text(text)) => self.done(index, &name, args, Ok(Value::String(text))),
            Ok(SkillOutput::Json(value)) => self.done(index, &name, args, Ok(value)),
            // A program handles JSON, not bytes: it reads a call's media as descriptions (type,
            // size, name) beside the text; the media does not reach the model through a program.
            Ok(SkillOutput::Content(content)) => {
                let media: Vec<Value> = content
                    .media()
                    .map(|m| {
                        serde_json::json!({
                            "media_type": &*m.media_type,
                            "bytes": m.len(),
                            "name": m.name.as_deref(),
                            "url": m.url_str(),
                        })
                    })
                    .collect();
                let text = content.text_only().into_owned();
                let value = serde_json::json!({"text": text, "media": media});
                self.done(index, &name, args, Ok(value))
            }
            Err(SkillError::ApprovalRequired(reason)) => Answered {
                index,
                settle: Settle::Asked,
                record: Record::Waiting(Waiting { name, args, reason }),
            },
            Err(SkillError::Suspended(_)) => refuse(format!(
                "`{name}` paused on calls of its own (an agent used as a skill that waits for a \
                 person); such a call cannot be made from a program: call it directly"
            )),
            Err(error) => self.done(index, &name, args, Err(error.to_string())),
        }
    }

    /// The skill `name` stands for (its own name, where the program used an alias).
    fn skill_of(&self, name: &str) -> String {
        self.registry
            .metadata(name)
            .map_or_else(|| name.to_owned(), |m| m.name.to_string())
    }

    /// Runs call `index` through the registry, beside other concurrency-safe calls or alone.
    async fn run(&self, index: usize, name: &str, args: Value) -> ToolResult {
        let call = ToolCall::new(call_id(index), name, args);
        let safe = self
            .registry
            .metadata(name)
            .is_none_or(|m| m.is_concurrency_safe);
        if safe {
            let _shared = self.exclusive.read().await;
            self.inner.run(self.registry, &call, &self.ctx).await
        } else {
            let _alone = self.exclusive.write().await;
            self.inner.run(self.registry, &call, &self.ctx).await
        }
    }

    fn done(
        &self,
        index: usize,
        name: &str,
        args: Value,
        answer: Result<Value, String>,
    ) -> Answered {
        let (ok, answer) = match answer {
            Ok(value) => (true, value),
            Err(message) => (false, Value::String(message)),
        };
        let recorded = Recorded {
            name: name.to_owned(),
            args,
            ok,
            answer,
        };
        Answered {
            index,
            settle: recorded.settle(),
            record: Record::Done(recorded),
        }
    }

    /// The pending calls of a program that waits: one per call waiting for a person.
    pub(crate) fn pending(&self, waiting: &BTreeMap<usize, Waiting>) -> Vec<PendingCall> {
        pending_calls(self.registry, waiting)
    }
}

/// The calls of a program that wait for a person, as the run shows them: what the program
/// suspends with, and what a resumption's digests are checked against.
pub(crate) fn pending_calls(
    registry: &Registry,
    waiting: &BTreeMap<usize, Waiting>,
) -> Vec<PendingCall> {
    waiting
        .iter()
        .map(|(index, waited)| {
            let metadata = registry.metadata(&waited.name);
            let metadata = metadata.as_ref();
            PendingCall {
                call: ToolCall::new(call_id(*index), &waited.name, waited.args.clone()),
                skill: metadata.map_or_else(|| waited.name.clone(), |m| m.name.to_string()),
                is_read_only: metadata.is_some_and(|m| m.is_read_only),
                is_destructive: metadata.is_some_and(|m| m.is_destructive),
                reason: waited.reason.clone(),
                via: Vec::new(),
            }
        })
        .collect()
}

fn other_path(index: usize, before: &str, now: &str) -> String {
    format!(
        "not run: the program took another path when it ran again after its pause (its call {} \
         was `{before}`, now `{now}` or other arguments); a program must make the same calls in \
         the same order each time it runs",
        call_id(index)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_and_numbers_go_both_ways() {
        assert_eq!(call_id(0), "c1");
        assert_eq!(index_of("c1"), Some(0));
        assert_eq!(index_of("c12"), Some(11));
        for bad in ["c0", "x1", "c", "c-1", "1"] {
            assert_eq!(index_of(bad), None, "{bad}");
        }
    }
}
