//! Runs that pause for a decision and continue: what pauses, what the state carries through
//! serialization, what each decision does, and the errors a wrong resumption gets. The same
//! across two processes is in the facade's `tests/approval.rs`; sessions in `sessions.rs`.

use std::sync::{Arc, Mutex};

use agent_core::{
    HookVerdict, Permission, PermissionGate, Registry, SkillContext, SkillError, ToolCall, skill,
};
use agent_llm::{MockProvider, MockReply, Role};
use agent_runtime::{
    AgentError, AgentEvent, AgentRuntime, Budget, Decision, FinishReason, ResumeError, RunState,
};
use serde_json::json;

/// Every directory the destructive skill really wiped. Tests run in parallel, so each uses
/// directories of its own and counts those.
static WIPED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn wipes(dir: &str) -> usize {
    WIPED.lock().unwrap().iter().filter(|d| *d == dir).count()
}

/// Wipe a directory.
///
/// # Arguments
/// * `dir` - The directory to wipe.
#[skill(destructive, register = false)]
async fn wipe(dir: String) -> Result<String, SkillError> {
    WIPED.lock().unwrap().push(dir.clone());
    Ok(format!("wiped {dir}"))
}

/// Look at a directory.
///
/// # Arguments
/// * `dir` - The directory to look at.
#[skill(read_only, register = false)]
async fn look(dir: String) -> Result<String, SkillError> {
    Ok(format!("{dir} has 3 files"))
}

/// A rarely needed skill, loaded by `tool_search`.
///
/// # Arguments
/// * `dir` - The directory to archive.
#[skill(read_only, defer, search_hint = "archive tarball", register = false)]
async fn archive(dir: String) -> Result<String, SkillError> {
    Ok(format!("archived {dir}"))
}

/// Asks for approval itself, and goes ahead once approved.
#[skill(register = false)]
async fn publish(ctx: &SkillContext) -> Result<String, SkillError> {
    if ctx.is_approved() {
        Ok("published".into())
    } else {
        Err(SkillError::ApprovalRequired("publishing is public".into()))
    }
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .add(WipeSkill)
        .add(LookSkill)
        .add(ArchiveSkill)
        .add(PublishSkill);
    registry.with_hook(PermissionGate::with(|name, metadata| {
        if metadata.is_destructive {
            Permission::Ask(format!("`{name}` deletes files"))
        } else {
            Permission::Allow
        }
    }));
    registry
}

fn call(id: &str, name: &str, dir: &str) -> ToolCall {
    ToolCall::new(id, name, json!({"dir": dir}))
}

/// Pauses on `wipe` in a turn with a read-only call beside it, and round-trips the state
/// through JSON as a caller that keeps it would.
async fn paused(runtime: &AgentRuntime) -> (agent_runtime::RunOutcome, RunState) {
    let outcome = runtime.run("Clean up /tmp/x.").await.unwrap();
    let state = outcome.state.clone().expect("a paused run has a state");
    let json = serde_json::to_string(&state).unwrap();
    (outcome, serde_json::from_str(&json).unwrap())
}

