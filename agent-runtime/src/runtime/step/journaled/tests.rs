//! The journal's wrapper tested with a journal in memory: replays, crashes cut at every kind of
//! step, children's steps, and calls that must not run twice.

use super::*;
use crate::runtime::step::journal::{JournalError, StepFuture};
use agent_core::registry::Registry;
use agent_core::skill::SkillOutput;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A journal in memory: records each step's value in order; a second run over the same
/// entries replays them.
#[derive(Default)]
struct Memory {
    entries: Mutex<Vec<Value>>,
    next: AtomicUsize,
    ran: AtomicUsize,
}

impl Journal for Memory {
    fn step<'a>(
        &'a self,
        _step: JournalStep,
        run: StepFuture<'a, StepResult>,
    ) -> StepFuture<'a, Result<Value, JournalError>> {
        Box::pin(async move {
            let index = self.next.fetch_add(1, Ordering::SeqCst);
            if let Some(value) = self.entries.lock().unwrap().get(index).cloned() {
                return Ok(value);
            }
            self.ran.fetch_add(1, Ordering::SeqCst);
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

#[tokio::test]
async fn a_recorded_model_answer_or_error_is_replayed_without_calling_again() {
    let journal = Memory::default();
    let answer = || async {
        Err::<ChatResponse, _>(ProviderError::Api {
            provider: "p".into(),
            status: 400,
            error_type: Some("invalid_request_error".into()),
            message: "bad".into(),
            retry_after: None,
        })
    };
    let first = model_call(&journal, JournalStep::Model { step: 1 }, answer()).await;
    journal.next.store(0, Ordering::SeqCst);
    let again = model_call(&journal, JournalStep::Model { step: 1 }, async {
        unreachable!("a recorded step is not run again")
    })
    .await;
    assert_eq!(journal.ran.load(Ordering::SeqCst), 1);
    assert_eq!(
        first.unwrap_err().to_string(),
        again.unwrap_err().to_string()
    );
}

#[tokio::test]
async fn a_transient_model_error_is_not_recorded() {
    let journal = Memory::default();
    let down = async {
        Err::<ChatResponse, _>(ProviderError::Connect {
            provider: "p".into(),
            message: "refused".into(),
        })
    };
    let error = model_call(&journal, JournalStep::Model { step: 1 }, down)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("refused"), "{error}");
    assert!(journal.entries.lock().unwrap().is_empty());
}

/// A skill that counts its runs: `bump` is idempotent (a replay of a call under way runs it
/// again), `charge` is not.
struct Counter {
    runs: Arc<AtomicUsize>,
    name: &'static str,
    idempotent: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoInput {}

#[async_trait::async_trait]
impl agent_core::skill::Skill for Counter {
    type Input = NoInput;
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Counts."
    }
    fn is_idempotent(&self) -> bool {
        self.idempotent
    }
    async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(SkillOutput::Text(format!("{} {n}", self.name)))
    }
}

/// A runtime journaled in `journal` whose registry has `skill`, and its scripted model.
fn journaled(
    skill: Counter,
    replies: Vec<agent_llm::llm::MockReply>,
    journal: &Arc<Memory>,
) -> (crate::runtime::AgentRuntime, agent_llm::llm::MockProvider) {
    let mut registry = Registry::new();
    registry.add(skill);
    let provider = agent_llm::llm::MockProvider::new(replies);
    let journal: Arc<dyn Journal> = journal.clone();
    let runtime = crate::runtime::AgentRuntime::new(provider.clone(), registry).journal(journal);
    (runtime, provider)
}

fn runtime(
    replies: Vec<agent_llm::llm::MockReply>,
    runs: &Arc<AtomicUsize>,
    journal: &Arc<Memory>,
) -> (crate::runtime::AgentRuntime, agent_llm::llm::MockProvider) {
    let bump = Counter {
        runs: Arc::clone(runs),
        name: "bump",
        idempotent: true,
    };
    journaled(bump, replies, journal)
}

fn two_bumps() -> Vec<agent_llm::llm::MockReply> {
    vec![
        agent_llm::llm::MockReply::tool_calls([
            ToolCall::new("c1", "bump", serde_json::json!({})),
            ToolCall::new("c2", "bump", serde_json::json!({})),
        ]),
        agent_llm::llm::MockReply::text("done"),
    ]
}

#[tokio::test]
async fn a_run_replayed_from_its_journal_asks_the_model_nothing_and_runs_nothing_again() {
    let (journal, runs) = (Arc::new(Memory::default()), Arc::new(AtomicUsize::new(0)));
    let (first, _) = runtime(two_bumps(), &runs, &journal);
    let outcome = first.run("bump twice").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("done"));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(
        journal.entries.lock().unwrap().len(),
        5,
        "the run's id, 2 model calls, 2 tool calls"
    );

    // Another attempt at the same run: everything comes from the journal.
    journal.next.store(0, Ordering::SeqCst);
    let (again, provider) = runtime(Vec::new(), &runs, &journal);
    let replayed = again.run("bump twice").await.unwrap();
    assert_eq!(replayed.final_text.as_deref(), Some("done"));
    assert_eq!(replayed.transcript, outcome.transcript);
    assert_eq!(replayed.usage, outcome.usage);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert!(provider.requests().is_empty());
}

