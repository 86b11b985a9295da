//! What a run costs (`AgentRuntime::prices`, `RunOutcome::cost`, `AgentEvent::Usage`) and the
//! money budget (`AgentRuntime::max_cost`): calls priced part by part, models without a price
//! counted as unpriced (never as $0), a budget that stops the run before a call it knows it cannot
//! pay for and right after one that passed it, sub-agents' costs added to their parent's, and a
//! paused run's spending carried into the process that resumes it.

use std::sync::{Arc, Mutex};

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{Cost, MockProvider, MockReply, ModelPrice, PriceTable, Role, Usage, Usd};
use agent_runtime::{
    AgentError, AgentEvent, AgentRuntime, Budget, ConfigError, Decision, FinishReason, RunState,
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

/// Ring a bell (it waits for a person).
#[skill(destructive, register = false)]
async fn ring() -> Result<String, SkillError> {
    Ok("rung".into())
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    registry.add(RingSkill);
    registry
}

/// $2 per million input tokens, $10 per million output tokens, cache reads at $0.20.
fn table() -> PriceTable {
    PriceTable::empty().with_model("wren-1", ModelPrice::per_million(2.0, 10.0).cache_read(0.2))
}

/// A model that looks a new word up on each of `turns` calls, each call using `each`, then
/// answers.
fn looker(turns: usize, each: Usage) -> MockProvider {
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
    replies.push(MockReply::text("done").with_usage(each));
    MockProvider::new(replies).with_model("wren-1")
}

#[derive(Clone, Default)]
struct Costs(Arc<Mutex<Vec<(Cost, Cost)>>>);

impl agent_runtime::EventSink for Costs {
    fn send(&self, event: &AgentEvent) {
        if let AgentEvent::Usage {
            cost, total_cost, ..
        } = event
        {
            self.0.lock().unwrap().push((*cost, *total_cost));
        }
    }
}

#[tokio::test]
async fn each_call_is_priced_part_by_part_and_the_run_adds_them_up() {
    let cached = Usage {
        input_tokens: 1_000,
        output_tokens: 100,
        cache_read_tokens: 10_000,
        ..Usage::default()
    };
    let costs = Costs::default();
    let outcome = AgentRuntime::new(looker(2, cached), registry())
        .prices(table())
        .event_sink(costs.clone())
        .run("Look up two words.")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    // Per call: 1000 × $2/M + 100 × $10/M + 10 000 × $0.20/M = $0.002 + $0.001 + $0.002.
    let one = Cost {
        input: Usd::dollars(0.002),
        output: Usd::dollars(0.001),
        cache_read: Usd::dollars(0.002),
        ..Cost::default()
    };
    let seen = costs.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert!(seen.iter().all(|(cost, _)| *cost == one), "{seen:?}");
    assert_eq!(seen[2].1.total(), Usd::dollars(0.015));
    assert_eq!(outcome.cost, seen[2].1);
    assert!(outcome.cost.is_complete());
    assert_eq!(outcome.cost.to_string(), "$0.015");
}

#[tokio::test]
async fn a_model_without_a_price_is_unpriced_not_free() {
    let costs = Costs::default();
    let outcome = AgentRuntime::new(
        looker(1, usage(500, 50)).with_model("no-such-model-x9"),
        registry(),
    )
    .prices(table())
    .event_sink(costs.clone())
    .run("Look a word up.")
    .await
    .unwrap();
    assert_eq!(outcome.cost.unpriced_calls, 2);
    assert_eq!(outcome.cost.total(), Usd::ZERO);
    assert!(!outcome.cost.is_complete());
    assert_eq!(outcome.cost.to_string(), "unpriced (2 calls)");
    assert!(
        costs
            .0
            .lock()
            .unwrap()
            .iter()
            .all(|(c, _)| *c == Cost::UNPRICED)
    );
    // A provider that names no model at all is unpriced too.
    let outcome = AgentRuntime::new(MockProvider::new([MockReply::text("hi")]), registry())
        .run("Hi.")
        .await
        .unwrap();
    assert_eq!(outcome.cost, Cost::UNPRICED);
}

#[tokio::test]
async fn the_money_budget_stops_before_a_call_it_cannot_pay_for() {
    // Each call: 100 000 in × $2/M + 1000 out × $10/M = $0.21. After two calls ($0.42) the next
    // repeats at least 100 000 input tokens (at least $0.02 at the cache rate): $0.44 passes a
    // $0.43 limit, so the third call is never made.
    let mock = looker(10, usage(100_000, 1_000));
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .prices(table())
        .max_cost(Usd::dollars(0.43))
        .run("Look everything up.")
        .await
        .unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::BudgetExceeded(Budget::Cost {
            limit: Usd::dollars(0.43),
            spent: Usd::dollars(0.42),
            next_at_least: Usd::dollars(0.02),
        })
    );
    assert_eq!(mock.requests().len(), 2);
    assert!(outcome.cost.total() <= Usd::dollars(0.43));
}

