//! What the code-mode tests share: a few real skills (they count their runs), a registry with
//! `run_code` over them, and a runtime whose scripted model runs one program and then answers.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_code::RunCode;
use agent_core::{Registry, SkillContext, SkillError, ToolCall, skill};
use agent_core::{schemars, serde};
use agent_llm::{MockProvider, MockReply, Role};
use agent_runtime::{AgentRuntime, RunOutcome};
use serde_json::json;

/// How often each skill ran, by name.
#[derive(Default)]
pub struct Ran(Mutex<Vec<String>>);

impl Ran {
    pub fn count(&self, name: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|n| *n == name).count()
    }
    fn note(&self, name: &str) {
        self.0.lock().unwrap().push(name.to_owned());
    }
}

fn ran(ctx: &SkillContext) -> &Ran {
    ctx.extension::<Arc<Ran>>()
        .expect("the tests give a counter")
}

/// The sum of two numbers.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
pub struct Sum {
    /// The sum.
    pub sum: f64,
}

/// Add two numbers.
///
/// # Arguments
/// * `a` - The first.
/// * `b` - The second.
#[skill(read_only, register = false)]
async fn add(ctx: &SkillContext, a: f64, b: f64) -> Result<Sum, SkillError> {
    ran(ctx).note("add");
    Ok(Sum { sum: a + b })
}

/// Read a note.
///
/// # Arguments
/// * `name` - The note.
#[skill(read_only, register = false)]
async fn read_note(ctx: &SkillContext, name: String) -> Result<String, SkillError> {
    ran(ctx).note("read_note");
    if name == "missing" {
        return Err(SkillError::tool("no note called `missing`"));
    }
    Ok(format!("note {name}"))
}

/// Delete a branch.
///
/// # Arguments
/// * `name` - The branch.
#[skill(destructive, register = false)]
async fn delete_branch(ctx: &SkillContext, name: String) -> Result<String, SkillError> {
    ran(ctx).note(&format!("delete {name}"));
    Ok(format!("deleted {name}"))
}

/// Wait at the barrier for the other caller.
///
/// # Arguments
/// * `who` - Which caller.
#[skill(read_only, register = false)]
async fn meet(ctx: &SkillContext, who: String) -> Result<String, SkillError> {
    let barrier = ctx
        .extension::<Arc<tokio::sync::Barrier>>()
        .unwrap()
        .clone();
    tokio::time::timeout(Duration::from_secs(10), barrier.wait())
        .await
        .map_err(|_| SkillError::tool("the other call never came: calls ran one after another"))?;
    Ok(format!("{who} met"))
}

/// Count a write (not concurrency-safe).
///
/// # Arguments
/// * `n` - Which write.
#[skill(register = false)]
async fn write_count(ctx: &SkillContext, n: u32) -> Result<String, SkillError> {
    static AT_ONCE: AtomicUsize = AtomicUsize::new(0);
    let now = AT_ONCE.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(20)).await;
    AT_ONCE.fetch_sub(1, Ordering::SeqCst);
    ran(ctx).note("write_count");
    if now > 0 {
        return Err(SkillError::tool("two writes ran at once"));
    }
    Ok(format!("wrote {n}"))
}

/// The test skills, and `run_code` over them (with `timeout`).
pub fn registry(timeout: Duration) -> Registry {
    let mut registry = Registry::new();
    registry
        .add(AddSkill)
        .add(ReadNoteSkill)
        .add(DeleteBranchSkill)
        .add(MeetSkill)
        .add(WriteCountSkill);
    let run_code = RunCode::over(&registry)
        .timeout(timeout)
        .memory_limit(32 * 1024 * 1024)
        .max_printed(2_000);
    registry.add(run_code);
    registry
}

/// A runtime whose model runs `code` (call `p1`), then answers `done`.
pub fn runtime(code: &str, ran: &Arc<Ran>) -> (AgentRuntime, MockProvider) {
    runtime_with(
        code,
        ran,
        Duration::from_secs(5),
        vec![MockReply::text("done")],
    )
}

/// [`runtime`] with a time limit and what the model says after the program.
pub fn runtime_with(
    code: &str,
    ran: &Arc<Ran>,
    timeout: Duration,
    then: Vec<MockReply>,
) -> (AgentRuntime, MockProvider) {
    let mut replies = vec![MockReply::tool_calls([ToolCall::new(
        "p1",
        "run_code",
        json!({ "code": code }),
    )])];
    replies.extend(then);
    scripted(replies, ran, timeout)
}

/// A runtime that continues a paused run: its model says `then`, after the program's answer.
pub fn resumed(ran: &Arc<Ran>, then: &str) -> (AgentRuntime, MockProvider) {
    scripted(vec![MockReply::text(then)], ran, Duration::from_secs(5))
}

fn scripted(
    replies: Vec<MockReply>,
    ran: &Arc<Ran>,
    timeout: Duration,
) -> (AgentRuntime, MockProvider) {
    let provider = MockProvider::new(replies);
    let context = SkillContext::new(".")
        .with_extension(ran.clone())
        .with_extension(Arc::new(tokio::sync::Barrier::new(2)));
    let runtime = AgentRuntime::new(provider.clone(), registry(timeout)).context(context);
    (runtime, provider)
}

/// What `run_code` answered in the outcome's transcript: its text and whether it is an error.
pub fn result(outcome: &RunOutcome) -> (String, bool) {
    let message = outcome
        .transcript
        .iter()
        .find(|m| m.role == Role::Tool)
        .expect("run_code was answered");
    (message.content.clone(), message.is_error)
}

/// Runs `code` through a fresh runtime and answers what `run_code` said.
pub async fn run(code: &str) -> (String, bool) {
    let ran = Arc::new(Ran::default());
    let (runtime, _) = runtime(code, &ran);
    let outcome = runtime.run("Run the program.").await.unwrap();
    result(&outcome)
}
