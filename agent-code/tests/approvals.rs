//! An approval inside a program answers the one call it was given for, once: a later program
//! under a reused call id asks again, and a program whose kept record was edited while it waited
//! runs nothing.

mod common;

use std::sync::Arc;
use std::time::Duration;

use agent_core::ToolCall;
use agent_llm::MockReply;
use agent_runtime::{Decision, FinishReason, RunOutcome, RunState};
use serde_json::json;

use common::{Ran, result, resumed, runtime, runtime_with};

/// A program that deletes the branch `name`.
fn deleting(name: &str) -> String {
    format!("return await delete_branch({{ name: {name:?} }});")
}

/// The model's call `p1` to `run_code` with `code`.
fn program(code: &str) -> MockReply {
    MockReply::tool_calls([ToolCall::new("p1", "run_code", json!({ "code": code }))])
}

/// The state of a paused run, kept as JSON and read back, as a store would.
fn paused_state(outcome: &RunOutcome) -> RunState {
    assert!(
        matches!(outcome.finish, FinishReason::AwaitingApproval { .. }),
        "{:?}",
        outcome.finish
    );
    let state = outcome.state.as_deref().expect("a paused run has a state");
    serde_json::from_str(&serde_json::to_string(state).unwrap()).unwrap()
}

// Attacks an approval of `p1/c1` outliving its program: the model's next `run_code` under the
// same id makes the same inner call with other arguments, and must ask again.
#[tokio::test]
async fn an_approved_call_in_a_program_runs_once_and_a_later_program_under_the_same_id_asks_again()
{
    let ran = Arc::new(Ran::default());
    let (runtime, _) = runtime_with(
        &deleting("old-feature"),
        &ran,
        Duration::from_secs(5),
        vec![program(&deleting("main")), MockReply::text("done")],
    );
    let paused = runtime.run("Tidy.").await.unwrap();
    let state = paused_state(&paused);
    assert_eq!(state.pending()[0].id(), "p1/c1");
    assert_eq!(
        state.pending()[0].call.arguments,
        json!({"name": "old-feature"})
    );
    let again = runtime
        .continue_paused(state, [("p1/c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        ran.count("delete old-feature"),
        1,
        "the approved call ran once"
    );
    let FinishReason::AwaitingApproval { pending } = &again.finish else {
        panic!(
            "the second program's call ran without asking: {:?}",
            again.finish
        )
    };
    assert_eq!(pending[0].id(), "p1/c1");
    assert_eq!(pending[0].call.arguments, json!({"name": "main"}));
    assert_eq!(ran.count("delete main"), 0, "main was never approved");
    // Denied, it never runs; the first ran once in all.
    let done = runtime
        .continue_paused(
            paused_state(&again),
            [("p1/c1", Decision::Deny("not main".into()))],
        )
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("done"));
    assert_eq!(ran.count("delete main"), 0);
    assert_eq!(ran.count("delete old-feature"), 1);
}

// Attacks an approval (or the first program's kept record) answering a repeat: the very same
// program under the same id, after the first ran, asks again rather than running or replaying.
#[tokio::test]
async fn the_same_program_again_under_the_same_id_asks_again_after_its_approval_was_used() {
    let ran = Arc::new(Ran::default());
    let code = deleting("stale");
    let (runtime, _) = runtime_with(
        &code,
        &ran,
        Duration::from_secs(5),
        vec![program(&code), MockReply::text("done")],
    );
    let paused = runtime.run("Tidy.").await.unwrap();
    let again = runtime
        .continue_paused(paused_state(&paused), [("p1/c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(ran.count("delete stale"), 1);
    let state = paused_state(&again);
    assert_eq!(state.pending()[0].id(), "p1/c1");
    assert_eq!(state.pending()[0].call.arguments, json!({"name": "stale"}));
    assert_eq!(ran.count("delete stale"), 1, "the repeat has not run yet");
    let done = runtime
        .continue_paused(state, [("p1/c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        done.finish,
        FinishReason::NoMoreToolCalls,
        "{:?}",
        done.finish
    );
    assert_eq!(
        ran.count("delete stale"),
        2,
        "each approval ran its one call"
    );
}

// Attacks a kept program record edited while it waits: the waiting call's arguments changed in
// the suspended state (not in what the person was shown) must run neither version.
#[tokio::test]
async fn a_programs_kept_record_edited_while_it_waits_runs_nothing() {
    let ran = Arc::new(Ran::default());
    let (first, _) = runtime(&deleting("feature-x"), &ran);
    let paused = first.run("Tidy.").await.unwrap();
    let state = paused_state(&paused);
    assert_eq!(
        state.pending()[0].call.arguments,
        json!({"name": "feature-x"})
    );
    let mut value = serde_json::to_value(&state).unwrap();
    // The program's record of the call that waits, inside the run's state.
    let args = &mut value["next"]["suspended"][0][1]["waiting"]["0"]["args"];
    assert_eq!(*args, json!({"name": "feature-x"}));
    *args = json!({"name": "main"});
    let edited: RunState = serde_json::from_value(value).unwrap();
    // What the person is shown is unchanged.
    assert_eq!(
        edited.pending()[0].call.arguments,
        json!({"name": "feature-x"})
    );
    let (second, _) = resumed(&ran, "tidied");
    let done = second
        .continue_paused(edited, [("p1/c1", Decision::Approve)])
        .await
        .unwrap();
    // The run goes on, and `run_code` is answered with an error that says nothing ran.
    let (text, is_error) = result(&done);
    assert!(is_error, "{text}");
    assert!(
        text.contains("not the one the person decided on") && text.contains("nothing ran"),
        "{text}"
    );
    assert_eq!(ran.count("delete main"), 0);
    assert_eq!(ran.count("delete feature-x"), 0);
}

// Attacks a kept program edited consistently while it waits: its code and its record of the
// waiting call both say `main`, so the program would make that call again as recorded; only the
// digest of what the person was shown (`feature-y`) stops it, and neither runs.
#[tokio::test]
async fn a_program_and_its_kept_record_edited_together_while_it_waits_run_nothing() {
    let ran = Arc::new(Ran::default());
    let (first, _) = runtime(&deleting("feature-y"), &ran);
    let paused = first.run("Tidy.").await.unwrap();
    let mut value = serde_json::to_value(paused_state(&paused)).unwrap();
    let transcript = value["transcript"].as_array_mut().unwrap();
    let call = &mut transcript.last_mut().unwrap()["tool_calls"][0];
    assert_eq!(call["id"], "p1");
    call["arguments"]["code"] = json!(deleting("main"));
    value["next"]["suspended"][0][1]["waiting"]["0"]["args"] = json!({"name": "main"});
    let edited: RunState = serde_json::from_value(value).unwrap();
    assert_eq!(
        edited.pending()[0].call.arguments,
        json!({"name": "feature-y"})
    );
    let (second, _) = resumed(&ran, "tidied");
    let done = second
        .continue_paused(edited, [("p1/c1", Decision::Approve)])
        .await
        .unwrap();
    // `run_code` is answered with an error that says nothing ran.
    let (text, is_error) = result(&done);
    assert!(is_error, "{text}");
    assert!(text.contains("not the one the person decided on"), "{text}");
    assert_eq!(ran.count("delete main"), 0);
    assert_eq!(ran.count("delete feature-y"), 0);
}

/// The idempotency keys `keyed` saw, in order.
static KEYS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Note the call's idempotency key; ask a person first (itself).
#[agent_core::skill(register = false)]
async fn keyed(ctx: &agent_core::SkillContext) -> Result<String, agent_core::SkillError> {
    let key = ctx.idempotency_key().unwrap_or("none").to_owned();
    KEYS.lock().unwrap().push(key.clone());
    if !ctx.is_approved() {
        return Err(agent_core::SkillError::ApprovalRequired(
            "it notes a key".into(),
        ));
    }
    Ok(key)
}

// Attacks a key that changes when a program runs again after its pause: the approved call, made
// again by the program replayed, must send the key it asked with; another call, another key.
#[tokio::test]
async fn a_programs_call_keeps_its_key_when_the_program_runs_again_after_its_pause() {
    let mut registry = agent_core::Registry::new();
    registry.add(KeyedSkill);
    let run_code = agent_code::RunCode::over(&registry);
    registry.add(run_code);
    let registry = Arc::new(registry);
    let code = "return await keyed({});";
    let runtime = |replies| {
        agent_runtime::AgentRuntime::from_shared(
            Arc::new(agent_llm::MockProvider::new(replies)),
            registry.clone(),
        )
        .context(agent_core::SkillContext::new(".").with_extension(Arc::new(Ran::default())))
    };
    let paused = runtime(vec![program(code)]).run("Note.").await.unwrap();
    let state = paused_state(&paused);
    runtime(vec![MockReply::text("done")])
        .continue_paused(state, [("p1/c1", Decision::Approve)])
        .await
        .unwrap();
    let keys = KEYS.lock().unwrap().clone();
    assert_eq!(keys.len(), 2, "asked, then ran: {keys:?}");
    assert!(keys[0].starts_with("ik-"), "{keys:?}");
    assert_eq!(keys[0], keys[1], "the same call, the same key");
}
