//! Agents as skills: a runtime called by another's model, its events, usage and pauses seen from
//! the parent; two levels of nesting paused, kept as JSON, and continued exactly once; bad
//! decisions, failing children, the depth limit and concurrent children.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_core::{schemars, serde};
use agent_llm::{MockProvider, MockReply, ProviderError, Usage};
use agent_runtime::{
    AgentError, AgentEvent, AgentRuntime, Decision, FinishReason, MemorySessionStore, ResumeError,
    RunState,
};
use serde_json::json;

use super::usage;

/// Look a word up.
///
/// # Arguments
/// * `word` - The word.
#[skill(read_only, register = false)]
async fn lookup(word: String) -> Result<String, SkillError> {
    Ok(format!("{word}: a small bird"))
}

fn events() -> (
    Arc<Mutex<Vec<AgentEvent>>>,
    impl Fn(&AgentEvent) + Send + Sync + 'static,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        move |event: &AgentEvent| seen.lock().unwrap().push(event.clone())
    };
    (seen, sink)
}

fn researcher(replies: Vec<MockReply>) -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    AgentRuntime::new(MockProvider::new(replies), registry).system("You look words up.")
}

#[tokio::test]
async fn an_agent_is_a_skill_with_a_goal_in_and_its_answer_out() {
    let child = researcher(vec![
        MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({"word": "wren"}))])
            .with_usage(usage(10, 2)),
        MockReply::text("A wren is a small bird.").with_usage(usage(20, 5)),
    ]);
    let mut registry = Registry::new();
    registry.add(child.into_skill("researcher", "Looks words up and explains them."));
    let definition = registry.definitions()[0].clone();
    assert_eq!(definition.name, "researcher");
    assert_eq!(definition.input_schema["required"], json!(["goal"]));
    let (seen, sink) = events();
    let parent = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new(
                "p1",
                "researcher",
                json!({"goal": "What is a wren?"}),
            )])
            .with_usage(usage(100, 10)),
            MockReply::text("A small bird, says the researcher.").with_usage(usage(200, 20)),
        ]),
        registry,
    )
    .event_sink(sink);
    let outcome = parent.run("What is a wren?").await.unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let tool_message = &outcome.transcript[2];
    assert_eq!(tool_message.content, "A wren is a small bird.");
    // The child's tokens are the parent's too, and kept by agent.
    assert_eq!(outcome.usage, usage(330, 37));
    assert_eq!(outcome.agents.get("researcher"), Some(&usage(30, 7)));
    // The child's events reach the parent's sinks, tagged.
    let seen = seen.lock().unwrap();
    let nested_call = seen.iter().find_map(|e| match e {
        AgentEvent::Nested {
            path, calls, event, ..
        } => match &**event {
            AgentEvent::ToolCall { call, .. } => {
                Some((path.clone(), calls.clone(), call.name.clone()))
            }
            _ => None,
        },
        _ => None,
    });
    // Tagged with the agent and the parent's call that ran it.
    assert_eq!(
        nested_call,
        Some((
            vec!["researcher".to_owned()],
            vec!["p1".to_owned()],
            "lookup".to_owned()
        ))
    );
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
struct Question {
    /// The word to explain.
    word: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
struct Entry {
    word: String,
    legs: u8,
}

#[tokio::test]
async fn a_typed_agent_takes_a_typed_input_and_answers_with_a_checked_value() {
    let child = researcher(vec![MockReply::tool_calls([ToolCall::new(
        "f1",
        "final_answer",
        json!({"word": "wren", "legs": 2}),
    )])]);
    let child_provider_requests = child.clone();
    let mut registry = Registry::new();
    registry.add(
        child
            .into_skill("dictionary", "Explains one word.")
            .with_input::<Question>()
            .with_output::<Entry>(),
    );
    let definition = registry.definitions()[0].clone();
    assert_eq!(definition.input_schema["required"], json!(["word"]));
    assert_eq!(
        definition.output_schema.as_ref().unwrap()["required"],
        json!(["word", "legs"])
    );
    let parent = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("p1", "dictionary", json!({"word": "wren"}))]),
            MockReply::text("Two legs."),
        ]),
        registry,
    );
    let outcome = parent.run("Legs of a wren?").await.unwrap();
    assert_eq!(outcome.transcript[2].content, r#"{"word":"wren","legs":2}"#);
    drop(child_provider_requests);
}

