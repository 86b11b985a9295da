//! The pause: a turn whose calls include one a hook answered with
//! [`HookVerdict::Ask`](agent_core::HookVerdict::Ask) stops the run, which hands back its state
//! with the calls waiting ([`hold`]); the turn's other calls have run, and their results are kept,
//! so that on resumption every result enters the transcript in call order. Decisions turn the
//! paused state back into a turn to finish ([`decide`]), and the loop keeps stepping.
//!
//! Nothing here runs anything: these are changes of the run's state, checked first.

use std::collections::HashMap;

use serde_json::Value;

use crate::runtime::finish::agent_error::{AgentError, ResumeError};
use crate::runtime::step::run_state::{Next, RunState};
use crate::runtime::step::tool_record::ToolRecord;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::error::SkillError;
use agent_core::pending::{CallRef, Decision, PendingCall, Resumption};
use agent_core::registry::Registry;
use agent_llm::message::Message;

/// Whether a call of the turn waits for a decision: a hook asked, or the call suspended on calls
/// of its own.
pub(in crate::runtime) fn is_pending(result: &ToolResult) -> bool {
    matches!(
        result.output,
        Err(SkillError::ApprovalRequired(_) | SkillError::Suspended(_))
    )
}

/// Whether a call of the turn suspended on calls of its own (a nested agent that paused).
pub(in crate::runtime) fn is_suspended(result: &ToolResult) -> bool {
    matches!(result.output, Err(SkillError::Suspended(_)))
}

/// Answers the calls that wait for a decision as not run (the run ends without one); with
/// `approvals_only`, only those a hook asked about (a suspended call still pauses the run).
pub(in crate::runtime) fn not_run(results: &mut [ToolResult], approvals_only: bool) {
    for result in results.iter_mut().filter(|r| is_pending(r)) {
        if approvals_only && is_suspended(result) {
            continue;
        }
        result.output = Err(SkillError::tool(
            "not run: it needed approval, and the run ended first",
        ));
    }
}

/// Holds a turn whose results include calls waiting for a decision: the state that waits for
/// them, and the results of the others (reported by the caller as they are kept). A suspended
/// call's inner pending calls are listed as seen from this run ([`PendingCall::inside`]), and
/// its state kept for when it runs again. A turn of an agent the conversation was handed to
/// lists its calls under the agents `handoffs` names ([`PendingCall::handed_to`]), as a nested
/// agent's calls are listed under it.
pub(in crate::runtime) fn hold(
    registry: &Registry,
    handoffs: &[String],
    calls: &[ToolCall],
    results: Vec<ToolResult>,
    cut_off: Option<Message>,
) -> (Next, Vec<ToolResult>) {
    let mut pending = Vec::new();
    let mut suspended = Vec::new();
    let mut done = Vec::new();
    // The skill's own name (the model may have used an alias), for the calls that wait.
    let skill_of = |call: &ToolCall| {
        registry
            .metadata(&call.name)
            .map_or_else(|| call.name.clone(), |m| m.name.to_string())
    };
    for (call, result) in calls.iter().zip(results) {
        match result.output {
            Err(SkillError::ApprovalRequired(reason)) => {
                let metadata = registry.metadata(&call.name);
                let metadata = metadata.as_ref();
                pending.push(PendingCall {
                    call: call.clone(),
                    skill: skill_of(call),
                    is_read_only: metadata.is_some_and(|m| m.is_read_only),
                    is_destructive: metadata.is_some_and(|m| m.is_destructive),
                    reason,
                    via: Vec::new(),
                });
            }
            Err(SkillError::Suspended(suspension)) => {
                let suspension = *suspension;
                let skill = skill_of(call);
                pending.extend(
                    suspension
                        .pending
                        .into_iter()
                        .map(|inner| inner.inside(&call.id, &skill)),
                );
                suspended.push((call.id.to_string(), suspension.state));
            }
            output => done.push(ToolResult { output, ..result }),
        }
    }
    let pending = pending
        .into_iter()
        .map(|call| {
            handoffs
                .iter()
                .rev()
                .fold(call, |call, agent| call.handed_to(agent))
        })
        .collect();
    let next = Next::Decisions {
        pending,
        done: done
            .iter()
            .map(|r| ToolRecord::keep(r, Vec::new()))
            .collect(),
        suspended,
        cut_off,
    };
    (next, done)
}