#[tokio::test]
async fn a_pause_lists_the_waiting_call_and_keeps_the_turns_other_results() {
    let mock = MockProvider::new([
        MockReply::tool_calls([call("c1", "look", "/pause"), call("c2", "wipe", "/pause")]),
        MockReply::text("Done."),
    ]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let runtime = AgentRuntime::new(mock.clone(), registry()).event_sink(tx);
    let (outcome, state) = paused(&runtime).await;
    let FinishReason::AwaitingApproval { pending } = &outcome.finish else {
        panic!("{:?}", outcome.finish)
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(&*pending[0].call.id, "c2");
    assert_eq!(pending[0].skill, "wipe");
    assert!(pending[0].is_destructive && !pending[0].is_read_only);
    assert_eq!(pending[0].reason, "`wipe` deletes files");
    assert_eq!(pending[0].call.arguments, json!({"dir": "/pause"}));
    // Nothing is answered in the transcript yet: results enter it in call order on resumption.
    assert_eq!(state.transcript.last().unwrap().role, Role::Assistant);
    assert_eq!(state.steps, 1);
    // The pause is an event, and TurnFinished is still the last one.
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult { result, .. } => Some(if &*result.call_id == "c1" {
                "result c1"
            } else {
                "other result"
            }),
            AgentEvent::AwaitingApproval { .. } => Some("awaiting"),
            AgentEvent::TurnFinished {
                finish: Some(FinishReason::AwaitingApproval { .. }),
                ..
            } => Some("finished"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["result c1", "awaiting", "finished"]);

    assert_eq!(wipes("/pause"), 0);
    let done = runtime
        .continue_paused(state, [("c2", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(wipes("/pause"), 1, "ran exactly once");
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    let results: Vec<(String, String)> = done
        .transcript
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            (
                m.tool_call_id.clone().unwrap().to_string(),
                m.content.clone(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("c1".into(), "/pause has 3 files".into()),
            ("c2".into(), "wiped /pause".into())
        ]
    );
    // The model saw both results, in order, on its next call.
    let sent = &mock.requests()[1].messages;
    assert_eq!(sent.len(), 4);
}

#[tokio::test]
async fn a_denial_is_read_by_the_model_and_counts_toward_the_denial_limit() {
    let mock = MockProvider::new([
        MockReply::tool_calls([call("c1", "wipe", "/deny")]),
        MockReply::text("never asked"),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), registry()).permission_denial_limit(1);
    let (_, state) = paused(&runtime).await;
    let done = runtime
        .continue_paused(state, [("c1", Decision::Deny("keep /a".into()))])
        .await
        .unwrap();
    assert_eq!(wipes("/deny"), 0);
    assert_eq!(
        done.finish,
        FinishReason::PermissionDenialLimit { denials: 1 }
    );
    let last = done.transcript.last().unwrap();
    assert_eq!(last.content, "denied: keep /a");
    assert!(last.is_error);
}

#[tokio::test]
async fn an_edit_runs_with_new_arguments_validated_like_a_hooks_change() {
    let mock = MockProvider::new([
        MockReply::tool_calls([call("c1", "wipe", "/edit")]),
        MockReply::text("ok"),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), registry());
    let (_, state) = paused(&runtime).await;
    let done = runtime
        .continue_paused(
            state.clone(),
            [("c1", Decision::Edit(json!({"dir": "/edit/only"})))],
        )
        .await
        .unwrap();
    let result = done
        .transcript
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert_eq!(result.content, "wiped /edit/only");

    // Invalid new arguments are the call's error result, as with a hook's `Modify`.
    let mock = MockProvider::new([MockReply::text("ok")]);
    let runtime = AgentRuntime::new(mock, registry());
    let done = runtime
        .continue_paused(state, [("c1", Decision::Edit(json!({"folder": 1})))])
        .await
        .unwrap();
    assert_eq!(wipes("/edit"), 0);
    assert_eq!(wipes("/edit/only"), 1);
    let result = done
        .transcript
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert!(
        result.is_error && result.content.contains("invalid arguments"),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn wrong_decisions_are_refused_before_anything_runs() {
    let mock = MockProvider::new([MockReply::tool_calls([call("c1", "wipe", "/wrong")])]);
    let runtime = AgentRuntime::new(mock, registry());
    let (_, state) = paused(&runtime).await;
    let none: [(&str, Decision); 0] = [];
    let error = runtime
        .continue_paused(state.clone(), none)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            AgentError::Resume(ResumeError::UnmatchedDecisions { unknown, missing, .. })
                if unknown.is_empty() && *missing == ["c1"]
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("no decision for the pending call `c1`"),
        "{error}"
    );
    let error = runtime
        .continue_paused(
            state.clone(),
            [("c1", Decision::Approve), ("c9", Decision::Approve)],
        )
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("`c9` names no pending call"),
        "{error}"
    );
    let error = runtime
        .continue_paused(
            state.clone(),
            [("c1", Decision::Approve), ("c1", Decision::Approve)],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, AgentError::Resume(ResumeError::TwoDecisions { id }) if id == "c1"),
        "{error:?}"
    );
    assert!(error.to_string().contains("two decisions"), "{error}");
    // A misspelled id: both the unknown decision and the call left without one are named.
    let error = runtime
        .continue_paused(state.clone(), [("nope", Decision::Approve)])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("the decision for `nope` names no pending call, and no decision for the pending call `c1`"),
        "{error}"
    );
    // A runtime whose registry lacks the skill cannot run it.
    let empty = AgentRuntime::new(MockProvider::new([]), Registry::new());
    let error = empty
        .continue_paused(state, [("c1", Decision::Approve)])
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            AgentError::Resume(ResumeError::UnknownSkill { id, skill }) if id == "c1" && skill == "wipe"
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("does not have"), "{error}");
    assert_eq!(wipes("/wrong"), 0);
}

#[tokio::test]
async fn budgets_continue_across_the_pause() {
    let mock = MockProvider::new([
        MockReply::tool_calls([call("c1", "look", "/a")]),
        MockReply::tool_calls([call("c2", "wipe", "/a")]),
        MockReply::tool_calls([call("c3", "look", "/b")]),
        MockReply::text("never asked: the step budget is 3"),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), registry()).max_steps(3);
    let (_, state) = paused(&runtime).await;
    assert_eq!(state.steps, 2);
    assert_eq!(state.usage.total(), 30);
    let done = runtime
        .continue_paused(state, [("c2", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        done.finish,
        FinishReason::BudgetExceeded(Budget::Steps { limit: 3 })
    );
    assert_eq!(done.steps, 3);
    assert_eq!(done.usage.total(), 45);
    assert_eq!(mock.remaining(), 1);
}

#[tokio::test]
async fn skills_loaded_by_tool_search_before_the_pause_are_offered_after_it() {
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new(
            "s1",
            "tool_search",
            json!({"query": "archive"}),
        )]),
        MockReply::tool_calls([call("c1", "wipe", "/a")]),
        MockReply::text("ok"),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), registry());
    let (_, state) = paused(&runtime).await;
    assert_eq!(state.loaded_skills, ["archive"]);
    runtime
        .continue_paused(state, [("c1", Decision::Approve)])
        .await
        .unwrap();
    let after = &mock.requests()[2];
    assert!(
        after.tool_names().contains(&"archive"),
        "{:?}",
        after.tool_names()
    );
}

