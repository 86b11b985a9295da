//! `Registry::run_many` / `run_one`: order, batches, unknown names, bad arguments, retries,
//! timeouts, cancellation, panics and truncation, on a real tokio runtime.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{
    CancellationToken, PermissionGate, Registry, RetryPolicy, SkillContext, SkillError,
    SkillOutput, ToolCall,
};
use common::*;
use serde_json::json;

fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

/// `count` calls to `name`, labelled by their index, each sleeping 10 ms.
fn sleepers(name: &str, count: usize) -> Vec<ToolCall> {
    (0..count)
        .map(|i| {
            call(
                &i.to_string(),
                name,
                json!({"label": i.to_string(), "sleep_ms": 10}),
            )
        })
        .collect()
}

fn probes(tracker: &Arc<Tracker>) -> Registry {
    let mut registry = Registry::new();
    registry
        .add(Probe {
            name: "look",
            safe: true,
            tracker: tracker.clone(),
        })
        .add(Probe {
            name: "write",
            safe: false,
            tracker: tracker.clone(),
        });
    registry
}

#[tokio::test(start_paused = true)]
async fn results_come_back_in_call_order_even_when_later_calls_finish_first() {
    let tracker = Arc::new(Tracker::default());
    let registry = probes(&tracker);
    let calls: Vec<ToolCall> = (0..5)
        .map(|i| {
            call(
                &format!("c{i}"),
                "look",
                json!({"label": i.to_string(), "sleep_ms": 50 - i * 10}),
            )
        })
        .collect();
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    let ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4"]);
    assert_eq!(results[2].content(), "2 done in call c2");
    // They really ran together: the last one started finished first.
    assert_eq!(tracker.lines()[5], "end 4");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_safe_calls_executes_concurrently() {
    // Each call waits at a barrier for all three: the batch can only finish if they overlap.
    use agent_core::{Skill, async_trait};
    struct Meet(Arc<tokio::sync::Barrier>);
    #[async_trait]
    impl Skill for Meet {
        type Input = NoInput;
        fn name(&self) -> &str {
            "meet"
        }
        fn description(&self) -> &str {
            "Wait for the others."
        }
        fn is_read_only(&self) -> bool {
            true
        }
        async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
            self.0.wait().await;
            Ok("met".into())
        }
    }
    let mut registry = Registry::new();
    registry.add(Meet(Arc::new(tokio::sync::Barrier::new(3))));
    let calls: Vec<ToolCall> = (0..3)
        .map(|i| call(&i.to_string(), "meet", json!({})))
        .collect();
    let results = tokio::time::timeout(
        Duration::from_secs(30),
        registry.run_many(&calls, &SkillContext::default()),
    )
    .await
    .expect("the three calls never met: they did not run concurrently");
    assert!(results.iter().all(|r| r.content() == "met"));
}

#[tokio::test(start_paused = true)]
async fn an_unsafe_call_runs_alone_between_the_batches_around_it() {
    let tracker = Arc::new(Tracker::default());
    let registry = probes(&tracker);
    let calls = [
        call("1", "look", json!({"label": "a", "sleep_ms": 30})),
        call("2", "look", json!({"label": "b", "sleep_ms": 10})),
        call("3", "write", json!({"label": "w", "sleep_ms": 5})),
        call("4", "look", json!({"label": "c", "sleep_ms": 10})),
        call("5", "look", json!({"label": "d", "sleep_ms": 10})),
    ];
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    assert!(results.iter().all(|r| !r.is_error()));
    let at = |line: &str| tracker.position(line);
    assert!(
        at("end a") < at("start w") && at("end b") < at("start w"),
        "{:?}",
        tracker.lines()
    );
    assert!(
        at("end w") < at("start c") && at("end w") < at("start d"),
        "{:?}",
        tracker.lines()
    );
    assert!(
        at("start b") < at("end a"),
        "a and b overlapped: {:?}",
        tracker.lines()
    );
    assert_eq!(tracker.max_active(), 2);
}

