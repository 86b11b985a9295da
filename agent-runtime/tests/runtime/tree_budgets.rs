//! A budget shared by a tree of agents (`AgentRuntime::tree_budget`): it stops a child in the
//! middle of its run and then its parent, children racing for the last steps never take more
//! than the limit together, spent tokens stop the next call anywhere in the tree, and a tree that
//! paused goes on counting from where it was, in another runtime.

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply, Usage};
use agent_runtime::{AgentRuntime, Budget, Decision, FinishReason, RunState, TreeBudget};
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

/// A child that would look words up for `turns` model calls (a new word each time, so no guard
/// stops it) before it answers.
fn busy_child(turns: usize, each: Usage) -> AgentRuntime {
    let mut replies: Vec<MockReply> = (0..turns)
        .map(|i| {
            MockReply::tool_calls([ToolCall::new(
                format!("c{i}"),
                "lookup",
                json!({"word": format!("w{i}")}),
            )])
            .with_usage(each)
        })
        .collect();
    replies.push(MockReply::text("done looking"));
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    AgentRuntime::new(MockProvider::new(replies), registry).max_steps(100)
}

/// A parent whose model calls each child in `names` once, in one turn, then would answer.
fn parent_of(registry: Registry, names: &[&str], each: Usage) -> AgentRuntime {
    let calls: Vec<ToolCall> = names
        .iter()
        .enumerate()
        .map(|(i, name)| ToolCall::new(format!("p{i}"), *name, json!({"goal": "look"})))
        .collect();
    AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls(calls).with_usage(each),
            MockReply::text("all looked up"),
        ]),
        registry,
    )
}

fn tool_results(outcome: &agent_runtime::RunOutcome) -> Vec<String> {
    outcome
        .transcript
        .iter()
        .filter(|m| m.role == agent_llm::Role::Tool)
        .map(|m| m.content.clone())
        .collect()
}

#[tokio::test]
async fn a_tree_budget_stops_the_child_mid_run_and_then_its_parent() {
    let mut registry = Registry::new();
    registry.add(busy_child(20, Usage::default()).into_skill("looker", "Looks words up."));
    let parent =
        parent_of(registry, &["looker"], Usage::default()).tree_budget(TreeBudget::new().steps(4));
    let outcome = parent.run("Look everything up.").await.unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::BudgetExceeded(Budget::TreeSteps { limit: 4 })
    );
    // The parent's first call, then three of the child's: its own limit (100) never came near.
    assert_eq!((outcome.steps, outcome.agent_steps), (1, 3));
    let results = tool_results(&outcome);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("looker") && results[0].contains("TreeSteps"),
        "the parent's model reads why its child stopped: {}",
        results[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_racing_for_the_last_steps_never_take_more_than_the_limit() {
    for limit in [2, 7, 10, 33] {
        let mut registry = Registry::new();
        let names = ["a", "b", "c", "d"];
        for name in names {
            registry.add(busy_child(40, Usage::default()).into_skill(name, "Looks words up."));
        }
        assert!(registry.metadata("a").unwrap().is_concurrency_safe);
        let parent = parent_of(registry, &names, Usage::default())
            .tree_budget(TreeBudget::new().steps(limit));
        let outcome = parent.run("Look everything up.").await.unwrap();
        assert_eq!(
            outcome.finish,
            FinishReason::BudgetExceeded(Budget::TreeSteps { limit })
        );
        assert_eq!(
            outcome.steps + outcome.agent_steps,
            limit,
            "model calls of the whole tree with a limit of {limit}"
        );
    }
}

#[tokio::test]
async fn spent_tokens_stop_the_next_model_call_anywhere_in_the_tree() {
    let mut registry = Registry::new();
    registry.add(busy_child(20, usage(20, 10)).into_skill("looker", "Looks words up."));
    let parent =
        parent_of(registry, &["looker"], usage(30, 0)).tree_budget(TreeBudget::new().tokens(100));
    let outcome = parent.run("Look everything up.").await.unwrap();
    // 30 (the parent), then 30 a call for the child: its third answer brings the tree to 120,
    // and its fourth call is refused.
    assert_eq!((outcome.steps, outcome.agent_steps), (1, 3));
    assert_eq!(
        outcome.finish,
        FinishReason::BudgetExceeded(Budget::TreeTokens {
            limit: 100,
            used: 120
        })
    );
    assert_eq!(outcome.usage, usage(90, 30));
    let results = tool_results(&outcome);
    assert!(results[0].contains("TreeTokens"), "{}", results[0]);
}

/// Delete a branch.
///
/// # Arguments
/// * `name` - The branch.
#[skill(destructive, register = false)]
async fn delete_branch(name: String) -> Result<String, SkillError> {
    Ok(format!("deleted {name}"))
}

/// A coordinator that calls a gardener, which deletes a branch (it waits for a person) and then
/// would look two words up before it answers. `resumed`: the models' scripts from the decision on,
/// as another process would have them.
fn gated_tree(resumed: bool) -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(DeleteBranchSkill);
    registry.add(LookupSkill);
    let gardener = if resumed {
        vec![
            MockReply::tool_calls([ToolCall::new("c2", "lookup", json!({"word": "a"}))]),
            MockReply::tool_calls([ToolCall::new("c3", "lookup", json!({"word": "b"}))]),
            MockReply::text("pruned"),
        ]
    } else {
        vec![MockReply::tool_calls([ToolCall::new(
            "c1",
            "delete_branch",
            json!({"name": "old"}),
        )])]
    };
    let gardener = AgentRuntime::new(MockProvider::new(gardener), registry);
    let mut registry = Registry::new();
    registry.add(gardener.into_skill("gardener", "Tends the branches."));
    let coordinator = if resumed {
        vec![MockReply::text("tidy")]
    } else {
        vec![MockReply::tool_calls([ToolCall::new(
            "p0",
            "gardener",
            json!({"goal": "prune"}),
        )])]
    };
    AgentRuntime::new(MockProvider::new(coordinator), registry)
}

#[tokio::test]
async fn a_paused_tree_goes_on_counting_from_where_it_was() {
    let budget = TreeBudget::new().steps(4);
    let paused = gated_tree(false)
        .tree_budget(budget)
        .run("Tidy.")
        .await
        .unwrap();
    assert!(
        matches!(paused.finish, FinishReason::AwaitingApproval { .. }),
        "{:?}",
        paused.finish
    );
    // Kept as JSON: the coordinator's call and the gardener's first are in it.
    let json = serde_json::to_string(&paused.state.unwrap()).unwrap();
    let state: RunState = serde_json::from_str(&json).unwrap();
    assert_eq!((state.steps, state.agent_steps), (1, 1));

    // Another runtime with the same budget: two steps are left, for the gardener's next two
    // calls; its third, and then the coordinator's, are refused.
    let done = gated_tree(true)
        .tree_budget(budget)
        .continue_paused(state, [("p0/c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        done.finish,
        FinishReason::BudgetExceeded(Budget::TreeSteps { limit: 4 })
    );
    assert_eq!((done.steps, done.agent_steps), (1, 3));
    let results = tool_results(&done);
    assert!(results[0].contains("TreeSteps"), "{}", results[0]);

    // Without a tree budget the same state runs to its end: the budget, not the script, stopped it.
    let state: RunState = serde_json::from_str(&json).unwrap();
    let free = gated_tree(true)
        .continue_paused(state, [("p0/c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(free.finish, FinishReason::NoMoreToolCalls);
    assert_eq!((free.steps, free.agent_steps), (2, 4));
}