/// Turns a paused state into the turn to finish with these decisions: approved and edited calls
/// will run (once, through the hooks, which let an approved call through where they asked),
/// denied ones are answered with the reason. Checked first, against the state and `registry`
/// ([`check`]); otherwise [`AgentError::Resume`] and the state is unchanged.
pub(in crate::runtime) fn decide(
    state: &mut RunState,
    decisions: Vec<(CallRef, Decision)>,
    registry: &Registry,
) -> Result<(), AgentError> {
    let mut map = HashMap::new();
    for (call, decision) in decisions {
        let id = call.id.clone();
        if map.insert(id.clone(), (call.seen, decision)).is_some() {
            return Err(ResumeError::TwoDecisions { id }.into());
        }
    }
    check(state, &map, registry)?;
    let Next::Decisions {
        pending,
        mut done,
        suspended,
        cut_off,
    } = std::mem::replace(&mut state.next, Next::Model)
    else {
        unreachable!("checked: the state waits for decisions");
    };
    let mut approved: Vec<(String, Option<Value>)> = Vec::new();
    let mut resume: Vec<(String, Resumption)> = Vec::new();
    for waiting in pending {
        let id = waiting.id();
        let (_, decision) = map
            .remove(&id)
            .expect("checked: every pending call has a decision");
        if let Some(outer) = waiting.outer() {
            // A call inside a suspended one: its decision goes to that call, which runs again,
            // with the digest of the call as this run showed it (seen from inside), which the
            // inner run checks its own copy against.
            let inner_id = id[outer.call_id.len() + 1..].to_owned();
            let seen = waiting
                .within()
                .expect("a call inside another has an outer step")
                .digest();
            match resume
                .iter_mut()
                .find(|(call_id, _)| *call_id == outer.call_id)
            {
                Some((_, resumption)) => {
                    resumption.seen.push((inner_id.clone(), seen));
                    resumption.decisions.push((inner_id, decision));
                }
                None => {
                    let state = suspended
                        .iter()
                        .find(|(call_id, _)| *call_id == outer.call_id)
                        .map(|(_, state)| state.clone())
                        .unwrap_or(Value::Null);
                    resume.push((
                        outer.call_id.clone(),
                        Resumption {
                            state,
                            seen: vec![(inner_id.clone(), seen)],
                            decisions: vec![(inner_id, decision)],
                        },
                    ));
                    approved.push((outer.call_id.clone(), None));
                }
            }
            continue;
        }
        match decision {
            Decision::Approve => approved.push((id, None)),
            Decision::Edit(arguments) => approved.push((id, Some(arguments))),
            Decision::Deny(reason) => {
                let result = ToolResult::new(&waiting.call, Err(SkillError::Denied(reason)));
                done.push(ToolRecord::keep(&result, Vec::new()));
            }
        }
    }
    state.next = Next::Calls {
        cut_off,
        done,
        approved: Some(approved),
        resume,
    };
    Ok(())
}

/// The decisions by call id: the digest each was made on, if any, and the decision.
type Decisions = HashMap<String, (Option<String>, Decision)>;

/// Checks the paused state and the decisions before anything runs:
///
/// - the state waits for decisions, its pending ids are distinct, and so are the ids of the
///   calls in its transcript's last message (a state with the same id twice is malformed);
/// - every pending call has exactly one decision, and every decision names a pending call;
/// - a decision made on a digest ([`CallRef::seen`]) answers a call with that digest;
/// - each pending call is the transcript's: the call of the run with its id (itself, or the
///   outer call it was made inside) is in the last message, to the same skill, and a call of the
///   run itself has the same name and arguments there as in the pending list, which is what a
///   person is shown, so the copy that runs is the copy they saw;
/// - the registry has each of those skills.
fn check(state: &RunState, decisions: &Decisions, registry: &Registry) -> Result<(), AgentError> {
    let Next::Decisions { pending, .. } = &state.next else {
        return Err(ResumeError::NotPaused.into());
    };
    let ids: Vec<String> = pending.iter().map(PendingCall::id).collect();
    if let Some(twice) = first_repeated(ids.iter().map(String::as_str)) {
        return Err(ResumeError::PendingTwice {
            id: twice.to_owned(),
        }
        .into());
    }
    let calls: &[ToolCall] = state
        .transcript
        .last()
        .map_or(&[][..], |last| &last.tool_calls[..]);
    if let Some(twice) = first_repeated(calls.iter().map(|c| &*c.id)) {
        return Err(ResumeError::CallIdTwice {
            id: twice.to_owned(),
        }
        .into());
    }
    let missing: Vec<String> = ids
        .iter()
        .filter(|id| !decisions.contains_key(*id))
        .cloned()
        .collect();
    let mut unknown: Vec<String> = decisions
        .keys()
        .filter(|id| !ids.contains(id))
        .cloned()
        .collect();
    unknown.sort_unstable();
    // Both mistakes are named at once: a misspelled id is both an unknown decision and a
    // missing one, and saying only the second hides the typo.
    if !unknown.is_empty() || !missing.is_empty() {
        return Err(ResumeError::UnmatchedDecisions {
            unknown,
            missing,
            pending: ids,
        }
        .into());
    }
    for waiting in pending {
        let id = waiting.id();
        if let Some((Some(seen), _)) = decisions.get(&id)
            && *seen != waiting.digest()
        {
            return Err(ResumeError::NotTheCallShown { id }.into());
        }
        // The call of this run the pending call belongs to: itself, or the outer call it was
        // made inside.
        let (own_id, own_skill) = match waiting.outer() {
            Some(outer) => (outer.call_id.as_str(), outer.skill.as_str()),
            None => (&*waiting.call.id, waiting.skill.as_str()),
        };
        let Some(call) = calls.iter().find(|c| *c.id == *own_id) else {
            return Err(ResumeError::PendingNotInTranscript {
                id: own_id.to_owned(),
            }
            .into());
        };
        let Some(metadata) = registry.metadata(&call.name) else {
            return Err(ResumeError::UnknownSkill {
                id: own_id.to_owned(),
                skill: call.name.clone(),
            }
            .into());
        };
        let same = *metadata.name == *own_skill
            && (waiting.outer().is_some()
                || (call.name == waiting.call.name && call.arguments == waiting.call.arguments));
        if !same {
            return Err(ResumeError::PendingDiffers { id }.into());
        }
    }
    Ok(())
}

/// The first item that appears twice.
fn first_repeated<'a>(items: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().find(|item| !seen.insert(*item))
}

/// A typed run that paused must be continued as one.
pub(in crate::runtime) fn check_output(state: &RunState, typed: bool) -> Result<(), AgentError> {
    if state.output.is_some() && !typed {
        return Err(ResumeError::TypedRun.into());
    }
    Ok(())
}
