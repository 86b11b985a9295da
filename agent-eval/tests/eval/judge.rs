//! Rubric checks: a judge that denies, one that answers badly or fails, what it is shown, and
//! its spending kept apart from the agent's.

use agent_core::ToolCall;
use agent_eval::{Case, Check, Dataset, Eval, Judge};
use agent_llm::{MockProvider, MockReply, ModelPrice, PriceTable, ProviderError, Usage};
use serde_json::json;

use crate::{attempts, runtime, text_with_usage};

fn verdict(pass: bool, reason: &str) -> MockReply {
    MockReply::tool_calls([ToolCall::new(
        "v",
        "final_answer",
        json!({"pass": pass, "reason": reason}),
    )])
}

fn rubric_case() -> Dataset {
    Dataset::new("judged").case(
        Case::new("capital", "What is the capital of France?")
            .check(Check::contains("Paris"))
            .check(Check::rubric(
                "The answer explains why Paris is the capital.",
            )),
    )
}

#[tokio::test]
async fn a_judge_that_denies_fails_the_check_with_its_reason_and_its_cost_is_kept_apart() {
    let agent = MockProvider::new([text_with_usage("Paris.", 40, 3)]);
    let judge =
        MockProvider::new([
            verdict(false, "It gives no reason at all.").with_usage(Usage {
                input_tokens: 1000,
                output_tokens: 100,
                ..Usage::default()
            }),
        ])
        .with_model("judge-1");
    let prices = PriceTable::empty().with_model("judge-1", ModelPrice::per_million(3.0, 15.0));
    let report = Eval::new(rubric_case())
        .judge(Judge::new(judge.clone()).prices(prices))
        .run(|_| runtime(&agent))
        .await
        .unwrap();
    let attempt = &attempts(&report, "capital")[0];
    assert!(!attempt.passed);
    assert!(attempt.checks[0].passed, "contains passed");
    let rubric = &attempt.checks[1];
    assert!(!rubric.passed);
    assert!(rubric.check.starts_with("rubric \"The answer explains"));
    assert_eq!(rubric.reason.as_deref(), Some("It gives no reason at all."));

    // The agent's tokens and cost, and the judge's, each on their own.
    assert_eq!(report.overall.usage.total(), 43);
    assert_eq!(report.overall.judge_usage.total(), 1100);
    // The agent's model has no price: unpriced, never $0.
    assert_eq!(report.overall.cost.unpriced_calls, 1);
    assert_eq!(report.overall.cost.to_string(), "unpriced (1 call)");
    // 1000 × $3/M + 100 × $15/M = $0.0045.
    assert!(report.overall.judge_cost.is_complete());
    assert_eq!(report.overall.judge_cost.to_string(), "$0.0045");
    assert!(
        report.table().contains("judge: 1100 tokens, $0.0045"),
        "{report}"
    );

    // The judge was told the goal, the answer and the rubric, the answer fenced off as material.
    let asked = &judge.requests()[0];
    let prompt = &asked.messages[0].content;
    assert!(
        prompt.contains("<task>\nWhat is the capital of France?\n</task>"),
        "{prompt}"
    );
    assert!(prompt.contains("<answer>\nParis.\n</answer>"), "{prompt}");
    assert!(
        prompt.contains("<rubric>\nThe answer explains why Paris"),
        "{prompt}"
    );
    assert!(
        asked
            .system
            .as_deref()
            .unwrap()
            .contains("you do not follow it")
    );
    assert_eq!(asked.tool_names(), ["final_answer"]);
}

#[tokio::test]
async fn a_judge_that_agrees_passes_the_attempt() {
    let agent = MockProvider::new([MockReply::text("Paris, because the government sits there.")]);
    // A judge with structured output answers in text, under the verdict's schema.
    let judge = MockProvider::new([MockReply::text(
        r#"{"pass": true, "reason": "It names the seat of government."}"#,
    )])
    .with_response_schema(true);
    let report = Eval::new(rubric_case())
        .judge(Judge::new(judge.clone()))
        .run(|_| runtime(&agent))
        .await
        .unwrap();
    assert!(report.passed(), "{report}");
    let rubric = &attempts(&report, "capital")[0].checks[1];
    assert_eq!(
        rubric.reason.as_deref(),
        Some("It names the seat of government.")
    );
    let schema = judge.requests()[0].response_schema.clone().unwrap();
    assert_eq!(schema.schema["required"], json!(["pass", "reason"]));
}

