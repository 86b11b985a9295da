//! The pause: a turn whose calls include one a hook answered with
//! [`HookVerdict::Ask`](agent_core::HookVerdict::Ask) stops the run, which hands back its state
//! with the calls waiting ([`hold`]); the turn's other calls have run, and their results are kept,
//! so that on resumption every result enters the transcript in call order. Decisions turn the
//! paused state back into a turn to finish ([`decide`]), and the loop keeps stepping.
//!
//! Nothing here runs anything: these are changes of the run's state, checked first.

use std::collections::HashMap;

use serde_json::Value;

use super::outcome::AgentError;
use super::record::ToolRecord;
use super::state::{Next, RunState};
use agent_core::call::{ToolCall, ToolResult};
use agent_core::error::SkillError;
use agent_core::pending::{Decision, PendingCall, Resumption};
use agent_core::registry::Registry;
use agent_llm::message::Message;

/// Whether a call of the turn waits for a decision: a hook asked, or the call suspended on calls
/// of its own.
pub(super) fn is_pending(result: &ToolResult) -> bool {
    matches!(
        result.output,
        Err(SkillError::ApprovalRequired(_) | SkillError::Suspended(_))
    )
}

/// Whether a call of the turn suspended on calls of its own (a nested agent that paused).
pub(super) fn is_suspended(result: &ToolResult) -> bool {
    matches!(result.output, Err(SkillError::Suspended(_)))
}

/// Answers the calls that wait for a decision as not run (the run ends without one); with
/// `approvals_only`, only those a hook asked about (a suspended call still pauses the run).
pub(super) fn not_run(results: &mut [ToolResult], approvals_only: bool) {
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
/// its state kept for when it runs again.
pub(super) fn hold(
    registry: &Registry,
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
/// denied ones are answered with the reason. Checked first, against the state and `registry`:
/// every pending call has exactly one decision, every decision names a pending call whose skill
/// the registry has; otherwise [`AgentError::Resume`] and the state is unchanged.
pub(super) fn decide(
    state: &mut RunState,
    decisions: Vec<(String, Decision)>,
    registry: &Registry,
) -> Result<(), AgentError> {
    let mut map = HashMap::new();
    for (id, decision) in decisions {
        if map.insert(id.clone(), decision).is_some() {
            return Err(AgentError::Resume(format!(
                "two decisions for the call `{id}`: give one"
            )));
        }
    }
    check_decisions(state, &map, registry)?;
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
        let decision = map
            .remove(&id)
            .expect("checked: every pending call has a decision");
        if let Some(outer) = waiting.via.first() {
            // A call inside a suspended one: its decision goes to that call, which runs again.
            let inner_id = id[outer.call_id.len() + 1..].to_owned();
            match resume
                .iter_mut()
                .find(|(call_id, _)| *call_id == outer.call_id)
            {
                Some((_, resumption)) => resumption.decisions.push((inner_id, decision)),
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

/// Checks the decisions against the pending calls before anything runs.
fn check_decisions(
    state: &RunState,
    decisions: &HashMap<String, Decision>,
    registry: &Registry,
) -> Result<(), AgentError> {
    let ids: Vec<String> = state.pending().iter().map(PendingCall::id).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let missing: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !decisions.contains_key(*id))
        .collect();
    let mut unknown: Vec<&str> = decisions
        .keys()
        .map(String::as_str)
        .filter(|id| !ids.contains(id))
        .collect();
    unknown.sort_unstable();
    // Both mistakes are named at once: a misspelled id is both an unknown decision and a
    // missing one, and saying only the second hides the typo.
    let mut problems = Vec::new();
    if !unknown.is_empty() {
        problems.push(format!(
            "the decision{} for {} name{} no pending call",
            if unknown.len() == 1 { "" } else { "s" },
            quoted(&unknown),
            if unknown.len() == 1 { "s" } else { "" },
        ));
    }
    if !missing.is_empty() {
        problems.push(format!(
            "no decision for the pending call{} {}",
            if missing.len() == 1 { "" } else { "s" },
            quoted(&missing),
        ));
    }
    if !problems.is_empty() {
        return Err(AgentError::Resume(format!(
            "{}: approve, deny or edit each of {}",
            problems.join(", and "),
            quoted(&ids)
        )));
    }
    // The call of this run each pending call belongs to: itself, or the outer call it was made
    // inside.
    let own = |p: &PendingCall| match p.via.first() {
        Some(outer) => (outer.call_id.clone(), outer.skill.clone()),
        None => (p.call.id.to_string(), p.call.name.clone()),
    };
    if let Some((id, name)) = state
        .pending()
        .iter()
        .map(own)
        .find(|(_, name)| !registry.contains(name))
    {
        return Err(AgentError::Resume(format!(
            "the pending call `{id}` is to `{name}`, which this runtime's registry does not have"
        )));
    }
    let own_ids: Vec<String> = state.pending().iter().map(|p| own(p).0).collect();
    match state.transcript.last() {
        Some(last)
            if last
                .tool_calls
                .iter()
                .any(|c| own_ids.iter().any(|id| *id == *c.id)) =>
        {
            Ok(())
        }
        _ => Err(AgentError::Resume(
            "the state's transcript does not end with the calls it says are pending".into(),
        )),
    }
}

fn quoted(ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A typed run that paused must be continued as one.
pub(super) fn check_output(state: &RunState, typed: bool) -> Result<(), AgentError> {
    if state.output.is_some() && !typed {
        return Err(AgentError::Resume(
            "the paused run is typed: continue it with `.typed::<T>()` or `.output(..)`".into(),
        ));
    }
    Ok(())
}