#[tokio::test(start_paused = true)]
async fn consecutive_unsafe_calls_never_overlap() {
    let tracker = Arc::new(Tracker::default());
    let registry = probes(&tracker);
    let calls = sleepers("write", 4);
    registry.run_many(&calls, &SkillContext::default()).await;
    assert_eq!(tracker.max_active(), 1);
    assert_eq!(
        tracker.lines(),
        [
            "start 0", "end 0", "start 1", "end 1", "start 2", "end 2", "start 3", "end 3"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn concurrency_is_bounded_by_the_registry_limit() {
    let tracker = Arc::new(Tracker::default());
    let mut registry = probes(&tracker);
    registry.with_max_concurrency(4);
    let calls = sleepers("look", 25);
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    assert_eq!(results.len(), 25);
    assert_eq!(tracker.max_active(), 4);
}

#[tokio::test(start_paused = true)]
async fn the_default_limit_is_ten() {
    let tracker = Arc::new(Tracker::default());
    let registry = probes(&tracker);
    let calls = sleepers("look", 30);
    registry.run_many(&calls, &SkillContext::default()).await;
    assert_eq!(tracker.max_active(), 10);
}

#[tokio::test]
async fn unknown_skill_gets_error_result_with_suggestion() {
    let mut registry = Registry::new();
    registry.add(Echo);
    let calls = [
        call("1", "ecko", json!({})),
        call("2", "echo", json!({"text": "hi"})),
    ];
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    assert_eq!(
        results.len(),
        2,
        "the unknown call is answered, not dropped"
    );
    assert!(results[0].is_error());
    assert_eq!(results[0].call_id, "1");
    assert_eq!(
        results[0].content(),
        "unknown skill `ecko`; did you mean `echo`?"
    );
    assert_eq!(results[1].content(), "hi");
}

#[tokio::test]
async fn unknown_skill_with_nothing_close_lists_the_available_skills() {
    let mut registry = Registry::new();
    registry.add(Echo).add(Panicky);
    let result = registry
        .run_one(
            &call("1", "compile_everything", json!({})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(
        result.content(),
        "unknown skill `compile_everything`; available skills: `echo`, `panicky`"
    );
}

#[tokio::test]
async fn an_alias_runs_the_skill_and_the_result_keeps_the_alias() {
    let mut registry = Registry::new();
    registry.add(Echo);
    let result = registry
        .run_one(
            &call("7", "say", json!({"text": "ok", "times": 2})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!((&*result.name, result.content().as_ref()), ("say", "okok"));
    assert!(registry.contains("say") && registry.contains("echo") && !registry.contains("shout"));
}

#[tokio::test]
async fn bad_arguments_name_the_field_and_never_panic() {
    let mut registry = Registry::new();
    registry.add(Echo);
    let cases = [
        (
            json!({"text": 7}),
            "invalid arguments: `text`: invalid type: integer `7`, expected a string",
        ),
        (json!({}), "invalid arguments: `text`: missing field"),
        (json!(null), "invalid arguments: `text`: missing field"),
        (json!(""), "invalid arguments: `text`: missing field"),
        (
            json!({"text": "a", "times": "2"}),
            "invalid arguments: `times`: invalid type: string \"2\", expected u32",
        ),
        (
            json!({"text": "a", "time": 2}),
            "invalid arguments: `time`: unknown field; expected `text` or `times`",
        ),
        (
            json!([1, 2]),
            "invalid arguments: `(root)`: expected a JSON object of arguments, got an array",
        ),
    ];
    let calls: Vec<ToolCall> = cases
        .iter()
        .enumerate()
        .map(|(i, (args, _))| call(&i.to_string(), "echo", args.clone()))
        .collect();
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    for ((_, expected), result) in cases.iter().zip(&results) {
        assert!(result.is_error());
        assert!(matches!(result.output, Err(SkillError::BadArgs { .. })));
        assert_eq!(result.content(), *expected);
    }
}

#[tokio::test]
async fn a_skill_without_parameters_accepts_empty_arguments() {
    let mut registry = Registry::new();
    registry.add(Big { chars: 3 });
    for args in [json!({}), json!(null), json!("")] {
        let result = registry
            .run_one(&call("1", "big", args), &SkillContext::default())
            .await;
        assert_eq!(result.content(), "ééé");
    }
}

fn fast_retries(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_delay: Duration::from_millis(1),
        ..Default::default()
    }
}

#[tokio::test]
async fn transient_errors_are_retried_by_the_registry_policy() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.with_retry_policy(fast_retries(3)).add(Flaky {
        failures: 2,
        attempts: attempts.clone(),
        policy: None,
    });
    let result = registry
        .run_one(&call("1", "flaky", json!({})), &SkillContext::default())
        .await;
    assert_eq!(result.content(), "worked on attempt 3");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_skill_policy_overrides_the_registry_policy() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.with_retry_policy(fast_retries(5)).add(Flaky {
        failures: 2,
        attempts: attempts.clone(),
        policy: Some(fast_retries(0)),
    });
    let result = registry
        .run_one(&call("1", "flaky", json!({})), &SkillContext::default())
        .await;
    assert_eq!(result.content(), "temporary failure: busy (attempt 1)");
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "max_attempts 0 means one attempt, no panic"
    );
}

#[tokio::test]
async fn with_hooks_the_first_attempt_uses_the_checked_arguments_and_retries_parse_again() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry
        .with_retry_policy(fast_retries(3))
        .with_hook(PermissionGate::new(|_, _| true))
        .add(Flaky {
            failures: 2,
            attempts: attempts.clone(),
            policy: None,
        });
    let result = registry
        .run_one(&call("1", "flaky", json!({})), &SkillContext::default())
        .await;
    assert_eq!(result.content(), "worked on attempt 3");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_a_retry_backoff_answers_cancelled_without_another_attempt() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.add(Flaky {
        failures: usize::MAX,
        attempts: attempts.clone(),
        policy: Some(RetryPolicy {
            max_attempts: 5,
            initial_delay: Duration::from_secs(60),
            ..Default::default()
        }),
    });
    let token = CancellationToken::new();
    let ctx = SkillContext::default().with_cancellation(token.clone());
    let flaky = call("1", "flaky", json!({}));
    let run = registry.run_one(&flaky, &ctx);
    let cancel = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        token.cancel();
    };
    let start = tokio::time::Instant::now();
    let (result, ()) = tokio::join!(run, cancel);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "the backoff was cut short, not waited out ({:?})",
        start.elapsed()
    );
    assert!(
        matches!(result.output, Err(SkillError::Cancelled)),
        "{:?}",
        result.output
    );
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "the retry waiting out its backoff never started"
    );
}

