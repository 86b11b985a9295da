//! A run's effects through a [`Journal`] ([`Journaled`]): a model call, a compaction summary, a
//! tool call, each a journaled step; events through [`Journal::emit`]. A run with a journal is
//! given this wrapper when it starts, and the loop knows nothing else of journals.

use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::compaction::{self, Attempt};
use super::effects::{Direct, Effects};
use super::journal::{Journal, JournalStep, StepResult};
use super::outcome::AgentError;
use super::record::{ModelUse, ToolRecord};
use crate::event::AgentEvent;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::context::SkillContext;
use agent_core::error::SkillError;
use agent_core::registry::Registry;
use agent_core::retry::RetryableError;
use agent_llm::ModelUseReporter;
use agent_llm::llm::{EventStream, LlmProvider, ProviderError};
use agent_llm::message::{ChatRequest, ChatResponse, Message};

/// A model call through the journal: its answer, or its error, recorded; a transient error that
/// outlived the provider's retries is not recorded ([`StepResult::Retry`]).
async fn model_call(
    journal: &dyn Journal,
    step: JournalStep,
    call: impl Future<Output = Result<ChatResponse, ProviderError>> + Send,
) -> Result<ChatResponse, AgentError> {
    let name = step.to_string();
    let run = Box::pin(async move {
        match call.await {
            Err(error) if error.is_transient() => StepResult::Retry(error.to_string()),
            answer => record(&ModelRecord::from(answer)),
        }
    });
    let value = journal
        .step(step, run)
        .await
        .map_err(|error| AgentError::Resume(format!("the journal failed at {name}: {error}")))?;
    let record: ModelRecord = read_back(&name, value)?;
    Ok(record.into_answer()?)
}

/// A run's effects through a journal: every model call, summary and tool call is a step, answered
/// from the journal when it was recorded before; tool calls go one at a time, in call order, each
/// its own step; events go through [`Journal::emit`].
pub(super) struct Journaled<'a> {
    pub(super) direct: Direct<'a>,
    pub(super) journal: &'a dyn Journal,
}

impl Effects for Journaled<'_> {
    async fn model(
        &self,
        step: usize,
        request: &ChatRequest<'_>,
    ) -> Result<ChatResponse, AgentError> {
        let call = self.direct.ask(step, request);
        model_call(self.journal, JournalStep::Model { step }, call).await
    }

    async fn summarize(
        &self,
        step: usize,
        transcript: &mut Vec<Message>,
        keep_recent: usize,
    ) -> Option<Attempt> {
        let provider = JournaledProvider {
            provider: self.direct.provider(),
            journal: self.journal,
            step,
        };
        compaction::compact(transcript, &provider, keep_recent).await
    }

    /// A call already recorded is answered from the journal (and the deferred skills it loaded
    /// are loaded again) without running.
    async fn calls(&self, step: usize, calls: &[ToolCall], ctx: &SkillContext) -> Vec<ToolResult> {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            let id = JournalStep::Tool {
                step,
                call_id: call.id.to_string(),
                name: call.name.clone(),
            };
            let registry = &self.direct.rt.registry;
            // A skill that journals its own steps (a child agent) runs outside a step: its
            // steps go into this journal in order, and a step inside a step is not allowed.
            if registry
                .get(&call.name)
                .is_some_and(|s| s.journals_its_steps())
            {
                results.push(registry.run_one(call, ctx).await);
                continue;
            }
            results.push(tool_step(self.journal, id, registry, call, ctx).await);
        }
        results
    }

    /// A journal replaying recorded steps holds back what was reported before.
    fn emit(&self, event: &AgentEvent) {
        self.journal.emit(event, &self.direct.rt.sinks);
    }
}

/// A provider whose whole answers go through the journal: compaction's summaries, which are model
/// calls like any other. Only [`LlmProvider::complete`] is journaled (compaction uses nothing
/// else); `stream` goes straight to the provider.
struct JournaledProvider<'a> {
    provider: &'a dyn LlmProvider,
    journal: &'a dyn Journal,
    step: usize,
}

#[async_trait::async_trait]
impl LlmProvider for JournaledProvider<'_> {
    fn name(&self) -> &str {
        self.provider.name()
    }

    fn model(&self) -> Option<&str> {
        self.provider.model()
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let step = JournalStep::Compaction { step: self.step };
        match model_call(self.journal, step, self.provider.complete(request)).await {
            Ok(answer) => Ok(answer),
            Err(AgentError::Provider(error)) => Err(error),
            // Compaction treats any failure as "no summary"; the journal's own failure included.
            Err(other) => Err(ProviderError::Config(other.to_string())),
        }
    }

    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        self.provider.stream(request)
    }

    fn supports_tools(&self) -> bool {
        self.provider.supports_tools()
    }

    fn supports_response_schema(&self) -> bool {
        self.provider.supports_response_schema()
    }
}

