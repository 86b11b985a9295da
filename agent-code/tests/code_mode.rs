//! Code mode in the agent loop: a program that calls skills (typed values and text), concurrent
//! calls, the description, and a program that pauses for a person and comes back exactly once.

mod common;

use std::sync::Arc;
use std::time::Duration;

use agent_runtime::{Decision, FinishReason, RunState};
use serde_json::{Value, json};

use common::{Ran, registry, result, resumed, run, runtime};

#[tokio::test]
async fn a_program_calls_skills_and_only_its_value_and_print_come_back() {
    let ran = Arc::new(Ran::default());
    let (runtime, provider) = runtime(
        r#"
        let total = 0;
        for (const [a, b] of [[1, 2], [3, 4], [5, 6]]) {
          const { sum } = await add({ a, b });
          total += sum;
        }
        const note = await read_note({ name: "x" });
        console.log("read", note, { total });
        return { total, note };
        "#,
        &ran,
    );
    let outcome = runtime.run("Add them up.").await.unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let (text, is_error) = result(&outcome);
    assert!(!is_error, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        answer,
        json!({"value": {"total": 21, "note": "note x"}, "printed": "read note x {\"total\":21}\n"})
    );
    assert_eq!(ran.count("add"), 3);
    assert_eq!(ran.count("read_note"), 1);
    // One model turn for four calls: the model read the answer, not the calls.
    assert_eq!(provider.requests().len(), 2);
}