#[tokio::test]
async fn a_cancelled_context_starts_no_skill() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.add(Flaky {
        failures: 0,
        attempts: attempts.clone(),
        policy: None,
    });
    let token = CancellationToken::new();
    token.cancel();
    let ctx = SkillContext::default().with_cancellation(token);
    let result = registry.run_one(&call("1", "flaky", json!({})), &ctx).await;
    assert!(matches!(result.output, Err(SkillError::Cancelled)));
    assert_eq!(attempts.load(Ordering::SeqCst), 0);
    assert_eq!(result.call_id, "1");
    assert_eq!(result.name, "flaky");
}

#[tokio::test(start_paused = true)]
async fn a_skill_over_its_timeout_gets_a_timeout_error() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.add(Hang {
        timeout: Some(Duration::from_millis(500)),
        started: Arc::default(),
        dropped: dropped.clone(),
    });
    let result = registry
        .run_one(&call("1", "hang", json!({})), &SkillContext::default())
        .await;
    assert!(
        matches!(result.output, Err(SkillError::Timeout(d)) if d == Duration::from_millis(500))
    );
    assert_eq!(
        result.content(),
        "timed out after 500ms; try a smaller request or a longer timeout"
    );
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the timed-out future was dropped"
    );
}

#[tokio::test]
async fn cancelling_drops_running_calls_and_answers_every_call() {
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry
        .add(Hang {
            timeout: None,
            started: started.clone(),
            dropped: dropped.clone(),
        })
        .add(Echo);
    let registry = Arc::new(registry);
    let token = CancellationToken::new();
    let ctx = SkillContext::default().with_cancellation(token.clone());
    let calls = vec![
        call("1", "echo", json!({"text": "before"})),
        call("2", "hang", json!({})),
        call("3", "echo", json!({"text": "after"})),
    ];
    let task = tokio::spawn({
        let registry = registry.clone();
        async move { registry.run_many(&calls, &ctx).await }
    });
    started.notified().await;
    token.cancel();
    let results = task.await.unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].content(), "before");
    assert!(matches!(results[1].output, Err(SkillError::Cancelled)));
    assert!(
        matches!(results[2].output, Err(SkillError::Cancelled)),
        "calls after the cancel are answered as cancelled"
    );
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the running future was dropped"
    );
}