#[tokio::test]
async fn after_a_crash_mid_batch_only_the_steps_not_journaled_run() {
    let (journal, runs) = (Arc::new(Memory::default()), Arc::new(AtomicUsize::new(0)));
    let (first, _) = runtime(two_bumps(), &runs, &journal);
    first.run("bump twice").await.unwrap();
    // The attempt died after the first call's result was recorded (after the run's id and
    // the first model call).
    journal.entries.lock().unwrap().truncate(3);
    journal.next.store(0, Ordering::SeqCst);
    runs.store(1, Ordering::SeqCst);
    let (again, provider) = runtime(
        vec![agent_llm::llm::MockReply::text("done")],
        &runs,
        &journal,
    );
    let outcome = again.run("bump twice").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("done"));
    assert_eq!(runs.load(Ordering::SeqCst), 2, "c1 replayed, c2 ran");
    let requests = provider.requests();
    assert_eq!(requests.len(), 1, "the first turn was not asked again");
    let results: Vec<&str> = requests[0]
        .messages
        .iter()
        .filter(|m| m.role == agent_llm::message::Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(results, ["bump 1", "bump 2"]);
}

/// A parent whose one turn calls a child agent that bumps twice; both journaled in `journal`.
fn parent_of_a_bumping_child(
    runs: &Arc<AtomicUsize>,
    journal: &Arc<Memory>,
    parent_replies: Vec<agent_llm::llm::MockReply>,
    child_replies: Vec<agent_llm::llm::MockReply>,
) -> (crate::runtime::AgentRuntime, agent_llm::llm::MockProvider) {
    let mut child_registry = Registry::new();
    child_registry.add(Counter {
        runs: Arc::clone(runs),
        name: "bump",
        idempotent: true,
    });
    let child_model = agent_llm::llm::MockProvider::new(child_replies);
    let child = crate::runtime::AgentRuntime::new(child_model.clone(), child_registry);
    let mut registry = Registry::new();
    registry.add(child.into_skill("bumper", "Bumps."));
    let journal: Arc<dyn Journal> = journal.clone();
    let parent = crate::runtime::AgentRuntime::new(
        agent_llm::llm::MockProvider::new(parent_replies),
        registry,
    )
    .journal(journal);
    (parent, child_model)
}

fn delegate() -> Vec<agent_llm::llm::MockReply> {
    vec![
        agent_llm::llm::MockReply::tool_calls([ToolCall::new(
            "p1",
            "bumper",
            serde_json::json!({"goal": "bump twice"}),
        )]),
        agent_llm::llm::MockReply::text("all bumped"),
    ]
}

#[tokio::test]
async fn a_child_agents_steps_are_steps_of_the_durable_run_and_replay_after_a_crash() {
    let (journal, runs) = (Arc::new(Memory::default()), Arc::new(AtomicUsize::new(0)));
    let (first, _) = parent_of_a_bumping_child(&runs, &journal, delegate(), two_bumps());
    let outcome = first.run("delegate").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("all bumped"));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(
        journal.entries.lock().unwrap().len(),
        7,
        "the run's id, the parent's 2 model calls, the child's 2 model calls and 2 tool calls; \
         the call to the child is no step of its own, and the child's id derives from its key"
    );

    // The attempt died in the middle of the child: after the run's id, the parent's first
    // model call, the child's first model call and its first bump.
    journal.entries.lock().unwrap().truncate(4);
    journal.next.store(0, Ordering::SeqCst);
    runs.store(1, Ordering::SeqCst);
    let (again, child_model) = parent_of_a_bumping_child(
        &runs,
        &journal,
        vec![agent_llm::llm::MockReply::text("all bumped")],
        vec![agent_llm::llm::MockReply::text("done")],
    );
    let outcome = again.run("delegate").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("all bumped"));
    assert_eq!(runs.load(Ordering::SeqCst), 2, "c1 replayed, c2 ran once");
    assert_eq!(
        child_model.requests().len(),
        1,
        "the child's first turn was not asked again"
    );
    assert_eq!(journal.entries.lock().unwrap().len(), 7);
}

/// A skill that says it asked a model (500 + 50 tokens), counting its runs.
struct Asks(Arc<AtomicUsize>);

#[async_trait::async_trait]
impl agent_core::skill::Skill for Asks {
    type Input = NoInput;
    fn name(&self) -> &str {
        "asks"
    }
    fn description(&self) -> &str {
        "Asks a model."
    }
    async fn run(&self, _: NoInput, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let usage = agent_llm::message::Usage {
            input_tokens: 500,
            output_tokens: 50,
            ..Default::default()
        };
        let counted = agent_llm::report_model_use(ctx, "helper", usage, agent_llm::Cost::UNPRICED);
        Ok(SkillOutput::Text(format!("asked; counted: {counted}")))
    }
}