/// The branches deleted, by name (each test deletes its own; tests run in parallel).
static DELETED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn deleted(branch: &str) -> usize {
    DELETED
        .lock()
        .unwrap()
        .iter()
        .filter(|b| *b == branch)
        .count()
}

/// Delete a branch.
///
/// # Arguments
/// * `name` - The branch.
#[skill(destructive, register = false)]
async fn delete_branch(name: String) -> Result<String, SkillError> {
    DELETED.lock().unwrap().push(name.clone());
    Ok(format!("deleted {name}"))
}

/// Three agents deep: the coordinator calls `researcher`, which calls `gardener`, which deletes a
/// branch (destructive: it waits for a person).
fn three_levels(branch: &str, deleted_reply: &str) -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(DeleteBranchSkill);
    let gardener = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new(
                "c1",
                "delete_branch",
                json!({"name": branch}),
            )])
            .with_usage(usage(1, 1)),
            MockReply::text(deleted_reply).with_usage(usage(1, 1)),
        ]),
        registry,
    );
    let mut registry = Registry::new();
    registry.add(gardener.into_skill("gardener", "Tends the branches."));
    let researcher = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new(
                "q1",
                "gardener",
                json!({"goal": "Drop old."}),
            )])
            .with_usage(usage(10, 10)),
            MockReply::text("The gardener is done.").with_usage(usage(10, 10)),
        ]),
        registry,
    );
    let mut registry = Registry::new();
    registry.add(researcher.into_skill("researcher", "Finds things out."));
    AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new(
                "p1",
                "researcher",
                json!({"goal": "Tidy up."}),
            )])
            .with_usage(usage(100, 100)),
            MockReply::text("All tidy.").with_usage(usage(100, 100)),
        ]),
        registry,
    )
}