#[tokio::test]
async fn a_panicking_skill_becomes_an_error_result_and_the_batch_goes_on() {
    let mut registry = Registry::new();
    registry.add(Panicky).add(Echo);
    let calls = [
        call("1", "panicky", json!({})),
        call("2", "echo", json!({"text": "still here"})),
    ];
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    assert_eq!(
        results[0].content(),
        "the skill panicked: index out of bounds: the len is 0"
    );
    assert_eq!(results[1].content(), "still here");
}

#[tokio::test]
async fn long_output_is_cut_on_a_char_boundary_with_a_notice() {
    let mut registry = Registry::new();
    registry.add(Big { chars: 20_000 });
    let result = registry
        .run_one(&call("1", "big", json!({})), &SkillContext::default())
        .await;
    let content = result.content();
    let (kept, notice) = content.split_once("\n\n").unwrap();
    assert_eq!(kept.chars().count(), 16_000);
    assert!(kept.chars().all(|c| c == 'é'));
    assert_eq!(
        notice,
        "[output truncated: showing 16000 of 20000 characters; 4000 cut]"
    );
}

#[tokio::test]
async fn the_output_budget_is_configurable_and_short_output_is_untouched() {
    let mut registry = Registry::new();
    registry
        .with_output_budget(4)
        .add(Big { chars: 4 })
        .add(Echo);
    let exact = registry
        .run_one(&call("1", "big", json!({})), &SkillContext::default())
        .await;
    assert_eq!(exact.content(), "éééé");
    let cut = registry
        .run_one(
            &call("2", "echo", json!({"text": "abcdefgh"})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(
        cut.content(),
        "abcd\n\n[output truncated: showing 4 of 8 characters; 4 cut]"
    );
}

/// Refuses every path, quoting it (as a sandbox does).
struct Guard;

#[agent_core::async_trait]
impl agent_core::Skill for Guard {
    type Input = PathInput;
    fn name(&self) -> &str {
        "guard"
    }
    fn description(&self) -> &str {
        "Refuses every path."
    }
    async fn run(&self, input: PathInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Err(SkillError::Safety(format!(
            "`{}` is outside the workspace",
            input.path
        )))
    }
}

#[tokio::test]
async fn error_results_are_cut_to_the_output_budget_too() {
    let mut registry = Registry::new();
    registry.with_output_budget(100).add(Echo).add(Guard);
    let long = "é".repeat(5_000);
    let calls = [
        // serde quotes the wrong value in its message.
        call("1", "echo", json!({"text": "a", "times": long})),
        call("2", &"z".repeat(5_000), json!({})),
        call("3", "guard", json!({"path": long})),
    ];
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    for result in &results {
        let content = result.content();
        assert!(
            content.chars().count() < 300 && content.contains("[output truncated: showing 100 of"),
            "{} characters: {}",
            content.chars().count(),
            content.chars().take(300).collect::<String>()
        );
    }
    assert!(
        matches!(results[0].output, Err(SkillError::BadArgs { ref path, .. }) if path == "times")
    );
    assert!(matches!(
        results[1].output,
        Err(SkillError::UnknownSkill { .. })
    ));
    assert!(matches!(results[2].output, Err(SkillError::Safety(_))));
}

#[tokio::test]
async fn the_call_id_reaches_the_skill() {
    let tracker = Arc::new(Tracker::default());
    let registry = probes(&tracker);
    let result = registry
        .run_one(
            &call("toolu_01", "write", json!({"label": "x"})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(result.content(), "x done in call toolu_01");
}

#[test]
#[should_panic(expected = "two skills are named `echo`")]
fn adding_a_duplicate_name_panics_with_both_names() {
    let mut registry = Registry::new();
    registry.add(Echo).add(Echo);
}

#[test]
fn try_add_reports_a_duplicate_alias_and_changes_nothing() {
    use agent_core::{Skill, async_trait};
    struct Say;
    #[async_trait]
    impl Skill for Say {
        type Input = NoInput;
        fn name(&self) -> &str {
            "say"
        }
        fn description(&self) -> &str {
            "Clashes with echo's alias."
        }
        async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
            Ok("".into())
        }
    }
    let mut registry = Registry::new();
    registry.add(Echo);
    let error = registry.try_add(Say).expect_err("alias clash");
    assert!(
        error.to_string().starts_with("two skills are named `say`"),
        "{error}"
    );
    assert_eq!(registry.len(), 1);
    assert_eq!(registry.get("say").unwrap().name(), "echo");
}

#[test]
fn invalid_names_are_refused() {
    use agent_core::{RegistryError, Skill, async_trait};
    struct Spaced;
    #[async_trait]
    impl Skill for Spaced {
        type Input = NoInput;
        fn name(&self) -> &str {
            "read file"
        }
        fn description(&self) -> &str {
            "Bad name."
        }
        async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
            Ok("".into())
        }
    }
    let mut registry = Registry::new();
    assert!(
        matches!(registry.try_add(Spaced), Err(RegistryError::InvalidName { name }) if name == "read file")
    );
    assert!(registry.is_empty());
}

/// Input whose hand-written `Deserialize` has a bug: it panics on the text "boom".
#[derive(schemars::JsonSchema)]
#[schemars(crate = "agent_core::schemars")]
struct TouchyInput {
    text: String,
}

impl<'de> serde::Deserialize<'de> for TouchyInput {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(crate = "agent_core::serde")]
        struct Raw {
            text: String,
        }
        let raw = Raw::deserialize(d)?;
        assert_ne!(raw.text, "boom", "the input's Deserialize broke");
        Ok(TouchyInput { text: raw.text })
    }
}

