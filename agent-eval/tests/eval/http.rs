//! Evals over real HTTP: the agent and the judge are OpenAI-compatible servers on loopback
//! (test-support's replay server), so requests, usage and prices go through the real provider.

use std::sync::Arc;

use agent_core::Registry;
use agent_eval::{Case, Check, Dataset, Eval, Judge};
use agent_llm::{LlmProvider, ModelPrice, OpenAiProvider, PriceTable};
use agent_runtime::AgentRuntime;
use serde_json::{Value, json};
use test_support::server::{Reply, Server};

fn provider(server: &Server) -> OpenAiProvider {
    OpenAiProvider::new("sk-test", "gpt-test").with_base_url(format!("{}/v1", server.url))
}

fn answer(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "c1", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
        }),
    )
}

fn prices() -> PriceTable {
    PriceTable::empty().with_model("gpt-test", ModelPrice::per_million(2.0, 8.0))
}

#[tokio::test]
async fn an_eval_over_http_counts_tokens_prices_calls_and_asks_a_native_judge() {
    let agent = Server::start([answer("Paris"), answer("Paris"), answer("Lyon")]).await;
    let judge = Server::start([
        answer(r#"{"pass": true, "reason": "Right."}"#),
        answer(r#"{"pass": true, "reason": "Right."}"#),
        answer(r#"{"pass": false, "reason": "Wrong city."}"#),
    ])
    .await;
    let dataset = Dataset::new("http").case(
        Case::new("capital", "The capital of France?")
            .repeat(3)
            .check(Check::rubric("Names the capital of France.")),
    );
    let shared: Arc<dyn LlmProvider> = Arc::new(provider(&agent));
    let report = Eval::new(dataset)
        .concurrency(1)
        .judge(Judge::new(provider(&judge)).prices(prices()))
        .run(|_| {
            AgentRuntime::from_shared(shared.clone(), Arc::new(Registry::new())).prices(prices())
        })
        .await
        .unwrap();

    let summary = &report.case("capital").unwrap().summary;
    assert_eq!((summary.passed, summary.attempts), (2, 3));
    assert_eq!(summary.usage.input_tokens, 60);
    assert_eq!(summary.usage.output_tokens, 30);
    // Each call: 20 × $2/M + 10 × $8/M = $0.00012; three of them.
    assert_eq!(summary.cost.to_string(), "$0.00036");
    assert_eq!(summary.judge_usage.total(), 90);
    assert_eq!(summary.judge_cost.to_string(), "$0.00036");
    assert_eq!(
        report.case("capital").unwrap().attempts[2].checks[0]
            .reason
            .as_deref(),
        Some("Wrong city.")
    );

    // The judge was asked for the verdict as structured output, strict.
    let asked: Value = judge.received()[0].json();
    assert_eq!(asked["response_format"]["type"], "json_schema");
    assert_eq!(
        asked["response_format"]["json_schema"]["strict"],
        json!(true)
    );
    let prompt = asked["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(prompt.contains("<answer>\nParis\n</answer>"), "{prompt}");
    assert_eq!(agent.received().len(), 3);
    assert_eq!(agent.remaining(), 0);
}

#[tokio::test]
async fn an_http_error_fails_one_attempt_and_the_others_run() {
    let agent = Server::start([
        Reply::json(
            400,
            &json!({"error": {"type": "invalid_request_error", "message": "model not allowed"}}),
        ),
        answer("Paris"),
    ])
    .await;
    let dataset = Dataset::new("http").case(
        Case::new("capital", "The capital of France?")
            .repeat(2)
            .check(Check::equals("Paris")),
    );
    let shared: Arc<dyn LlmProvider> = Arc::new(provider(&agent));
    let report = Eval::new(dataset)
        .concurrency(1)
        .run(|_| AgentRuntime::from_shared(shared.clone(), Arc::new(Registry::new())))
        .await
        .unwrap();
    let attempts = &report.case("capital").unwrap().attempts;
    let error = attempts[0].error.as_deref().unwrap();
    assert!(
        error.contains("400") && error.contains("model not allowed"),
        "{error}"
    );
    assert!(attempts[1].passed, "{:?}", attempts[1]);
    // The model has no price in the built-in table: unpriced, and said so.
    assert_eq!(report.overall.cost.unpriced_calls, 1);
    assert!(report.table().contains("unpriced (1 call)"), "{report}");
}

#[tokio::test]
async fn attempts_run_at_once_over_http_and_all_are_counted() {
    let agent = Server::start((0..8).map(|_| answer("ok"))).await;
    let dataset = Dataset::new("wide").case(
        Case::new("a", "Say ok.")
            .repeat(8)
            .check(Check::equals("ok")),
    );
    let shared: Arc<dyn LlmProvider> = Arc::new(provider(&agent));
    let report = Eval::new(dataset)
        .concurrency(4)
        .run(|_| AgentRuntime::from_shared(shared.clone(), Arc::new(Registry::new())))
        .await
        .unwrap();
    assert_eq!(report.overall.passed, 8, "{report}");
    assert_eq!(report.overall.usage.total(), 240);
    assert_eq!(agent.received().len(), 8);
}