#[tokio::test]
async fn a_pause_two_agents_down_pauses_the_top_and_continues_exactly_once_from_json() {
    let coordinator = three_levels("json", "Deleted `json`.");
    let paused = coordinator.run("Tidy the branches.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("{:?}", paused.finish)
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id(), "p1/q1/c1");
    assert_eq!(pending[0].path(), "researcher › gardener › delete_branch");
    assert!(pending[0].is_destructive);
    assert_eq!(deleted("json"), 0, "nothing ran yet");
    // Kept as text, read back as another process would.
    let saved = serde_json::to_string(&paused.state.unwrap()).unwrap();
    let state: RunState = serde_json::from_str(&saved).unwrap();
    assert_eq!(state.pending()[0].id(), "p1/q1/c1");

    // A decision for a path that is not pending runs nothing.
    let wrong = coordinator
        .continue_paused(state.clone(), [("p1/q1/zz", Decision::Approve)])
        .await
        .unwrap_err();
    assert!(
        matches!(
            &wrong,
            AgentError::Resume(ResumeError::UnmatchedDecisions { unknown, missing, .. })
                if *unknown == ["p1/q1/zz"] && *missing == ["p1/q1/c1"]
        ),
        "{wrong:?}"
    );
    assert!(wrong.to_string().contains("`p1/q1/zz`"), "{wrong}");
    assert_eq!(deleted("json"), 0);

    let done = coordinator
        .continue_paused(state, [("p1/q1/c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        done.finish,
        FinishReason::NoMoreToolCalls,
        "{:?}",
        done.finish
    );
    assert_eq!(done.final_text.as_deref(), Some("All tidy."));
    assert_eq!(deleted("json"), 1, "the approved call ran once");
    // The researcher's tool result is the gardener's answer; the coordinator's is the
    // researcher's.
    let results: Vec<&str> = done
        .transcript
        .iter()
        .filter(|m| m.role == agent_llm::Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(results, ["The gardener is done."]);
    // Every agent's tokens, counted once across the pause.
    assert_eq!(done.usage, usage(222, 222));
    assert_eq!(done.agents.get("researcher"), Some(&usage(20, 20)));
    assert_eq!(done.agents.get("researcher › gardener"), Some(&usage(2, 2)));
}

#[tokio::test]
async fn a_denied_call_two_agents_down_is_the_inner_models_to_read() {
    let coordinator = three_levels("denied", "I was not allowed.");
    let paused = coordinator.run("Tidy the branches.").await.unwrap();
    let state = *paused.state.unwrap();
    let done = coordinator
        .continue_paused(state, [("p1/q1/c1", Decision::Deny("keep it".into()))])
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("All tidy."));
    assert_eq!(deleted("denied"), 0, "denied: nothing deleted");
}

#[tokio::test]
async fn a_nested_pause_in_a_session_continues_through_the_session() {
    let store = MemorySessionStore::default();
    let coordinator = three_levels("session", "Deleted.");
    let paused = coordinator
        .run("Tidy.")
        .in_session(&store, "garden")
        .await
        .unwrap();
    assert!(matches!(
        paused.finish,
        FinishReason::AwaitingApproval { .. }
    ));
    let done = coordinator
        .decide([("p1/q1/c1", Decision::Approve)])
        .in_session(&store, "garden")
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("All tidy."));
    assert_eq!(deleted("session"), 1);
    // The same decision again: nothing is pending any more, nothing runs.
    let again = coordinator
        .decide([("p1/q1/c1", Decision::Approve)])
        .in_session(&store, "garden")
        .await;
    assert!(again.is_err());
    assert_eq!(deleted("session"), 1);
}

#[tokio::test]
async fn a_child_that_fails_is_an_error_result_for_the_parent_not_its_end() {
    let child = researcher(vec![MockReply::error(ProviderError::Config(
        "no key".into(),
    ))]);
    let mut registry = Registry::new();
    registry.add(child.into_skill("researcher", "Looks things up."));
    let parent = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("p1", "researcher", json!({"goal": "x"}))]),
            MockReply::text("The researcher is down."),
        ]),
        registry,
    );
    let outcome = parent.run("Go.").await.unwrap();
    assert_eq!(
        outcome.final_text.as_deref(),
        Some("The researcher is down.")
    );
    let result = &outcome.transcript[2].content;
    assert!(
        result.contains("the agent `researcher` failed") && result.contains("no key"),
        "{result}"
    );
}

#[tokio::test]
async fn a_chain_deeper_than_the_limit_is_refused_with_the_chain_named() {
    let leaf = researcher(vec![MockReply::text("leaf")]);
    let mut registry = Registry::new();
    registry.add(leaf.into_skill("leaf", "The last one.").max_depth(1));
    let middle = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("m1", "leaf", json!({"goal": "x"}))]),
            MockReply::text("middle done"),
        ]),
        registry,
    );
    let mut registry = Registry::new();
    registry.add(middle.into_skill("middle", "In between."));
    let top = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("t1", "middle", json!({"goal": "x"}))]),
            MockReply::text("top done"),
        ]),
        registry,
    );
    let (seen, sink) = events();
    let outcome = top.event_sink(sink).run("Go.").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("top done"));
    let seen = seen.lock().unwrap();
    let refused = seen.iter().find_map(|e| match e {
        AgentEvent::Nested { event, .. } => match &**event {
            AgentEvent::ToolResult { result, .. } if result.is_error() => {
                Some(result.content().into_owned())
            }
            _ => None,
        },
        _ => None,
    });
    let refused = refused.expect("the middle agent's call to leaf failed");
    assert!(
        refused.contains("`middle`") && refused.contains("limit of 1"),
        "{refused}"
    );
}

