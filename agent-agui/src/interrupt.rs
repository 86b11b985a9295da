//! A pause as AG-UI 1.0 interrupts, and the `resume` entries that answer them as decisions.
//!
//! Each [`PendingCall`] becomes one interrupt of the `RUN_FINISHED` event's
//! `{"type": "interrupt"}` outcome:
//!
//! | interrupt field | from the pending call |
//! |---|---|
//! | `id` | its id ([`PendingCall::id`], `c1`, `p1/c1`), `#`, its digest ([`PendingCall::digest`]), `@`, the pause's id (new at every pause: [`RunState::pause_id`](agent_runtime::RunState::pause_id)) |
//! | `reason` | `tool_call` |
//! | `message` | its path (`billing › refund`) and the reason the gate gave |
//! | `toolCallId` | the call's id, as its `TOOL_CALL_*` events carried it (`c1`; `p1/c1` inside an agent the run called) |
//! | `responseSchema` | `{approved: boolean, editedArgs?: object, reason?: string}`, `approved` required |
//! | `metadata.eugene` | `path`, `skill`, `arguments`, `reason`, `digest`, `pause`, `agents` (the agents it was called in, outermost first), `destructive`, `readOnly` |
//! | `subagentRunId` | the sub-agent that raised it, when an agent the run called paused ([`crate::subagents`]) |
//!
//! A `resume` entry names an interrupt by that id, and so the call *as the person was shown it*,
//! in the pause they were shown it in: the digest in the id is checked against the call that
//! would run, so a decision cannot approve a call whose arguments or path differ from those
//! shown, and the pause against the thread's, so an answer to an earlier pause (a retry that
//! arrives after the thread paused again, even on the same call) is refused, never taken for an
//! answer to this one. The entries of one request answer one pause. `status: "resolved"` with
//! `payload.approved: true` approves (with `payload.editedArgs`, an object: runs with those
//! arguments instead), `approved: false` denies (`payload.reason` the reason the model reads);
//! `status: "cancelled"` denies. An entry whose id names no pending call, a pending call
//! without an entry, or a payload without `approved` is refused with `RUN_ERROR` and nothing
//! runs.

use serde::Deserialize;
use serde_json::{Value, json};

use agent_core::pending::{CallRef, Decision, PendingCall};

/// The most `resume` entries one request may carry.
pub const MAX_RESUME_ENTRIES: usize = 256;

/// Separates a pending call's id from its digest in an interrupt's id.
const DIGEST_MARK: char = '#';
/// Separates the digest from the pause's id in an interrupt's id.
const PAUSE_MARK: char = '@';

/// One entry of `RunAgentInput.resume`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResumeEntry {
    interrupt_id: String,
    status: String,
    #[serde(default)]
    payload: Option<Value>,
}

/// The interrupt a pending call of the pause `pause` is shown as.
pub(crate) fn interrupt(pending: &PendingCall, pause: &str) -> Value {
    let digest = pending.digest();
    let mut interrupt = json!({
        "id": format!("{}{DIGEST_MARK}{digest}{PAUSE_MARK}{pause}", pending.id()),
        "reason": "tool_call",
        "message": format!("{}: {}", pending.path(), pending.reason),
        "responseSchema": {
            "type": "object",
            "properties": {
                "approved": {"type": "boolean"},
                "editedArgs": {"type": "object", "description": "Replaces the call's arguments."},
                "reason": {"type": "string", "description": "Why it was denied, for the model."},
            },
            "required": ["approved"],
        },
        "metadata": {"eugene": {
            "path": pending.path(),
            "skill": pending.skill,
            "arguments": pending.call.arguments,
            "reason": pending.reason,
            "digest": digest,
            "pause": pause,
            "agents": pending.via.iter().filter(|s| !s.is_handoff()).map(|s| &s.skill).collect::<Vec<_>>(),
            "destructive": pending.is_destructive,
            "readOnly": pending.is_read_only,
        }},
    });
    // A call inside an agent the run called is written in the stream after the calls that ran
    // the agents, as the pending call's id is.
    interrupt["toolCallId"] = json!(pending.id());
    interrupt
}

