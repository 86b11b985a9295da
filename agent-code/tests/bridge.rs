//! What a program sends across to the host is bounded where it is made, in the interpreter under
//! its memory cap: 16 KB of program that builds 12 MB of arguments is refused before anything
//! crosses, and so is the same under `Promise.all`; a returned value too large to read as JSON
//! comes back cut, as text; and the programs of one `run_code` skill run at most four at a time,
//! however many calls a turn makes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_code::RunCode;
use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply, Role};
use agent_runtime::AgentRuntime;
use serde_json::{Value, json};

static ECHOED: AtomicUsize = AtomicUsize::new(0);
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);

/// Answer with what was sent.
///
/// # Arguments
/// * `value` - Anything.
#[skill(read_only, register = false)]
async fn echo(value: Value) -> Result<Value, SkillError> {
    ECHOED.fetch_add(1, Ordering::SeqCst);
    Ok(value)
}

/// Hold a moment, counting how many hold at once.
#[skill(read_only, register = false)]
async fn hold() -> Result<String, SkillError> {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(50)).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    Ok("held".into())
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(EchoSkill).add(HoldSkill);
    let run_code = RunCode::over(&registry).timeout(Duration::from_secs(30));
    registry.add(run_code);
    registry
}

/// Runs the programs `codes` in one turn (calls `p0`, `p1`, ...); each one's result text.
async fn run(codes: &[&str]) -> Vec<String> {
    let calls: Vec<ToolCall> = codes
        .iter()
        .enumerate()
        .map(|(i, code)| ToolCall::new(format!("p{i}"), "run_code", json!({ "code": code })))
        .collect();
    let provider = MockProvider::new([MockReply::tool_calls(calls), MockReply::text("done")]);
    let outcome = AgentRuntime::new(provider, registry())
        .run("Go.")
        .await
        .unwrap();
    outcome
        .transcript
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .collect()
}

const BIG: &str = "const row = new Array(2000).fill(0); const big = new Array(3000).fill(row);";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_program_that_sends_megabytes_is_refused_before_anything_crosses() {
    let before = ECHOED.load(Ordering::SeqCst);
    let one = format!("{BIG} return await echo({{ value: big }});");
    let eight = format!(
        "{BIG} return await Promise.all([0,1,2,3,4,5,6,7].map(() => echo({{ value: big }})));"
    );
    let results = run(&[&one, &eight]).await;
    for result in &results {
        assert!(
            result.contains("a call may send") && result.contains("12006"),
            "{result}"
        );
    }
    assert_eq!(ECHOED.load(Ordering::SeqCst), before, "echo never ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_too_large_to_read_comes_back_cut_as_text() {
    let code = format!("{BIG} return big;");
    let results = run(&[&code]).await;
    // The value came back as text (a JSON string), not as a tree of six million numbers.
    assert!(
        results[0].starts_with(r#"{"value":"[[0,0,0"#),
        "{:.300}",
        results[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_programs_in_one_turn_run_at_most_four_at_a_time() {
    // Twenty programs, each its own (the same call twenty times would be stopped as stuck).
    let codes: Vec<String> = (0..20)
        .map(|i| format!("// program {i}\nreturn await hold({{}});"))
        .collect();
    let codes: Vec<&str> = codes.iter().map(String::as_str).collect();
    let results = run(&codes).await;
    assert_eq!(results.len(), 20);
    assert!(results.iter().all(|r| r.contains("held")), "{results:?}");
    let most = MOST.load(Ordering::SeqCst);
    assert!(
        (1..=agent_code::DEFAULT_MAX_PROGRAMS).contains(&most),
        "{most} programs held at once"
    );
}