#[tokio::test]
async fn a_skill_may_ask_itself_and_sees_the_approval_when_it_runs_again() {
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("p1", "publish", json!({}))]),
        MockReply::text("ok"),
    ]);
    let runtime = AgentRuntime::new(mock, registry());
    let (outcome, state) = paused(&runtime).await;
    let FinishReason::AwaitingApproval { pending } = outcome.finish else {
        panic!()
    };
    assert_eq!(pending[0].reason, "publishing is public");
    let done = runtime
        .continue_paused(state, [("p1", Decision::Approve)])
        .await
        .unwrap();
    let result = done
        .transcript
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert_eq!(result.content, "published");
}

#[tokio::test]
async fn an_approved_call_still_meets_hooks_that_deny() {
    struct NoRoot;
    #[agent_core::async_trait]
    impl agent_core::SkillHook for NoRoot {
        async fn before(
            &self,
            _: &str,
            _: &agent_core::SkillMetadata,
            args: &serde_json::Value,
        ) -> Result<HookVerdict, SkillError> {
            Ok(if args["dir"] == "/" {
                HookVerdict::Deny("never the root".into())
            } else {
                HookVerdict::Proceed
            })
        }
    }
    let mut registry = registry();
    registry.with_hook(NoRoot);
    let mock = MockProvider::new([
        MockReply::tool_calls([call("c1", "wipe", "/hooked")]),
        MockReply::text("ok"),
    ]);
    let runtime = AgentRuntime::new(mock, registry);
    let (_, state) = paused(&runtime).await;
    let done = runtime
        .continue_paused(state, [("c1", Decision::Edit(json!({"dir": "/"})))])
        .await
        .unwrap();
    assert_eq!(wipes("/"), 0);
    let result = done
        .transcript
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert_eq!(result.content, "denied: never the root");
}