/// Wait at the barrier: both calls must be running at once to pass it.
///
/// # Arguments
/// * `who` - Which caller.
#[skill(read_only, register = false)]
async fn meet(ctx: &agent_core::SkillContext, who: String) -> Result<String, SkillError> {
    let barrier = ctx
        .extension::<Arc<tokio::sync::Barrier>>()
        .unwrap()
        .clone();
    tokio::time::timeout(Duration::from_secs(10), barrier.wait())
        .await
        .map_err(|_| SkillError::tool("the other call never came: calls ran one after another"))?;
    Ok(format!("{who} met"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_read_only_children_in_one_turn_run_at_the_same_time() {
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let child = |who: &str| {
        let mut registry = Registry::new();
        registry.add(MeetSkill);
        AgentRuntime::new(
            MockProvider::new([
                MockReply::tool_calls([ToolCall::new("m", "meet", json!({"who": who}))]),
                MockReply::text(format!("{who} is back")),
            ]),
            registry,
        )
        .context(agent_core::SkillContext::new(".").with_extension(barrier.clone()))
    };
    let mut registry = Registry::new();
    registry.add(child("a").into_skill("a", "First."));
    registry.add(child("b").into_skill("b", "Second."));
    assert!(registry.metadata("a").unwrap().is_concurrency_safe);
    let parent = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([
                ToolCall::new("p1", "a", json!({"goal": "go"})),
                ToolCall::new("p2", "b", json!({"goal": "go"})),
            ]),
            MockReply::text("both back"),
        ]),
        registry,
    );
    let outcome = parent.run("Go.").await.unwrap();
    let results: Vec<&str> = outcome.transcript[2..4]
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(results, ["a is back", "b is back"]);
}

/// Waits until the run is cancelled (and says so), or fails after 10 s.
#[skill(read_only, register = false)]
async fn wait_for_cancel(ctx: &agent_core::SkillContext) -> Result<String, SkillError> {
    ctx.extension::<Arc<tokio::sync::Notify>>()
        .unwrap()
        .notify_one();
    tokio::time::timeout(Duration::from_secs(10), ctx.cancellation().cancelled())
        .await
        .map_err(|_| SkillError::tool("never cancelled"))?;
    CANCELLED_INSIDE.store(true, std::sync::atomic::Ordering::SeqCst);
    Err(SkillError::Cancelled)
}

static CANCELLED_INSIDE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[tokio::test]
async fn cancelling_the_parent_cancels_the_child_inside_its_call() {
    let started = Arc::new(tokio::sync::Notify::new());
    let mut registry = Registry::new();
    registry.add(WaitForCancelSkill);
    let child = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("w", "wait_for_cancel", json!({}))]),
            MockReply::text("should not get here"),
        ]),
        registry,
    )
    .context(agent_core::SkillContext::new(".").with_extension(started.clone()));
    let mut registry = Registry::new();
    registry.add(child.into_skill("waiter", "Waits."));
    let token = agent_core::CancellationToken::new();
    let parent = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("p1", "waiter", json!({"goal": "wait"}))]),
            MockReply::text("should not get here either"),
        ]),
        registry,
    )
    .cancellation(token.clone());
    let canceller = tokio::spawn(async move {
        started.notified().await;
        token.cancel();
    });
    let outcome = tokio::time::timeout(Duration::from_secs(20), parent.run("Wait."))
        .await
        .expect("the parent ended")
        .unwrap();
    canceller.await.unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::Cancelled,
        "{:?}",
        outcome.finish
    );
    assert!(CANCELLED_INSIDE.load(std::sync::atomic::Ordering::SeqCst));
}

/// A model that panics: the child agent's run panics inside the parent's call.
struct Panics;

