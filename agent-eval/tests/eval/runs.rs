//! The runner against scripted models: pass rates, failures as results, the concurrency bound,
//! time limits, typed cases, custom checks, progress.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{Registry, ToolCall};
use agent_eval::{Case, Check, Dataset, Eval, EvalError, Progress};
use agent_llm::{MockProvider, MockReply, ProviderError, Usage};
use agent_runtime::{AgentRuntime, FinishReason};
use serde_json::json;

use crate::{Counted, Silent, attempts, runtime, text_with_usage};

#[tokio::test]
async fn pass_rates_are_counted_per_case_and_overall_over_mixed_attempts() {
    let dataset = Dataset::new("mixed")
        .case(
            Case::new("capital", "The capital of France?")
                .repeat(4)
                .check(Check::contains("Paris")),
        )
        .case(Case::new("sum", "2 + 2?").repeat(2).check(Check::equals(4)));
    let model = MockProvider::new([
        text_with_usage("Paris.", 10, 2),
        text_with_usage("Lyon.", 10, 2),
        text_with_usage("It is Paris", 10, 2),
        text_with_usage("Paris", 10, 2),
        text_with_usage("4", 7, 1),
        text_with_usage("5", 7, 1),
    ]);
    // One at a time, so the script's replies meet the attempts in order.
    let report = Eval::new(dataset)
        .concurrency(1)
        .run(|_| runtime(&model))
        .await
        .unwrap();

    let capital = &report.case("capital").unwrap().summary;
    assert_eq!((capital.passed, capital.attempts), (3, 4));
    assert_eq!(capital.pass_rate, 0.75);
    assert_eq!(capital.usage.total(), 48);
    assert_eq!(capital.steps, 4);
    let sum = &report.case("sum").unwrap().summary;
    assert_eq!((sum.passed, sum.attempts), (1, 2));
    assert_eq!(sum.pass_rate, 0.5);
    assert_eq!((report.overall.passed, report.overall.attempts), (4, 6));
    assert!((report.overall.pass_rate - 4.0 / 6.0).abs() < 1e-12);
    assert_eq!(report.overall.usage.total(), 64);
    assert_eq!(report.overall.errors, 0);

    let passed: Vec<bool> = attempts(&report, "capital")
        .iter()
        .map(|a| a.passed)
        .collect();
    assert_eq!(passed, [true, false, true, true]);
    let second = &attempts(&report, "capital")[1];
    assert_eq!(second.answer.as_deref(), Some("Lyon."));
    let reason = second.checks[0].reason.as_deref().unwrap();
    assert!(reason.contains("does not contain \"Paris\""), "{reason}");
    let wrong_sum = &attempts(&report, "sum")[1];
    assert_eq!(
        wrong_sum.checks[0].reason.as_deref(),
        Some("expected 4, got 5")
    );

    // Every case must pass every attempt by default; a lower bar passes both cases.
    assert!(!report.passed());
    let failing: Vec<&str> = report.failing().map(|c| c.name.as_str()).collect();
    assert_eq!(failing, ["capital", "sum"]);
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn the_minimum_pass_rate_decides_whether_the_report_passes() {
    let dataset = Dataset::new("bar").case(
        Case::new("a", "Say yes.")
            .repeat(3)
            .check(Check::equals("yes")),
    );
    let script = || {
        MockProvider::new([
            MockReply::text("yes"),
            MockReply::text("no"),
            MockReply::text("yes"),
        ])
    };
    for (min, passes) in [(0.5, true), (2.0 / 3.0, true), (0.7, false), (1.0, false)] {
        let model = script();
        let report = Eval::new(dataset.clone())
            .concurrency(1)
            .min_pass_rate(min)
            .run(|_| runtime(&model))
            .await
            .unwrap();
        assert_eq!(report.passed(), passes, "min {min}: {report}");
        assert_eq!(report.min_pass_rate, min);
    }
    let error = Eval::new(dataset)
        .min_pass_rate(1.5)
        .run(|_| runtime(&script()))
        .await
        .unwrap_err();
    assert!(matches!(error, EvalError::MinPassRate(_)), "{error}");
}

#[tokio::test]
async fn a_provider_error_fails_its_attempt_with_what_it_spent_and_the_eval_goes_on() {
    let dataset = Dataset::new("errors").case(
        Case::new("a", "Look it up.")
            .repeat(2)
            .check(Check::contains("found")),
    );
    let model = MockProvider::new([
        // Attempt 1: a call to a tool that does not exist (answered with an error, the run goes
        // on), then the provider fails.
        MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({}))]).with_usage(Usage {
            input_tokens: 30,
            output_tokens: 4,
            ..Usage::default()
        }),
        MockReply::error(ProviderError::Api {
            provider: "mock".into(),
            status: 529,
            error_type: Some("overloaded_error".into()),
            message: "Overloaded".into(),
            retry_after: None,
        }),
        // Attempt 2: an answer.
        MockReply::text("found it"),
    ]);
    let report = Eval::new(dataset)
        .concurrency(1)
        .run(|_| runtime(&model))
        .await
        .unwrap();
    let [failed, passed] = attempts(&report, "a") else {
        panic!("two attempts")
    };
    assert!(!failed.passed);
    let error = failed.error.as_deref().unwrap();
    assert!(
        error.contains("529") && error.contains("Overloaded"),
        "{error}"
    );
    assert!(failed.checks.is_empty());
    assert_eq!(failed.finish, None);
    // What the run spent before it failed is counted.
    assert_eq!(failed.steps, 1);
    assert_eq!(failed.usage.input_tokens, 30);
    assert!(passed.passed, "{passed:?}");
    assert_eq!(report.case("a").unwrap().summary.errors, 1);
    assert_eq!(report.overall.pass_rate, 0.5);
}