#[tokio::test]
async fn a_call_that_passed_the_budget_has_its_tool_calls_refused() {
    // The first call is small; the second is far bigger than the first let anyone know.
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c0", "lookup", json!({"word": "a"}))])
            .with_usage(usage(10, 10)),
        MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({"word": "b"}))])
            .with_usage(usage(1_000_000, 0)),
        MockReply::text("never asked"),
    ])
    .with_model("wren-1");
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .prices(table())
        .max_cost(Usd::dollars(1.0))
        .run("Look up two words.")
        .await
        .unwrap();
    let FinishReason::BudgetExceeded(Budget::Cost { spent, .. }) = outcome.finish else {
        panic!("{:?}", outcome.finish);
    };
    assert!(spent > Usd::dollars(1.0), "{spent}");
    assert_eq!(mock.requests().len(), 2);
    let answers: Vec<&str> = outcome
        .transcript
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert!(answers[0].contains("a small bird"), "{answers:?}");
    assert!(answers[1].contains("not run"), "{answers:?}");
}

#[tokio::test]
async fn a_money_budget_that_cannot_be_counted_is_a_configuration_error() {
    use agent_llm::LlmProvider as _;
    for mock in [
        MockProvider::new([MockReply::text("hi")]),
        MockProvider::new([MockReply::text("hi")]).with_model("no-such-model-x9"),
    ] {
        let error = AgentRuntime::new(mock.clone(), registry())
            .prices(table())
            .max_cost(Usd::dollars(1.0))
            .run("Hi.")
            .await
            .unwrap_err();
        match mock.model() {
            None => assert!(
                matches!(
                    &error,
                    AgentError::Config(ConfigError::CostBudgetWithoutModel { provider, .. })
                        if *provider == mock.name()
                ),
                "{error:?}"
            ),
            Some(named) => assert!(
                matches!(
                    &error,
                    AgentError::Config(ConfigError::CostBudgetWithoutPrice { model, .. })
                        if model == named
                ),
                "{error:?}"
            ),
        }
        assert!(error.to_string().contains("max_cost"), "{error}");
        assert!(mock.requests().is_empty());
    }
}

#[tokio::test]
async fn a_sub_agents_cost_is_its_parents_too() {
    let mut children = Registry::new();
    let child = AgentRuntime::new(looker(2, usage(1_000, 100)), registry()).prices(table());
    children.add(child.into_skill("looker", "Looks words up."));
    let parent = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("p0", "looker", json!({"goal": "look"}))])
            .with_usage(usage(2_000, 0)),
        MockReply::text("looked").with_usage(usage(2_000, 0)),
    ])
    .with_model("wren-1");
    let outcome = AgentRuntime::new(parent, children)
        .prices(table())
        .run("Have it looked up.")
        .await
        .unwrap();
    // Child: 3 calls × ($0.002 + $0.001); parent: 2 calls × $0.004.
    assert_eq!(outcome.cost.total(), Usd::dollars(0.017));
    assert_eq!(outcome.usage.input_tokens, 7_000);
}

#[tokio::test]
async fn a_paused_run_carries_what_it_spent_into_the_next_process() {
    let first =
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("c0", "ring", json!({}))])
                .with_usage(usage(100_000, 0)),
        ])
        .with_model("wren-1");
    let paused = AgentRuntime::new(first, registry())
        .prices(table())
        .max_cost(Usd::dollars(0.3))
        .run("Ring.")
        .await
        .unwrap();
    assert!(matches!(
        paused.finish,
        FinishReason::AwaitingApproval { .. }
    ));
    let json = serde_json::to_string(&paused.state.unwrap()).unwrap();
    let state: RunState = serde_json::from_str(&json).unwrap();
    assert_eq!(state.cost.total(), Usd::dollars(0.2));

    // The next process has $0.10 left: the next call repeats ≥100 000 input tokens (≥ $0.02
    // cached), so it is made; the one after would pass the limit and is not.
    let second = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({"word": "a"}))])
            .with_usage(usage(100_000, 0)),
        MockReply::text("never asked"),
    ])
    .with_model("wren-1");
    let done = AgentRuntime::new(second.clone(), registry())
        .prices(table())
        .max_cost(Usd::dollars(0.3))
        .continue_paused(state, [("c0", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(second.requests().len(), 1);
    let FinishReason::BudgetExceeded(Budget::Cost { spent, .. }) = done.finish else {
        panic!("{:?}", done.finish);
    };
    assert_eq!(spent, Usd::dollars(0.4));
    assert_eq!(done.cost.total(), Usd::dollars(0.4));
}

#[test]
fn a_malformed_price_table_names_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prices.json");
    std::fs::write(
        &path,
        "[\n  {\"id\": \"acme\",\n   \"models\": [ {\"id\": 3} ]}\n]\n",
    )
    .unwrap();
    let error = PriceTable::from_file(&path).unwrap_err().to_string();
    assert!(error.contains("prices.json:3"), "{error}");
    let missing = PriceTable::from_file(dir.path().join("none.json"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("none.json"), "{missing}");
}