#[agent_core::async_trait]
impl agent_llm::LlmProvider for Panics {
    fn name(&self) -> &str {
        "panics"
    }

    fn stream(&self, _request: &agent_llm::ChatRequest<'_>) -> agent_llm::EventStream {
        panic!("the child's model panicked")
    }

    async fn complete(
        &self,
        _request: &agent_llm::ChatRequest<'_>,
    ) -> Result<agent_llm::ChatResponse, ProviderError> {
        panic!("the child's model panicked")
    }
}

#[tokio::test]
async fn a_child_that_panics_is_an_error_result_for_the_parent() {
    let mut registry = Registry::new();
    registry.add(AgentRuntime::new(Panics, Registry::new()).into_skill("fragile", "Breaks."));
    let parent = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("p1", "fragile", json!({"goal": "x"}))]),
            MockReply::text("It broke; carrying on."),
        ]),
        registry,
    );
    let outcome = parent.run("Go.").await.unwrap();
    assert_eq!(
        outcome.final_text.as_deref(),
        Some("It broke; carrying on.")
    );
    let result = &outcome.transcript[2].content;
    assert!(result.contains("panicked"), "{result}");
}

/// A model that always asks `again` for more, until it reads a result: each level of a cycle
/// calls the next.
struct AlwaysAgain(Arc<std::sync::atomic::AtomicUsize>);

#[agent_core::async_trait]
impl agent_llm::LlmProvider for AlwaysAgain {
    fn name(&self) -> &str {
        "again"
    }

    fn stream(&self, _request: &agent_llm::ChatRequest<'_>) -> agent_llm::EventStream {
        unreachable!("not streaming")
    }

    async fn complete(
        &self,
        request: &agent_llm::ChatRequest<'_>,
    ) -> Result<agent_llm::ChatResponse, ProviderError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let message = match request.messages.last().map(|m| m.role) {
            Some(agent_llm::Role::Tool) => agent_llm::Message::assistant("unwound"),
            _ => agent_llm::Message::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("a1", "again", json!({"goal": "deeper"}))],
            ),
        };
        Ok(agent_llm::ChatResponse {
            message,
            stop_reason: agent_llm::StopReason::EndTurn,
            provider_stop_reason: None,
            usage: Usage::default(),
            truncated_tool_calls: Vec::new(),
            model: None,
            id: None,
            provider: None,
        })
    }
}

/// A skill that calls the agent set into it after the agent was built: the one way to offer an
/// agent to itself.
struct Again(Arc<std::sync::OnceLock<agent_runtime::SubAgent>>);

#[agent_core::async_trait]
impl agent_core::Skill for Again {
    type Input = agent_runtime::Goal;

    fn name(&self) -> &str {
        "again"
    }

    fn description(&self) -> &str {
        "Ask the same agent again."
    }

    async fn run(
        &self,
        input: agent_runtime::Goal,
        ctx: &agent_core::SkillContext,
    ) -> Result<agent_core::SkillOutput, SkillError> {
        let agent = self.0.get().expect("set after the runtime was built");
        agent_core::Skill::run(agent, input, ctx).await
    }
}

#[tokio::test]
async fn an_agent_offered_to_itself_stops_at_the_depth_limit() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let slot = Arc::new(std::sync::OnceLock::new());
    let mut registry = Registry::new();
    registry.add(Again(slot.clone()));
    let runtime = AgentRuntime::new(AlwaysAgain(calls.clone()), registry);
    slot.set(
        runtime
            .clone()
            .into_skill("again", "The same agent.")
            .max_depth(5),
    )
    .unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(20), runtime.run("Go deep."))
        .await
        .expect("the cycle ended")
        .unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("unwound"));
    // The top run and five nested ones each asked twice; the sixth level was refused.
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 12);
    assert_eq!(outcome.agents.len(), 5, "{:?}", outcome.agents.keys());
}