#[tokio::test]
async fn a_run_that_ends_without_an_answer_fails_unchecked() {
    let dataset = Dataset::new("budget").case(Case::new("a", "Go.").check(Check::contains("x")));
    let model = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "c1",
        "lookup",
        json!({}),
    )])]);
    let report = Eval::new(dataset)
        .run(|_| runtime(&model).max_steps(1))
        .await
        .unwrap();
    let attempt = &attempts(&report, "a")[0];
    assert!(!attempt.passed);
    assert!(matches!(
        attempt.finish,
        Some(FinishReason::BudgetExceeded(_))
    ));
    let error = attempt.error.as_deref().unwrap();
    assert!(
        error.starts_with("the run ended without an answer") && error.contains("steps"),
        "{error}"
    );
    assert!(attempt.checks.is_empty());
}

#[tokio::test]
async fn the_concurrency_bound_is_never_exceeded_and_is_reached() {
    for bound in [1, 3] {
        let dataset = Dataset::new("wide")
            .case(
                Case::new("a", "One.")
                    .repeat(6)
                    .check(Check::contains("ok")),
            )
            .case(
                Case::new("b", "Two.")
                    .repeat(6)
                    .check(Check::contains("ok")),
            );
        let script = MockProvider::new((0..12).map(|_| MockReply::text("ok")));
        let counted = Counted::new(script, bound);
        let shared: Arc<dyn agent_llm::LlmProvider> = counted.clone();
        let report = Eval::new(dataset)
            .concurrency(bound)
            .run(|_| AgentRuntime::from_shared(shared.clone(), Arc::new(Registry::new())))
            .await
            .unwrap();
        assert_eq!(report.overall.passed, 12, "{report}");
        assert_eq!(
            counted.most.load(std::sync::atomic::Ordering::SeqCst),
            bound,
            "at most {bound} attempts at once"
        );
    }
}

