//! Model calls a skill makes on the run's behalf (`agent_llm::report_model_use`): counted in the
//! run's usage, cost, per-agent record and `agent_steps`, seen by the token budget, priced at the
//! run's prices (unpriced, never $0, when the table has no price), and passed up from a nested
//! agent's run to its parent's.

use agent_core::{Registry, SkillContext, SkillError, ToolCall, skill};
use agent_llm::{
    Cost, MockProvider, MockReply, ModelPrice, ModelUseReporter, PriceTable, report_model_use,
};
use agent_runtime::{AgentRuntime, Budget, FinishReason};
use serde_json::json;

use super::usage;

/// Summarize a text with a model of the skill's own (here: says it used 1,000 + 200 tokens of
/// `wren-1`, or of `model` when given).
///
/// # Arguments
/// * `text` - The text.
/// * `model` - The model the skill says it asked.
#[skill(read_only, register = false)]
async fn summarize(
    ctx: &SkillContext,
    text: String,
    model: Option<String>,
) -> Result<String, SkillError> {
    let used = usage(1000, 200);
    let model = model.unwrap_or_else(|| "wren-1".to_owned());
    let cost = ctx
        .extension::<ModelUseReporter>()
        .map_or(Cost::UNPRICED, |r| r.cost("mock", Some(&model), &used));
    let counted = report_model_use(ctx, "summarizer", used, cost);
    Ok(format!(
        "{} words; counted: {counted}",
        text.split(' ').count()
    ))
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(SummarizeSkill);
    registry
}

fn summarizing(arguments: serde_json::Value) -> MockProvider {
    MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "summarize", arguments)])
            .with_usage(usage(100, 10)),
        MockReply::text("Summarized.").with_usage(usage(50, 5)),
    ])
    .with_model("wren-1")
}

/// $2 per million input tokens, $10 per million output tokens.
fn table() -> PriceTable {
    PriceTable::empty().with_model("wren-1", ModelPrice::per_million(2.0, 10.0))
}

#[tokio::test]
async fn a_reported_model_call_counts_in_the_runs_usage_cost_agents_and_steps() {
    let outcome = AgentRuntime::new(summarizing(json!({"text": "a b c"})), registry())
        .prices(table())
        .run("Summarize a b c.")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(outcome.transcript[2].content, "3 words; counted: true");
    // The run's own two calls (150 + 15) and the skill's (1,000 + 200).
    assert_eq!(outcome.usage, usage(1150, 215));
    assert_eq!(outcome.agents.get("summarizer"), Some(&usage(1000, 200)));
    assert_eq!(outcome.steps, 2);
    assert_eq!(outcome.agent_steps, 1, "the skill's model call is one step");
    // Priced at the run's table: 1,150 input at $2/M and 215 output at $10/M.
    assert!(outcome.cost.is_complete(), "{:?}", outcome.cost);
    let dollars = outcome.cost.total().as_dollars();
    assert!(
        (dollars - (1150.0 * 2.0 + 215.0 * 10.0) / 1e6).abs() < 1e-9,
        "{dollars}"
    );
}

#[tokio::test]
async fn a_reported_call_the_table_cannot_price_is_unpriced_not_free() {
    let outcome = AgentRuntime::new(
        summarizing(json!({"text": "a b", "model": "nobody-knows-9"})),
        registry(),
    )
    .prices(table())
    .run("Summarize a b.")
    .await
    .unwrap();
    assert_eq!(outcome.cost.unpriced_calls, 1, "{:?}", outcome.cost);
    // Only the run's own calls are in the dollars.
    let dollars = outcome.cost.total().as_dollars();
    assert!(
        (dollars - (150.0 * 2.0 + 15.0 * 10.0) / 1e6).abs() < 1e-9,
        "{dollars}"
    );
}

#[tokio::test]
async fn the_token_budget_counts_what_a_skill_reported() {
    // The run's own first call uses 110 tokens, under the budget of 500; the skill's 1,200 put
    // it over, so the run ends before its second call.
    let outcome = AgentRuntime::new(summarizing(json!({"text": "a"})), registry())
        .max_tokens_total(500)
        .run("Summarize a.")
        .await
        .unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::BudgetExceeded(Budget::Tokens {
            limit: 500,
            used: 1310
        })
    );
    assert_eq!(outcome.steps, 1);
}

#[tokio::test]
async fn a_nested_agents_skill_reports_to_its_run_which_passes_it_up() {
    let child = AgentRuntime::new(summarizing(json!({"text": "a b c d"})), registry());
    let mut registry = Registry::new();
    registry.add(child.into_skill("writer", "Writes summaries."));
    let parent = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("p1", "writer", json!({"goal": "Summarize."}))])
                .with_usage(usage(10, 1)),
            MockReply::text("Done.").with_usage(usage(20, 2)),
        ]),
        registry,
    );
    let outcome = parent.run("Have it summarized.").await.unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    // Parent 30 + 3, child 150 + 15, the child's skill 1,000 + 200.
    assert_eq!(outcome.usage, usage(1180, 218));
    assert_eq!(outcome.agents.get("writer"), Some(&usage(150, 15)));
    assert_eq!(
        outcome.agents.get("writer › summarizer"),
        Some(&usage(1000, 200))
    );
    // The child's two calls and its skill's one.
    assert_eq!(outcome.agent_steps, 3);
}
