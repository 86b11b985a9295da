//! A program's calls in a durable run (each a journaled step: after a crash, a replay answers the
//! calls that completed from the journal and runs only the rest) and as events (nested under the
//! `run_code` call).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_llm::{MockProvider, MockReply};
use agent_runtime::{
    AgentEvent, FinishReason, Journal, JournalError, JournalStep, StepFuture, StepResult,
};
use serde_json::{Value, json};

use common::{Ran, result, runtime};

/// A journal in memory: each step's value in order, and the step names; a second run over the
/// same entries replays them.
#[derive(Default)]
struct Memory {
    entries: Mutex<Vec<Value>>,
    names: Mutex<Vec<String>>,
    next: AtomicUsize,
}

impl Journal for Memory {
    fn step<'a>(
        &'a self,
        step: JournalStep,
        run: StepFuture<'a, StepResult>,
    ) -> StepFuture<'a, Result<Value, JournalError>> {
        Box::pin(async move {
            let index = self.next.fetch_add(1, Ordering::SeqCst);
            if let Some(value) = self.entries.lock().unwrap().get(index).cloned() {
                return Ok(value);
            }
            self.names.lock().unwrap().push(step.to_string());
            match run.await {
                StepResult::Done(value) => {
                    self.entries.lock().unwrap().push(value.clone());
                    Ok(value)
                }
                StepResult::Retry(message) => Err(JournalError(message)),
            }
        })
    }
}

const PROGRAM: &str = r#"
    const [x, y] = await Promise.all([read_note({ name: "x" }), read_note({ name: "y" })]);
    const { sum } = await add({ a: x.length, b: y.length });
    return { x, y, sum };
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_call_of_a_program_is_a_step_and_a_replay_runs_only_what_did_not_complete() {
    let ran = Arc::new(Ran::default());
    let journal = Arc::new(Memory::default());
    let (first, _) = runtime(PROGRAM, &ran);
    let outcome = first
        .journal(journal.clone())
        .run("Sum the notes.")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let (text, is_error) = result(&outcome);
    assert!(!is_error, "{text}");
    // One step a call, in the program's order, between the two model calls.
    assert_eq!(
        *journal.names.lock().unwrap(),
        [
            "run id",
            "step 1: model",
            "step 0: tool read_note (p1/c1)",
            "step 0: tool read_note (p1/c2)",
            "step 0: tool add (p1/c3)",
            "step 2: model",
        ]
    );
    assert_eq!((ran.count("read_note"), ran.count("add")), (2, 1));

    // The process died after the second read: the first four entries (the run's id, the model
    // call, the two reads) survive.
    journal.entries.lock().unwrap().truncate(4);
    journal.names.lock().unwrap().clear();
    journal.next.store(0, Ordering::SeqCst);
    let provider = MockProvider::new([MockReply::text("done again")]);
    let again = agent_runtime::AgentRuntime::new(
        provider.clone(),
        common::registry(std::time::Duration::from_secs(5)),
    )
    .context(agent_core::SkillContext::new(".").with_extension(ran.clone()))
    .journal(journal.clone())
    .run("Sum the notes.")
    .await
    .unwrap();
    assert_eq!(again.final_text.as_deref(), Some("done again"));
    assert_eq!(
        (ran.count("read_note"), ran.count("add")),
        (2, 2),
        "the reads were answered from the journal; only `add` ran again"
    );
    assert_eq!(
        *journal.names.lock().unwrap(),
        ["step 0: tool add (p1/c3)", "step 2: model"]
    );
    let (text, _) = result(&again);
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        answer["value"],
        json!({"x": "note x", "y": "note y", "sum": 12})
    );
    assert_eq!(
        provider.requests().len(),
        1,
        "the first turn was not asked again"
    );
}

#[tokio::test]
async fn a_programs_calls_are_events_nested_under_run_code() {
    let ran = Arc::new(Ran::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        move |event: &AgentEvent| seen.lock().unwrap().push(event.clone())
    };
    let (runtime, _) = runtime(PROGRAM, &ran);
    runtime.event_sink(sink).run("Sum.").await.unwrap();
    let nested: Vec<(Vec<String>, String)> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Nested { path, event, .. } => match &**event {
                AgentEvent::ToolCall { call, .. } => {
                    Some((path.clone(), format!("call {} {}", call.id, call.name)))
                }
                AgentEvent::ToolResult { result, .. } => {
                    Some((path.clone(), format!("result {}", result.call_id)))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    let lines: Vec<&str> = nested.iter().map(|(_, line)| line.as_str()).collect();
    assert!(
        nested.iter().all(|(path, _)| path == &["run_code"]),
        "{nested:?}"
    );
    for line in [
        "call c1 read_note",
        "call c2 read_note",
        "result c1",
        "result c2",
        "call c3 add",
        "result c3",
    ] {
        assert!(lines.contains(&line), "{line} missing: {lines:?}");
    }
    let at = |line: &str| lines.iter().position(|l| *l == line).unwrap();
    assert!(at("result c2") < at("call c3 add"), "{lines:?}");
}