/// `call` through `registry` as the journal's step `step`: run and recorded, or answered from
/// the record (the deferred skills it loaded loaded again) without running. The model calls the
/// skill reports are recorded with its result and reported from the record, run or replayed
/// alike: so a replay counts them once, as the first attempt did.
pub(super) async fn tool_step(
    journal: &dyn Journal,
    step: JournalStep,
    registry: &Registry,
    call: &ToolCall,
    ctx: &SkillContext,
) -> ToolResult {
    let name = step.to_string();
    let run = Box::pin(async move {
        let used = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = {
            let used = used.clone();
            move |source: &str, usage, cost| {
                let mut used = used.lock().unwrap_or_else(|p| p.into_inner());
                used.push(ModelUse {
                    source: source.to_owned(),
                    usage,
                    cost,
                });
            }
        };
        let reporter = match ctx.extension::<ModelUseReporter>() {
            Some(run) => run.reporting_to(keep),
            None => ModelUseReporter::new(keep),
        };
        let recording = ctx.clone().with_extension(reporter);
        let result = registry.run_one(call, &recording).await;
        let used = std::mem::take(&mut *used.lock().unwrap_or_else(|p| p.into_inner()));
        record(&ToolRecord::keep(&result, ctx.scope().loaded()).with_model_use(used))
    });
    match journal.step(step, run).await {
        Ok(value) => match read_back::<ToolRecord>(&name, value) {
            Ok(record) => record.restore(ctx),
            Err(error) => ToolResult::new(call, Err(SkillError::tool(error.to_string()))),
        },
        Err(_) if ctx.is_cancelled() => ToolResult::new(call, Err(SkillError::Cancelled)),
        Err(error) => ToolResult::new(
            call,
            Err(SkillError::tool(format!("the journal failed: {error}"))),
        ),
    }
}

/// A step's result as JSON. The journaled types serialize to JSON without fail (string keys only);
/// should one ever not, the step records the failure, which reads back as an error.
fn record<T: Serialize>(value: &T) -> StepResult {
    match serde_json::to_value(value) {
        Ok(value) => StepResult::Done(value),
        Err(error) => StepResult::Done(serde_json::json!({ "unserializable": error.to_string() })),
    }
}

fn read_back<T: for<'de> Deserialize<'de>>(name: &str, value: Value) -> Result<T, AgentError> {
    if let Some(error) = value.get("unserializable") {
        return Err(AgentError::Resume(format!(
            "the result of {name} could not be journaled: {error}"
        )));
    }
    serde_json::from_value(value).map_err(|error| {
        AgentError::Resume(format!(
            "the journal's entry for {name} does not read back ({error}): it was written by \
             another version of agent-core, or changed; finish the run with the version that \
             started it"
        ))
    })
}

/// A model call's answer or error, as journaled.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ModelRecord {
    Answer(ChatResponse),
    Error(ProviderError),
}

impl From<Result<ChatResponse, ProviderError>> for ModelRecord {
    fn from(answer: Result<ChatResponse, ProviderError>) -> Self {
        match answer {
            Ok(answer) => ModelRecord::Answer(answer),
            Err(error) => ModelRecord::Error(error),
        }
    }
}

impl ModelRecord {
    fn into_answer(self) -> Result<ChatResponse, ProviderError> {
        match self {
            ModelRecord::Answer(answer) => Ok(answer),
            ModelRecord::Error(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::journal::{JournalError, StepFuture};
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

    /// A skill that counts its runs.
    struct Bump(Arc<AtomicUsize>);

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoInput {}

    #[async_trait::async_trait]
    impl agent_core::skill::Skill for Bump {
        type Input = NoInput;
        fn name(&self) -> &str {
            "bump"
        }
        fn description(&self) -> &str {
            "Counts."
        }
        async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
            let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(SkillOutput::Text(format!("bumped to {n}")))
        }
    }

    fn runtime(
        replies: Vec<agent_llm::llm::MockReply>,
        runs: &Arc<AtomicUsize>,
        journal: &Arc<Memory>,
    ) -> (super::super::AgentRuntime, agent_llm::llm::MockProvider) {
        let mut registry = Registry::new();
        registry.add(Bump(Arc::clone(runs)));
        let provider = agent_llm::llm::MockProvider::new(replies);
        let journal: Arc<dyn Journal> = journal.clone();
        let runtime = super::super::AgentRuntime::new(provider.clone(), registry).journal(journal);
        (runtime, provider)
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
        assert_eq!(results, ["bumped to 1", "bumped to 2"]);
    }

    /// A parent whose one turn calls a child agent that bumps twice; both journaled in `journal`.
    fn parent_of_a_bumping_child(
        runs: &Arc<AtomicUsize>,
        journal: &Arc<Memory>,
        parent_replies: Vec<agent_llm::llm::MockReply>,
        child_replies: Vec<agent_llm::llm::MockReply>,
    ) -> (super::super::AgentRuntime, agent_llm::llm::MockProvider) {
        let mut child_registry = Registry::new();
        child_registry.add(Bump(Arc::clone(runs)));
        let child_model = agent_llm::llm::MockProvider::new(child_replies);
        let child = super::super::AgentRuntime::new(child_model.clone(), child_registry);
        let mut registry = Registry::new();
        registry.add(child.into_skill("bumper", "Bumps."));
        let journal: Arc<dyn Journal> = journal.clone();
        let parent = super::super::AgentRuntime::new(
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
            let counted =
                agent_llm::report_model_use(ctx, "helper", usage, agent_llm::Cost::UNPRICED);
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
            super::super::AgentRuntime::new(provider, registry).journal(journal)
        };
        let replies = vec![
            agent_llm::llm::MockReply::tool_calls([ToolCall::new(
                "c1",
                "asks",
                serde_json::json!({}),
            )]),
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
        let error = read_back::<ToolRecord>("step 2: tool rm (c1)", serde_json::json!({"x": 1}))
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("step 2: tool rm (c1) does not read back"),
            "{error}"
        );
    }
}