#[tokio::test]
async fn a_run_over_its_time_limit_is_a_failed_attempt_and_the_next_one_runs() {
    let dataset = Dataset::new("slow")
        .case(Case::new("hangs", "Wait.").check(Check::contains("x")))
        .case(Case::new("answers", "Say x.").check(Check::contains("x")));
    let model = MockProvider::new([MockReply::text("x")]);
    let report = Eval::new(dataset)
        .timeout(Duration::from_millis(200))
        .run(|case| match case.name() {
            "hangs" => AgentRuntime::new(Silent, Registry::new()),
            _ => runtime(&model),
        })
        .await
        .unwrap();
    let hung = &attempts(&report, "hangs")[0];
    assert_eq!(
        hung.error.as_deref(),
        Some("the run did not finish within 0.2 s")
    );
    assert!(
        hung.latency_ms >= 200.0,
        "a timed-out attempt counts its limit"
    );
    assert!(attempts(&report, "answers")[0].passed);
}

#[tokio::test]
async fn a_typed_case_checks_the_value_and_custom_checks_see_the_answer() {
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"]
    });
    let dataset = Dataset::new("typed").case(
        Case::new("city", "The largest city of France, and its population.")
            .output_schema(schema)
            .unwrap()
            .repeat(3)
            .check(Check::equals(
                json!({"city": "Paris", "population": 2_100_000}),
            ))
            .check(
                Check::json_schema(json!({"properties": {"population": {"minimum": 1_000_000}}}))
                    .unwrap(),
            )
            .check(Check::custom("typed value", |answer| {
                match answer.output.as_ref().and_then(|v| v.get("city")) {
                    Some(_) => Ok(()),
                    None => Err("no city in the value".into()),
                }
            })),
    );
    let final_answer = |value| MockReply::tool_calls([ToolCall::new("f", "final_answer", value)]);
    let model = MockProvider::new([
        final_answer(json!({"city": "Paris", "population": 2_100_000})),
        final_answer(json!({"city": "Lyon", "population": 500_000})),
        // Does not follow the case's schema: sent back once, then right.
        final_answer(json!({"city": "Paris"})),
        final_answer(json!({"city": "Paris", "population": 2_100_000})),
    ]);
    let report = Eval::new(dataset)
        .concurrency(1)
        .run(|_| runtime(&model))
        .await
        .unwrap();
    let [first, second, third] = attempts(&report, "city") else {
        panic!("three attempts")
    };
    assert!(first.passed, "{first:?}");
    assert!(!second.passed);
    let failed: Vec<&str> = second
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.check.as_str())
        .collect();
    assert_eq!(failed.len(), 2, "{second:?}");
    assert!(failed[0].starts_with("equals"));
    assert_eq!(failed[1], "json_schema");
    assert!(
        second.checks[1]
            .reason
            .as_deref()
            .unwrap()
            .contains("500000")
    );
    assert!(second.checks[2].passed);
    assert_eq!(
        second.answer.as_deref(),
        Some(r#"{"city":"Lyon","population":500000}"#)
    );
    assert!(third.passed, "{third:?}");
    assert_eq!(third.steps, 2);
}