struct Touchy;

#[agent_core::async_trait]
impl agent_core::Skill for Touchy {
    type Input = TouchyInput;
    fn name(&self) -> &str {
        "touchy"
    }
    fn description(&self) -> &str {
        "Echoes text, unless its input breaks."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    async fn run(&self, input: TouchyInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok(SkillOutput::Text(input.text))
    }
}

#[tokio::test]
async fn a_panic_while_parsing_the_arguments_is_the_calls_error_with_or_without_hooks() {
    let calls = [
        call("1", "touchy", json!({"text": "fine"})),
        call("2", "touchy", json!({"text": "boom"})),
        call("3", "touchy", json!({"text": "also fine"})),
    ];
    let mut plain = Registry::new();
    plain.add(Touchy);
    let mut hooked = Registry::new();
    hooked
        .add(Touchy)
        .with_hook(PermissionGate::new(|_, _| true));
    for registry in [&plain, &hooked] {
        let results = registry.run_many(&calls, &SkillContext::default()).await;
        let texts: Vec<String> = results.iter().map(|r| r.content().into_owned()).collect();
        assert_eq!(texts[0], "fine");
        assert_eq!(texts[2], "also fine");
        assert!(results[1].is_error());
        assert!(
            texts[1].contains("panicked") && texts[1].contains("the input's Deserialize broke"),
            "{}",
            texts[1]
        );
        let one = registry.run_one(&calls[1], &SkillContext::default()).await;
        assert!(one.content().contains("panicked"), "{}", one.content());
    }
}

#[tokio::test]
async fn no_hook_is_asked_about_a_call_of_a_cancelled_run() {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let mut registry = Registry::new();
    registry
        .add(Touchy)
        .with_hook(PermissionGate::new(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            true
        }));
    let token = CancellationToken::new();
    token.cancel();
    let ctx = SkillContext::default().with_cancellation(token);
    let calls = [
        call("1", "touchy", json!({"text": "a"})),
        call("2", "touchy", json!({"text": "b"})),
    ];
    let results = registry.run_many(&calls, &ctx).await;
    assert_eq!(asked.load(Ordering::SeqCst), 0, "a gate was asked");
    for result in &results {
        assert!(
            matches!(result.output, Err(SkillError::Cancelled)),
            "{:?}",
            result.output
        );
    }
}