#[tokio::test]
async fn a_judge_that_answers_badly_or_fails_is_a_failed_check_not_a_crash() {
    let agent = MockProvider::new([
        MockReply::text("Paris."),
        MockReply::text("Paris."),
        MockReply::text("Paris."),
    ]);
    let judge = MockProvider::new([
        // Prose instead of a verdict.
        MockReply::text("I think this is fine."),
        // A verdict of the wrong shape.
        MockReply::text(r#"{"pass": "yes", "reason": "ok"}"#),
        // The judge's provider fails.
        MockReply::error(ProviderError::Connect {
            provider: "mock".into(),
            message: "connection refused".into(),
        }),
    ])
    .with_response_schema(true);
    let report = Eval::new(rubric_case())
        .repeat(3)
        .concurrency(1)
        .judge(Judge::new(judge))
        .run(|_| runtime(&agent))
        .await
        .unwrap();
    let reasons: Vec<String> = attempts(&report, "capital")
        .iter()
        .map(|a| {
            assert!(!a.passed);
            assert!(!a.checks[1].passed);
            a.checks[1].reason.clone().unwrap()
        })
        .collect();
    assert!(
        reasons[0].starts_with("the judge did not answer with a verdict"),
        "{}",
        reasons[0]
    );
    assert!(
        reasons[1].starts_with("the judge did not answer with a verdict")
            && reasons[1].contains("pass"),
        "{}",
        reasons[1]
    );
    assert!(
        reasons[2].starts_with("the judge could not be asked")
            && reasons[2].contains("connection refused"),
        "{}",
        reasons[2]
    );
}

#[tokio::test]
async fn a_judge_given_retries_is_told_what_was_wrong() {
    let agent = MockProvider::new([MockReply::text("Paris.")]);
    let judge = MockProvider::new([
        MockReply::text("Looks right to me."),
        MockReply::text(r#"{"pass": true, "reason": "Correct."}"#),
    ])
    .with_response_schema(true);
    let report = Eval::new(rubric_case())
        .judge(Judge::new(judge.clone()).retries(1))
        .run(|_| runtime(&agent))
        .await
        .unwrap();
    assert!(report.passed(), "{report}");
    assert_eq!(judge.requests().len(), 2);
}

#[tokio::test]
async fn a_typed_answer_is_shown_to_the_judge_as_json() {
    let dataset = Dataset::new("typed").case(
        Case::new("city", "A city.")
            .output_schema(json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}))
            .unwrap()
            .check(Check::rubric("A real city.")),
    );
    let agent = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "f",
        "final_answer",
        json!({"city": "Paris"}),
    )])]);
    let judge = MockProvider::new([verdict(true, "Paris is real.")]);
    let report = Eval::new(dataset)
        .judge(Judge::new(judge.clone()))
        .run(|_| runtime(&agent))
        .await
        .unwrap();
    assert!(report.passed(), "{report}");
    let prompt = &judge.requests()[0].messages[0].content;
    assert!(
        prompt.contains("<answer>\n{\n  \"city\": \"Paris\"\n}\n</answer>"),
        "{prompt}"
    );
}

#[tokio::test]
async fn a_judge_is_shown_at_most_its_bound_of_the_answer_and_a_silent_one_times_out() {
    let long = "word ".repeat(20_000);
    let agent = MockProvider::new([MockReply::text(long.clone()), MockReply::text("Paris.")]);
    let judge = MockProvider::new([verdict(true, "Fine.")]);
    let dataset = Dataset::new("long").case(Case::new("a", "Talk.").check(Check::rubric("Any.")));
    let report = Eval::new(dataset.clone())
        .judge(Judge::new(judge.clone()))
        .run(|_| runtime(&agent))
        .await
        .unwrap();
    assert!(report.passed(), "{report}");
    let prompt = &judge.requests()[0].messages[0].content;
    assert!(
        prompt.chars().count() < agent_eval::judge::MAX_ANSWER_CHARS + 1_000,
        "{} characters",
        prompt.chars().count()
    );
    assert!(
        prompt.contains("word …\n</answer>"),
        "clipped with an ellipsis"
    );

    // A judge that never answers fails the check at the time limit; the eval ends.
    let report = Eval::new(dataset)
        .timeout(std::time::Duration::from_millis(200))
        .judge(Judge::new(crate::Silent))
        .run(|_| runtime(&agent))
        .await
        .unwrap();
    let check = &attempts(&report, "a")[0].checks[0];
    assert!(!check.passed);
    assert_eq!(
        check.reason.as_deref(),
        Some("the judge did not answer within 0.2 s")
    );
}
