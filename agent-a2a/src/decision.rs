//! Runs that pause for approval, in A2A terms: the `TASK_STATE_INPUT_REQUIRED` status message
//! that describes the calls waiting ([`input_required_message`]), and the client's next message
//! on the task, which carries the decisions ([`read_decisions`]).
//!
//! # The status message
//!
//! Its first part is text for a person ("The agent wants to call `delete` ..."); its second a
//! data part:
//!
//! ```json
//! {"pendingCalls": [{"id": "c1", "skill": "delete", "arguments": {"path": "old.log"},
//!                    "reason": "deletes a file", "destructive": true}]}
//! ```
//!
//! # The decision message
//!
//! Sent with the task's `taskId` (and `contextId`), it holds either a data part
//!
//! ```json
//! {"decisions": {"c1": "approve", "c2": {"deny": "not that file"}, "c3": {"edit": {"path": "x"}}}}
//! ```
//!
//! with a decision for every pending call, or — when exactly one call waits — a text part that is
//! `approve` (or `yes`), or `deny` (or `no`), optionally followed by `:` and a reason. Anything
//! else is refused with `InvalidParams` and the task keeps waiting.
//!
//! Each listed call carries its `digest` ([`PendingCall::digest`]); a data part may send them
//! back, `"digests": {"c1": "<digest>"}`, and a decision sent with a digest answers that call
//! only: the run refuses it when the call waiting differs (a later call under a reused id, an
//! edited state), and nothing runs. A eugene client always sends them.

use serde_json::{Value, json};

use agent_runtime::{CallRef, Decision, PendingCall};

use crate::types::{Message, Part};

/// The agent message of an input-required status: what waits, in words and as data.
pub fn input_required_message(pending: &[PendingCall]) -> Message {
    let mut text = String::from("The agent needs a decision before it goes on:\n");
    for p in pending {
        text.push_str(&format!(
            "- call `{}` to `{}` with {}: {}\n",
            p.id(),
            p.path(),
            p.call.arguments,
            p.reason
        ));
    }
    text.push_str(
        "Answer on this task with a data part {\"decisions\": {\"<call id>\": \"approve\" | \
         {\"deny\": \"<reason>\"} | {\"edit\": {<arguments>}}}}",
    );
    if pending.len() == 1 {
        text.push_str(", or with the text `approve` or `deny: <reason>`");
    }
    text.push('.');
    let calls: Vec<Value> = pending
        .iter()
        .map(|p| {
            json!({
                "id": p.id(),
                "skill": p.skill,
                "path": p.path(),
                "arguments": p.call.arguments,
                "reason": p.reason,
                "readOnly": p.is_read_only,
                "destructive": p.is_destructive,
                "digest": p.digest(),
            })
        })
        .collect();
    Message::new(
        crate::types::Role::Agent,
        vec![
            Part::text(text),
            Part::data(json!({ "pendingCalls": calls })),
        ],
    )
}

/// The decisions `message` carries for the `pending` calls, one per call; `Err` says what is
/// wrong, for the client.
pub fn read_decisions(
    message: &Message,
    pending: &[PendingCall],
) -> Result<Vec<(CallRef, Decision)>, String> {
    // Calls inside a nested agent are named by their path of ids (`p1/c1`).
    let ids: Vec<String> = pending.iter().map(PendingCall::id).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let data = message
        .parts
        .iter()
        .filter_map(|p| p.data.as_ref())
        .find(|d| d.get("decisions").is_some());
    if let Some(data) = data {
        let decisions = from_data(&data["decisions"], &ids)?;
        let digests = match data.get("digests") {
            None => serde_json::Map::new(),
            Some(Value::Object(digests)) => digests.clone(),
            Some(_) => return Err("`digests` must be an object from call id to digest".into()),
        };
        return decisions
            .into_iter()
            .map(|(id, decision)| {
                let call = match digests.get(&id) {
                    None => CallRef::from(id),
                    Some(Value::String(digest)) => CallRef::seen(id, digest.clone()),
                    Some(_) => return Err(format!("the digest for `{id}` must be a string")),
                };
                // Refused here, while the task still waits: a decision made on another call
                // than the one waiting under its id (a stale page) is asked again, not failed.
                let waiting = pending.iter().find(|p| p.id() == call.id);
                if let (Some(seen), Some(waiting)) = (&call.seen, waiting)
                    && *seen != waiting.digest()
                {
                    return Err(format!(
                        "the decision for `{}` was made on another version of the call than \
                         the one waiting (its digest differs): read the task's status again; \
                         nothing ran",
                        call.id
                    ));
                }
                Ok((call, decision))
            })
            .collect();
    }
    let text = message.text();
    if ids.len() == 1 {
        if let Some(decision) = from_text(&text) {
            return Ok(vec![(CallRef::from(ids[0]), decision)]);
        }
        return Err(format!(
            "the task waits for a decision on the call `{}`: answer `approve`, `deny: <reason>`, \
             or a data part {{\"decisions\": {{\"{}\": \"approve\"}}}}",
            ids[0], ids[0]
        ));
    }
    Err(format!(
        "the task waits for decisions on the calls {}: send a data part {{\"decisions\": \
         {{\"<call id>\": \"approve\" | {{\"deny\": \"<reason>\"}} | {{\"edit\": {{..}}}}}}}} \
         with one for each",
        quoted(&ids)
    ))
}

