//! Properties of dispatch and truncation over generated inputs (proptest): every call gets exactly
//! one result in call order, whatever the mix; a call that is not concurrency-safe never overlaps
//! any other; truncation keeps a prefix, never splits a character, and says how much it cut.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::registry::truncate_text;
use agent_core::{Registry, SkillContext, SkillError, SkillOutput, ToolCall, async_trait};
use common::NoInput;
use proptest::prelude::*;
use serde_json::json;
use std::sync::Mutex;

#[derive(Debug, Clone)]
enum Kind {
    Safe(u64),
    Unsafe(u64),
    Unknown,
    Failing,
    BadArgs,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        (0u64..20).prop_map(Kind::Safe),
        (0u64..20).prop_map(Kind::Unsafe),
        Just(Kind::Unknown),
        Just(Kind::Failing),
        Just(Kind::BadArgs),
    ]
}

/// Logs `start id` / `end id` around a tokio sleep, in one shared sequence.
struct Timed {
    name: &'static str,
    safe: bool,
    log: Arc<Mutex<Vec<(bool, String)>>>,
}

#[derive(agent_core::serde::Deserialize, agent_core::schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
struct TimedInput {
    ms: u64,
}

#[async_trait]
impl agent_core::Skill for Timed {
    type Input = TimedInput;
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Sleeps."
    }
    fn is_read_only(&self) -> bool {
        self.safe
    }
    async fn run(&self, input: TimedInput, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        let id = ctx.call_id().unwrap().to_owned();
        self.log.lock().unwrap().push((true, id.clone()));
        tokio::time::sleep(Duration::from_millis(input.ms)).await;
        self.log.lock().unwrap().push((false, id));
        Ok("ok".into())
    }
}

struct Fails;

#[async_trait]
impl agent_core::Skill for Fails {
    type Input = NoInput;
    fn name(&self) -> &str {
        "fails"
    }
    fn description(&self) -> &str {
        "Fails."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Err(SkillError::tool("failed"))
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn run_many_answers_every_call_once_in_order_and_never_overlaps_unsafe_calls(kinds in prop::collection::vec(kind(), 0..24), limit in 1usize..6) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut registry = Registry::new();
        registry
            .with_max_concurrency(limit)
            .add(Timed { name: "safe", safe: true, log: log.clone() })
            .add(Timed { name: "unsafe", safe: false, log: log.clone() })
            .add(Fails);
        let calls: Vec<ToolCall> = kinds.iter().enumerate().map(|(i, k)| {
            let id = format!("c{i}");
            match k {
                Kind::Safe(ms) => ToolCall::new(id, "safe", json!({"ms": ms})),
                Kind::Unsafe(ms) => ToolCall::new(id, "unsafe", json!({"ms": ms})),
                Kind::Unknown => ToolCall::new(id, "missing", json!({})),
                Kind::Failing => ToolCall::new(id, "fails", json!({})),
                Kind::BadArgs => ToolCall::new(id, "safe", json!({"ms": "soon"})),
            }
        }).collect();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        let results = runtime.block_on(registry.run_many(&calls, &SkillContext::default()));

        prop_assert_eq!(results.len(), calls.len());
        for (call, result) in calls.iter().zip(&results) {
            prop_assert_eq!(&result.call_id, &call.id);
            let expect_error = !matches!(kinds[call.id[1..].parse::<usize>().unwrap()], Kind::Safe(_) | Kind::Unsafe(_));
            prop_assert_eq!(result.is_error(), expect_error, "{:?}", result);
        }
        // An unsafe call's start and end are adjacent in the log: nothing else ran meanwhile.
        let log = log.lock().unwrap();
        let mut active = 0usize;
        let mut max_active = 0usize;
        for (i, (start, id)) in log.iter().enumerate() {
            if *start { active += 1; } else { active -= 1; }
            max_active = max_active.max(active);
            let is_unsafe = matches!(kinds[id[1..].parse::<usize>().unwrap()], Kind::Unsafe(_));
            if is_unsafe && *start {
                prop_assert_eq!(active, 1, "unsafe {} started while another ran", id);
                prop_assert_eq!(&log[i + 1], &(false, id.clone()), "something started during unsafe {}", id);
            }
        }
        prop_assert!(max_active <= limit);
    }

    #[test]
    fn truncation_keeps_a_prefix_never_splits_a_character_and_counts_the_cut(text in "\\PC{0,300}", budget in 0usize..200) {
        let total = text.chars().count();
        let out = truncate_text(text.clone(), budget);
        if total <= budget {
            prop_assert_eq!(out, text);
        } else {
            let (kept, notice) = out.split_at(out.rfind("\n\n[output truncated: ").unwrap());
            prop_assert_eq!(kept.chars().count(), budget);
            prop_assert!(text.starts_with(kept));
            let expected = format!("\n\n[output truncated: showing {budget} of {total} characters; {} cut]", total - budget);
            prop_assert_eq!(notice, expected.as_str());
        }
    }
}

#[test]
fn calls_counted_once_each_even_under_retries() {
    // A sanity anchor for the property above: a transient failure is retried, still one result.
    let attempts = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry
        .with_retry_policy(agent_core::RetryPolicy {
            max_attempts: 3,
            initial_delay: Duration::from_millis(1),
            ..Default::default()
        })
        .add(common::Flaky {
            failures: 1,
            attempts: attempts.clone(),
            policy: None,
        });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let results = runtime.block_on(registry.run_many(
        &[ToolCall::new("a", "flaky", json!({}))],
        &SkillContext::default(),
    ));
    assert_eq!(results.len(), 1);
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}