#[test]
fn a_state_of_another_version_or_a_forged_shape_is_an_error_not_a_misread() {
    let mut value = json!({"version": agent_runtime::RUN_STATE_VERSION + 1, "transcript": []});
    let error = serde_json::from_value::<RunState>(value.clone()).unwrap_err();
    let other = format!("format version {}", agent_runtime::RUN_STATE_VERSION + 1);
    assert!(error.to_string().contains(&other), "{error}");
    // A state written by the first version (a snapshot taken at a pause) is refused by name.
    value["version"] = json!(1);
    let error = serde_json::from_value::<RunState>(value.clone()).unwrap_err();
    assert!(error.to_string().contains("format version 1"), "{error}");
    value["version"] = json!("1");
    assert!(serde_json::from_value::<RunState>(value).is_err());
    assert!(serde_json::from_str::<RunState>("{}").is_err());
}

#[tokio::test]
async fn a_paused_state_written_in_format_2_still_continues() {
    let mock = MockProvider::new([
        MockReply::tool_calls([call("c1", "wipe", "/v2")]),
        MockReply::text("wiped"),
    ]);
    let runtime = AgentRuntime::new(mock, registry());
    let (_, state) = paused(&runtime).await;
    // What a build of format 2 wrote: the same fields, without those formats 3 to 5 added (a
    // run without media has none of format 5's).
    let mut value = serde_json::to_value(&state).unwrap();
    assert_eq!(value["version"], json!(5));
    value["version"] = json!(2);
    let object = value.as_object_mut().unwrap();
    object.remove("run_id");
    object.remove("pause_id");
    let old: RunState = serde_json::from_value(value).unwrap();
    let done = runtime
        .continue_paused(old, [("c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("wiped"));
    assert_eq!(wipes("/v2"), 1);
}

#[tokio::test]
async fn outside_a_run_an_ask_is_an_error_result_like_any_other() {
    let registry = Arc::new(registry());
    let result = registry
        .run_one(&call("c1", "wipe", "/a"), &SkillContext::new("."))
        .await;
    assert_eq!(
        result.content(),
        "waiting for approval: `wipe` deletes files"
    );
    assert!(result.is_error());
}

/// No gate, no policy: a destructive skill's call pauses the run by default, and runs once when
/// approved (the state through JSON in between, as a second process would have it).
#[tokio::test]
async fn a_destructive_call_pauses_by_default_and_runs_once_approved() {
    let mut registry = Registry::new();
    registry.add(WipeSkill).add(LookSkill);
    let model = MockProvider::new([
        MockReply::tool_calls([
            call("l1", "look", "/tmp/default"),
            call("w1", "wipe", "/tmp/default"),
        ]),
        MockReply::text("Cleaned."),
    ]);
    let runtime = AgentRuntime::new(model, registry);
    let outcome = runtime.run("Clean up /tmp/default.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &outcome.finish else {
        panic!("expected a pause, got {:?}", outcome.finish);
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(&*pending[0].call.id, "w1");
    assert!(pending[0].is_destructive);
    assert!(
        pending[0].reason.contains("`wipe` is destructive"),
        "{}",
        pending[0].reason
    );
    assert_eq!(
        wipes("/tmp/default"),
        0,
        "nothing destructive ran before the decision"
    );

    let json = serde_json::to_string(outcome.state.as_deref().unwrap()).unwrap();
    let state: RunState = serde_json::from_str(&json).unwrap();
    let done = runtime
        .continue_paused(state, [("w1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(
        wipes("/tmp/default"),
        1,
        "the approved call ran exactly once"
    );
}