#[tokio::test]
async fn a_rubric_without_a_judge_and_a_bad_case_stop_the_eval_before_anything_runs() {
    let model = MockProvider::new([MockReply::text("unused")]);
    let judged = Dataset::new("j").case(Case::new("a", "Go.").check(Check::rubric("Be nice.")));
    let error = Eval::new(judged)
        .run(|_| runtime(&model))
        .await
        .unwrap_err();
    assert!(
        matches!(error, EvalError::NoJudge(ref c) if c == "a"),
        "{error}"
    );

    let twice = Dataset::new("d")
        .case(Case::new("a", "Go."))
        .case(Case::new("a", "Again."));
    let error = Eval::new(twice).run(|_| runtime(&model)).await.unwrap_err();
    assert!(matches!(error, EvalError::DuplicateCase(_)), "{error}");

    let none = Dataset::new("d").case(Case::new("a", "Go.").repeat(0));
    let error = Eval::new(none).run(|_| runtime(&model)).await.unwrap_err();
    assert!(
        matches!(error, EvalError::Repeat { repeat: 0, .. }),
        "{error}"
    );

    let too_many = Dataset::new("d").case(Case::new("a", "Go.").repeat(1001));
    let error = Eval::new(too_many)
        .run(|_| runtime(&model))
        .await
        .unwrap_err();
    assert!(
        matches!(error, EvalError::Repeat { repeat: 1001, .. }),
        "{error}"
    );

    // 101 cases of 1,000 attempts: more than an eval may make in all.
    let huge = (0..101).fold(Dataset::new("d"), |d, i| {
        d.case(Case::new(format!("c{i}"), "Go.").repeat(1000))
    });
    let error = Eval::new(huge).run(|_| runtime(&model)).await.unwrap_err();
    assert!(
        matches!(error, EvalError::TooManyAttempts(101_000)),
        "{error}"
    );

    let empty = Dataset::new("d");
    let error = Eval::new(empty).run(|_| runtime(&model)).await.unwrap_err();
    assert!(matches!(error, EvalError::Empty(_)), "{error}");
    assert!(model.requests().is_empty(), "nothing ran");
}

#[tokio::test]
async fn repeats_come_from_the_case_then_the_eval_then_the_dataset() {
    let dataset = Dataset::new("r")
        .repeat(3)
        .case(Case::new("own", "Go.").repeat(2))
        .case(Case::new("default", "Go."));
    let eval = Eval::new(dataset.clone());
    assert_eq!(eval.attempts_for(&dataset.cases()[0]), 2);
    assert_eq!(eval.attempts_for(&dataset.cases()[1]), 3);
    let eval = eval.repeat(5);
    assert_eq!(eval.attempts_for(&dataset.cases()[0]), 2);
    assert_eq!(eval.attempts_for(&dataset.cases()[1]), 5);

    let model = MockProvider::new((0..7).map(|_| MockReply::text("ok")));
    let report = eval.run(|_| runtime(&model)).await.unwrap();
    assert_eq!(attempts(&report, "own").len(), 2);
    assert_eq!(attempts(&report, "default").len(), 5);
    let numbers: Vec<usize> = attempts(&report, "default")
        .iter()
        .map(|a| a.attempt)
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5]);
}

#[tokio::test]
async fn progress_is_told_after_every_attempt() {
    let dataset =
        Dataset::new("p").case(Case::new("a", "Go.").repeat(4).check(Check::equals("ok")));
    let model = MockProvider::new([
        MockReply::text("ok"),
        MockReply::text("no"),
        MockReply::text("ok"),
        MockReply::text("ok"),
    ]);
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let record = seen.clone();
    Eval::new(dataset)
        .concurrency(1)
        .on_progress(move |p| record.lock().unwrap().push(p.clone()))
        .run(|_| runtime(&model))
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    let steps: Vec<(usize, usize, usize, bool)> = seen
        .iter()
        .map(|p| (p.done, p.total, p.passed, p.attempt_passed))
        .collect();
    assert_eq!(
        steps,
        [
            (1, 4, 1, true),
            (2, 4, 1, false),
            (3, 4, 2, true),
            (4, 4, 3, true)
        ]
    );
}

#[tokio::test]
async fn a_report_keeps_a_long_answer_clipped() {
    let dataset = Dataset::new("long").case(Case::new("a", "Write a lot."));
    let model = MockProvider::new([MockReply::text("é".repeat(10_000))]);
    let report = Eval::new(dataset).run(|_| runtime(&model)).await.unwrap();
    let kept = attempts(&report, "a")[0].answer.clone().unwrap();
    assert_eq!(
        kept.chars().count(),
        2_001,
        "2,000 characters and the ellipsis"
    );
    assert!(kept.ends_with('…'));
}