#[tokio::test]
async fn the_description_declares_every_skill_the_same_way_every_time() {
    let first = registry(Duration::from_secs(5));
    let second = registry(Duration::from_secs(5));
    let describe = |r: &agent_core::Registry| {
        r.definitions()
            .into_iter()
            .find(|d| d.name == "run_code")
            .unwrap()
            .description
    };
    let text = describe(&first);
    assert_eq!(text, describe(&second), "byte-stable");
    for line in [
        "/** Add two numbers. */\nasync function add(args: { a: number; b: number }): Promise<{ sum: number }>;",
        "async function delete_branch(args: { name: string }): Promise<string>;",
        "async function read_note(args: { name: string }): Promise<string>;",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    assert!(!text.contains("function run_code"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_awaited_together_run_at_the_same_time_and_writes_one_at_a_time() {
    let (text, is_error) = run(r#"
        const met = await Promise.all([meet({ who: "a" }), meet({ who: "b" })]);
        const wrote = await Promise.all([1, 2, 3].map((n) => write_count({ n })));
        return { met, wrote };
    "#)
    .await;
    assert!(!is_error, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        answer["value"],
        json!({"met": ["a met", "b met"], "wrote": ["wrote 1", "wrote 2", "wrote 3"]})
    );
}

const GATED: &str = r#"
    const note = await read_note({ name: "old" });
    let outcome;
    try {
      outcome = await delete_branch({ name: note });
    } catch (error) {
      outcome = "refused: " + error.message;
    }
    const after = await read_note({ name: "after" });
    return { outcome, after };
"#;

#[tokio::test]
async fn a_call_inside_code_pauses_the_run_and_the_program_comes_back_exactly_once() {
    let ran = Arc::new(Ran::default());
    let (first, _) = runtime(GATED, &ran);
    let paused = first.run("Tidy.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("{:?}", paused.finish)
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id(), "p1/c2");
    assert_eq!(pending[0].path(), "run_code › delete_branch");
    assert_eq!(pending[0].call.arguments, json!({"name": "note old"}));
    assert!(pending[0].is_destructive);
    assert_eq!(ran.count("read_note"), 1);
    assert_eq!(ran.count("delete note old"), 0, "nothing deleted yet");
    // Kept as JSON, continued by another runtime, as another process would.
    let json = serde_json::to_string(&paused.state.unwrap()).unwrap();

    // A decision for a call that does not wait is refused, and nothing runs.
    let (second, _) = resumed(&ran, "unused");
    let state: RunState = serde_json::from_str(&json).unwrap();
    let wrong = second
        .continue_paused(state, [("p1/c1", Decision::Approve)])
        .await
        .unwrap_err();
    assert!(wrong.to_string().contains("`p1/c1`"), "{wrong}");
    assert_eq!(ran.count("read_note"), 1);

    let (second, provider) = resumed(&ran, "tidied");
    let state: RunState = serde_json::from_str(&json).unwrap();
    let done = second
        .continue_paused(state, [("p1/c2", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        done.finish,
        FinishReason::NoMoreToolCalls,
        "{:?}",
        done.finish
    );
    let (text, is_error) = result(&done);
    assert!(!is_error, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        answer["value"],
        json!({"outcome": "deleted note old", "after": "note after"})
    );
    assert_eq!(
        ran.count("delete note old"),
        1,
        "the approved call ran once"
    );
    assert_eq!(
        ran.count("read_note"),
        2,
        "the first read was answered from its record; only `after` ran"
    );
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test]
async fn a_denied_call_inside_code_is_an_error_the_program_catches() {
    let ran = Arc::new(Ran::default());
    let (first, _) = runtime(GATED, &ran);
    let state = *first.run("Tidy.").await.unwrap().state.unwrap();
    let (second, _) = resumed(&ran, "not tidied");
    let done = second
        .continue_paused(state, [("p1/c2", Decision::Deny("not that one".into()))])
        .await
        .unwrap();
    let (text, _) = result(&done);
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        answer["value"]["outcome"], "refused: denied: not that one",
        "{text}"
    );
    assert_eq!(ran.count("delete note old"), 0);
}

#[tokio::test]
async fn an_edited_call_runs_with_the_new_arguments_and_two_pauses_follow_each_other() {
    let code = r#"
        const a = await delete_branch({ name: "a" });
        const b = await delete_branch({ name: "b" });
        return [a, b];
    "#;
    let ran = Arc::new(Ran::default());
    let (first, _) = runtime(code, &ran);
    let state = *first.run("Delete.").await.unwrap().state.unwrap();
    assert_eq!(state.pending()[0].id(), "p1/c1");
    let (second, _) = resumed(&ran, "unused");
    let again = second
        .continue_paused(state, [("p1/c1", Decision::Edit(json!({"name": "a2"})))])
        .await
        .unwrap();
    // The second call pauses in its turn; the first is not asked about again.
    let FinishReason::AwaitingApproval { pending } = &again.finish else {
        panic!("{:?}", again.finish)
    };
    assert_eq!(pending[0].id(), "p1/c2");
    assert_eq!(ran.count("delete a2"), 1);
    let (third, _) = resumed(&ran, "both");
    let done = third
        .continue_paused(*again.state.unwrap(), [("p1/c2", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        done.finish,
        FinishReason::NoMoreToolCalls,
        "{:?}",
        done.finish
    );
    let (text, _) = result(&done);
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["value"], json!(["deleted a2", "deleted b"]));
    assert_eq!((ran.count("delete a2"), ran.count("delete b")), (1, 1));
    assert_eq!(ran.count("delete a"), 0);
}

#[tokio::test]
async fn a_program_that_takes_another_path_after_its_pause_has_the_new_call_refused() {
    let ran = Arc::new(Ran::default());
    let (first, _) = runtime(GATED, &ran);
    let state = *first.run("Tidy.").await.unwrap().state.unwrap();
    // The same call id, another program (as if its first result had changed).
    let other = r#"
        await read_note({ name: "new" });
        return await delete_branch({ name: "everything" });
    "#;
    let (second, _) = resumed(&ran, "x");
    // The run runs again the call it kept: make it the other program.
    let escaped = |code: &str| {
        let text = serde_json::to_string(code).unwrap();
        text[1..text.len() - 1].to_owned()
    };
    let json = serde_json::to_string(&state)
        .unwrap()
        .replace(&escaped(GATED), &escaped(other));
    let state: RunState = serde_json::from_str(&json).unwrap();
    let done = second
        .continue_paused(state, [("p1/c2", Decision::Approve)])
        .await
        .unwrap();
    let (text, is_error) = result(&done);
    assert!(is_error, "{text}");
    assert!(text.contains("took another path"), "{text}");
    assert_eq!(ran.count("delete everything"), 0);
}