fn from_data(decisions: &Value, ids: &[&str]) -> Result<Vec<(String, Decision)>, String> {
    let Value::Object(map) = decisions else {
        return Err("`decisions` must be an object from call id to decision".into());
    };
    let mut out = Vec::new();
    for (id, decision) in map {
        if !ids.contains(&id.as_str()) {
            return Err(format!(
                "`decisions` names `{id}`, which is no pending call (pending: {})",
                quoted(ids)
            ));
        }
        out.push((id.clone(), one(id, decision)?));
    }
    let missing: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !map.contains_key(*id))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "`decisions` has no decision for {}: give one for each pending call",
            quoted(&missing)
        ));
    }
    Ok(out)
}

fn one(id: &str, decision: &Value) -> Result<Decision, String> {
    match decision {
        Value::String(s) => from_text(s).ok_or_else(|| {
            format!("the decision for `{id}` must be \"approve\", \"deny\", {{\"deny\": ..}} or {{\"edit\": ..}}")
        }),
        Value::Object(map) if map.len() == 1 => {
            let (key, value) = map.iter().next().expect("one entry");
            match (key.as_str(), value) {
                ("deny", Value::String(reason)) => Ok(Decision::Deny(reason.clone())),
                ("deny", Value::Null) => Ok(Decision::Deny("denied by the client".into())),
                ("edit", args @ Value::Object(_)) => Ok(Decision::Edit(args.clone())),
                ("approve", _) => Ok(Decision::Approve),
                _ => Err(format!(
                    "the decision for `{id}` must be \"approve\", {{\"deny\": \"<reason>\"}} or \
                     {{\"edit\": {{<arguments>}}}}"
                )),
            }
        }
        _ => Err(format!(
            "the decision for `{id}` must be \"approve\", {{\"deny\": \"<reason>\"}} or \
             {{\"edit\": {{<arguments>}}}}"
        )),
    }
}

fn from_text(text: &str) -> Option<Decision> {
    let text = text.trim();
    let (word, reason) = match text.split_once(':') {
        Some((word, reason)) => (word.trim(), Some(reason.trim())),
        None => (text, None),
    };
    match word.to_ascii_lowercase().as_str() {
        "approve" | "approved" | "yes" if reason.is_none_or(str::is_empty) => {
            Some(Decision::Approve)
        }
        "deny" | "denied" | "no" => Some(Decision::Deny(
            reason
                .filter(|r| !r.is_empty())
                .unwrap_or("denied by the client")
                .to_owned(),
        )),
        _ => None,
    }
}

fn quoted(ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::ToolCall;

    fn pending(ids: &[&str]) -> Vec<PendingCall> {
        ids.iter()
            .map(|id| PendingCall {
                call: ToolCall::new(*id, "delete", json!({"path": "a"})),
                skill: "delete".into(),
                is_read_only: false,
                is_destructive: true,
                reason: "deletes".into(),
                via: Vec::new(),
            })
            .collect()
    }

    fn data(value: Value) -> Message {
        Message::new(crate::types::Role::User, vec![Part::data(value)])
    }

    #[test]
    fn decisions_from_text_and_data() {
        let one = pending(&["c1"]);
        assert_eq!(
            read_decisions(&Message::user_text("Approve"), &one).unwrap(),
            vec![(CallRef::from("c1"), Decision::Approve)]
        );
        assert_eq!(
            read_decisions(&Message::user_text("deny: not now"), &one).unwrap(),
            vec![(CallRef::from("c1"), Decision::Deny("not now".into()))]
        );
        let digest = one[0].digest();
        let seen = read_decisions(
            &data(json!({"decisions": {"c1": "approve"}, "digests": {"c1": digest}})),
            &one,
        )
        .unwrap();
        assert_eq!(seen[0].0, CallRef::seen("c1", one[0].digest()));
        assert!(
            read_decisions(
                &data(json!({"decisions": {"c1": "approve"}, "digests": {"c1": 7}})),
                &one
            )
            .is_err()
        );
        let stale = read_decisions(
            &data(json!({"decisions": {"c1": "approve"}, "digests": {"c1": "0".repeat(64)}})),
            &one,
        );
        assert!(stale.unwrap_err().contains("digest differs"));
        assert!(read_decisions(&Message::user_text("maybe"), &one).is_err());
        let two = pending(&["c1", "c2"]);
        assert!(read_decisions(&Message::user_text("approve"), &two).is_err());
        let both = read_decisions(
            &data(json!({"decisions": {"c1": "approve", "c2": {"deny": "no"}}})),
            &two,
        )
        .unwrap();
        assert_eq!(both.len(), 2);
        let missing = read_decisions(&data(json!({"decisions": {"c1": "approve"}})), &two);
        assert!(missing.unwrap_err().contains("`c2`"));
        let unknown = read_decisions(&data(json!({"decisions": {"zz": "approve"}})), &one);
        assert!(unknown.unwrap_err().contains("`zz`"));
        let edit = read_decisions(
            &data(json!({"decisions": {"c1": {"edit": {"path": "b"}}}})),
            &one,
        );
        assert_eq!(edit.unwrap()[0].1, Decision::Edit(json!({"path": "b"})));
    }

    #[test]
    fn the_status_message_lists_the_ids() {
        let message = input_required_message(&pending(&["c1"]));
        assert!(message.text().contains("`c1`"));
        let data = message.parts[1].data.as_ref().unwrap();
        assert_eq!(data["pendingCalls"][0]["id"], "c1");
        assert_eq!(
            data["pendingCalls"][0]["digest"],
            pending(&["c1"])[0].digest()
        );
    }
}