#[tokio::test]
async fn a_model_use_a_journaled_call_reported_counts_once_in_a_replay() {
    let (journal, runs) = (Arc::new(Memory::default()), Arc::new(AtomicUsize::new(0)));
    let runtime = |replies| {
        let mut registry = Registry::new();
        registry.add(Asks(Arc::clone(&runs)));
        let journal: Arc<dyn Journal> = journal.clone();
        let provider = agent_llm::llm::MockProvider::new(replies);
        crate::runtime::AgentRuntime::new(provider, registry).journal(journal)
    };
    let replies = vec![
        agent_llm::llm::MockReply::tool_calls([ToolCall::new("c1", "asks", serde_json::json!({}))]),
        agent_llm::llm::MockReply::text("done"),
    ];
    let first = runtime(replies).run("ask").await.unwrap();
    let helper = agent_llm::message::Usage {
        input_tokens: 500,
        output_tokens: 50,
        ..Default::default()
    };
    assert_eq!(first.agents.get("helper"), Some(&helper));
    assert_eq!(first.agent_steps, 1);
    assert_eq!(
        first.cost.unpriced_calls, 3,
        "two model calls, one reported"
    );
    assert_eq!(first.transcript[2].content, "asked; counted: true");

    // The whole run again from its journal: the skill does not run, and its model call is
    // counted once, from the record.
    journal.next.store(0, Ordering::SeqCst);
    let replayed = runtime(Vec::new()).run("ask").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(replayed.usage, first.usage);
    assert_eq!(replayed.agents, first.agents);
    assert_eq!(replayed.agent_steps, 1);
    assert_eq!(replayed.cost, first.cost);
}

#[test]
fn an_entry_of_another_shape_is_a_clear_error() {
    let error =
        read_back::<ToolRecord>("step 2: tool rm (c1)", serde_json::json!({"x": 1})).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("step 2: tool rm (c1) does not read back"),
        "{error}"
    );
}

/// A runtime whose registry has `charge`, neither read-only nor idempotent.
fn charging(
    replies: Vec<agent_llm::llm::MockReply>,
    runs: &Arc<AtomicUsize>,
    journal: &Arc<Memory>,
) -> (crate::runtime::AgentRuntime, agent_llm::llm::MockProvider) {
    let charge = Counter {
        runs: Arc::clone(runs),
        name: "charge",
        idempotent: false,
    };
    journaled(charge, replies, journal)
}

fn one_charge() -> Vec<agent_llm::llm::MockReply> {
    vec![
        agent_llm::llm::MockReply::tool_calls([ToolCall::new(
            "c1",
            "charge",
            serde_json::json!({}),
        )]),
        agent_llm::llm::MockReply::text("charged"),
    ]
}

#[tokio::test]
async fn a_call_that_is_not_idempotent_and_was_under_way_at_a_crash_is_not_run_again() {
    let (journal, runs) = (Arc::new(Memory::default()), Arc::new(AtomicUsize::new(0)));
    let (first, _) = charging(one_charge(), &runs, &journal);
    first.run("charge").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        journal.entries.lock().unwrap().len(),
        5,
        "the run's id, the model, the call's start mark, its result, the model"
    );
    // The process died while the charge ran: its start mark is journaled, its result is not.
    journal.entries.lock().unwrap().truncate(3);
    journal.next.store(0, Ordering::SeqCst);
    let (again, provider) = charging(
        vec![agent_llm::llm::MockReply::text("checked")],
        &runs,
        &journal,
    );
    let outcome = again.run("charge").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1, "not charged twice");
    let requests = provider.requests();
    let result = requests[0]
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("c1"))
        .unwrap();
    assert!(result.is_error, "{}", result.content);
    assert!(
        result.content.contains("was interrupted"),
        "{}",
        result.content
    );
    assert_eq!(outcome.final_text.as_deref(), Some("checked"));
    // The interruption is journaled: a later replay answers the same, running nothing.
    journal.next.store(0, Ordering::SeqCst);
    let (third, _) = charging(Vec::new(), &runs, &journal);
    let replayed = third.run("charge").await.unwrap();
    assert_eq!(replayed.transcript, outcome.transcript);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_call_whose_start_was_not_journaled_runs_after_a_crash() {
    let (journal, runs) = (Arc::new(Memory::default()), Arc::new(AtomicUsize::new(0)));
    let (first, _) = charging(one_charge(), &runs, &journal);
    first.run("charge").await.unwrap();
    // The process died after the model's answer, before the call was marked as started.
    journal.entries.lock().unwrap().truncate(2);
    journal.next.store(0, Ordering::SeqCst);
    runs.store(0, Ordering::SeqCst);
    let (again, _) = charging(
        vec![agent_llm::llm::MockReply::text("charged")],
        &runs,
        &journal,
    );
    let outcome = again.run("charge").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("charged"));
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "it had not started: it runs"
    );
}