/// What identifies `entries` as an answer, whatever their order and the order of their keys: a
/// digest of their interrupt ids, statuses and payloads, in canonical JSON, sorted by id.
pub(crate) fn fingerprint(entries: &[ResumeEntry]) -> String {
    let mut parts: Vec<Vec<u8>> = entries
        .iter()
        .map(|entry| {
            let mut part = Vec::new();
            let value = json!([entry.interrupt_id, entry.status, entry.payload]);
            agent_core::digest::canonical_json(&value, &mut part);
            part
        })
        .collect();
    parts.sort();
    let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    agent_core::digest::sha256_hex(&parts)
}

/// The pause `entries` answer and the decisions they make, each bound to the call its interrupt
/// showed; an error saying which entry cannot be read.
pub(crate) fn decisions(entries: &[ResumeEntry]) -> Result<Answer, String> {
    if entries.len() > MAX_RESUME_ENTRIES {
        return Err(format!(
            "{} resume entries, over the {MAX_RESUME_ENTRIES} a request may carry",
            entries.len()
        ));
    }
    let mut pause: Option<&str> = None;
    let mut decisions = Vec::with_capacity(entries.len());
    for entry in entries {
        let (of, decision) = decision(entry)?;
        if pause.is_some_and(|pause| pause != of) {
            return Err(
                "the resume entries answer different pauses: one request answers one".into(),
            );
        }
        pause = Some(of);
        decisions.push(decision);
    }
    Ok(Answer {
        pause: pause.unwrap_or_default().to_owned(),
        decisions,
    })
}

/// What a request's `resume` entries say.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The id of the pause they answer.
    pub(crate) pause: String,
    /// The decisions, each bound to a call as it was shown.
    pub(crate) decisions: Vec<(CallRef, Decision)>,
}

fn decision(entry: &ResumeEntry) -> Result<(&str, (CallRef, Decision)), String> {
    let not_ours = || {
        format!(
            "the interrupt `{}` is not one this server sent (no digest and pause)",
            entry.interrupt_id
        )
    };
    let (shown, pause) = entry
        .interrupt_id
        .rsplit_once(PAUSE_MARK)
        .ok_or_else(not_ours)?;
    let (id, digest) = shown.rsplit_once(DIGEST_MARK).ok_or_else(not_ours)?;
    let call = CallRef::seen(id, digest);
    let decision = match entry.status.as_str() {
        "cancelled" => Decision::Deny("the person cancelled the decision".into()),
        "resolved" => {
            let payload = entry.payload.as_ref().and_then(Value::as_object);
            let approved = payload
                .and_then(|p| p.get("approved"))
                .and_then(Value::as_bool)
                .ok_or_else(|| {
                    format!("the resume entry for `{id}` has no boolean `payload.approved`")
                })?;
            let payload = payload.expect("approved was read from it");
            match (approved, payload.get("editedArgs")) {
                (true, None | Some(Value::Null)) => Decision::Approve,
                (true, Some(args @ Value::Object(_))) => Decision::Edit(args.clone()),
                (true, Some(_)) => {
                    return Err(format!(
                        "the resume entry for `{id}`: `editedArgs` must be an object"
                    ));
                }
                (false, _) => Decision::Deny(
                    payload
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("the person denied the call")
                        .to_owned(),
                ),
            }
        }
        other => {
            return Err(format!(
                "the resume entry for `{id}` has status `{other}`: `resolved` or `cancelled`"
            ));
        }
    };
    Ok((pause, (call, decision)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, payload: Value) -> ResumeEntry {
        ResumeEntry {
            interrupt_id: id.into(),
            status: "resolved".into(),
            payload: Some(payload),
        }
    }

    #[test]
    fn an_answer_is_the_same_whatever_the_order_and_differs_by_any_decision() {
        let a = entry(
            "c1#d",
            json!({"approved": true, "editedArgs": {"x": 1, "y": 2}}),
        );
        let b = entry("c2#d", json!({"approved": false}));
        let a_again = entry(
            "c1#d",
            json!({"editedArgs": {"y": 2, "x": 1}, "approved": true}),
        );
        assert_eq!(
            fingerprint(&[a.clone(), b.clone()]),
            fingerprint(&[b.clone(), a_again])
        );
        let edited = entry(
            "c1#d",
            json!({"approved": true, "editedArgs": {"x": 1, "y": 3}}),
        );
        assert_ne!(
            fingerprint(&[a.clone(), b.clone()]),
            fingerprint(&[edited, b.clone()])
        );
        let cancelled = ResumeEntry {
            status: "cancelled".into(),
            ..b.clone()
        };
        assert_ne!(fingerprint(&[a.clone(), b]), fingerprint(&[a, cancelled]));
    }
}
