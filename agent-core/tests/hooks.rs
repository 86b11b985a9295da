//! Hooks: order, Proceed / Modify / Deny / Replace, after-hooks on every result, PermissionGate.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::{
    HookVerdict, PermissionGate, Registry, SkillContext, SkillError, SkillHook, SkillMetadata,
    SkillOutput, ToolCall, async_trait,
};
use common::*;
use serde_json::{Value, json};

/// A hook that logs its name and answers with a fixed outcome.
struct Scripted {
    label: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    outcome: HookVerdict,
}

#[async_trait]
impl SkillHook for Scripted {
    async fn before(
        &self,
        name: &str,
        metadata: &SkillMetadata,
        args: &Value,
    ) -> Result<HookVerdict, SkillError> {
        assert_eq!(
            &*metadata.name, "shred_file",
            "metadata is the skill's, whatever name was used"
        );
        self.log
            .lock()
            .unwrap()
            .push(format!("{} before {name} {args}", self.label));
        Ok(self.outcome.clone())
    }

    async fn after(
        &self,
        name: &str,
        _args: &Value,
        _result: &mut Result<SkillOutput, SkillError>,
    ) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} after {name}", self.label));
    }
}

/// A registry with the destructive `shred_file` that runs its calls: these tests are about the
/// hooks, not the default for destructive skills (the last tests below are).
fn shredder(runs: &Arc<AtomicUsize>) -> Registry {
    let mut registry = shredder_by_default(runs);
    registry.destructive_calls(agent_core::DestructiveCalls::Allow);
    registry
}

/// The same registry with the default for destructive skills: a person decides.
fn shredder_by_default(runs: &Arc<AtomicUsize>) -> Registry {
    let mut registry = Registry::new();
    registry.add(Shred { runs: runs.clone() });
    registry
}

fn shred(path: &str) -> ToolCall {
    ToolCall::new("call_1", "shred_file", json!({ "path": path }))
}

#[tokio::test]
async fn hooks_run_in_the_order_added_and_after_hooks_see_the_result() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder(&runs);
    for label in ["first", "second", "third"] {
        registry.with_hook(Scripted {
            label,
            log: log.clone(),
            outcome: HookVerdict::Proceed,
        });
    }
    let result = registry
        .run_one(&shred("a.txt"), &SkillContext::default())
        .await;
    assert_eq!(result.content(), "shredded a.txt");
    assert_eq!(
        *log.lock().unwrap(),
        [
            r#"first before shred_file {"path":"a.txt"}"#,
            r#"second before shred_file {"path":"a.txt"}"#,
            r#"third before shred_file {"path":"a.txt"}"#,
            "first after shred_file",
            "second after shred_file",
            "third after shred_file",
        ]
    );
}

#[tokio::test]
async fn modify_rewrites_the_arguments_for_later_hooks_and_the_skill() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder(&runs);
    registry
        .with_hook(Scripted {
            label: "rewrite",
            log: log.clone(),
            outcome: HookVerdict::Modify(json!({"path": "safe.txt"})),
        })
        .with_hook(Scripted {
            label: "watch",
            log: log.clone(),
            outcome: HookVerdict::Proceed,
        });
    let result = registry
        .run_one(&shred("/etc/passwd"), &SkillContext::default())
        .await;
    assert_eq!(result.content(), "shredded safe.txt");
    assert_eq!(
        log.lock().unwrap()[1],
        r#"watch before shred_file {"path":"safe.txt"}"#
    );
}

#[tokio::test]
async fn modified_arguments_are_validated_again() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder(&runs);
    registry.with_hook(Scripted {
        label: "broken",
        log: Arc::default(),
        outcome: HookVerdict::Modify(json!({"paht": 1})),
    });
    let result = registry
        .run_one(&shred("a.txt"), &SkillContext::default())
        .await;
    assert!(
        matches!(result.output, Err(SkillError::BadArgs { ref path, .. }) if path == "paht"),
        "{:?}",
        result.output
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn deny_becomes_an_error_result_with_the_reason_and_stops_later_hooks() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder(&runs);
    registry
        .with_hook(Scripted {
            label: "deny",
            log: log.clone(),
            outcome: HookVerdict::Deny("no shredding on Sundays".into()),
        })
        .with_hook(Scripted {
            label: "later",
            log: log.clone(),
            outcome: HookVerdict::Proceed,
        });
    let result = registry
        .run_one(&shred("a.txt"), &SkillContext::default())
        .await;
    assert!(result.is_error());
    assert_eq!(result.content(), "denied: no shredding on Sundays");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let log = log.lock().unwrap();
    assert!(
        !log.iter().any(|l| l.starts_with("later before")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l == "later after shred_file"),
        "after-hooks still see the denial: {log:?}"
    );
}

#[tokio::test]
async fn replace_skips_the_skill_and_answers_with_the_text() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder(&runs);
    registry.with_hook(Scripted {
        label: "cache",
        log: Arc::default(),
        outcome: HookVerdict::Replace("from cache".into()),
    });
    let result = registry
        .run_one(&shred("a.txt"), &SkillContext::default())
        .await;
    assert_eq!(
        (result.is_error(), result.content().as_ref()),
        (false, "from cache")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// Turns every error into a success that says what the error was, and counts what it saw.
struct Forgive {
    seen: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl SkillHook for Forgive {
    async fn after(&self, name: &str, _args: &Value, result: &mut Result<SkillOutput, SkillError>) {
        self.seen.lock().unwrap().push(name.to_owned());
        if let Err(error) = result {
            *result = Ok(format!("forgiven: {error}").into());
        }
    }
}

#[tokio::test]
async fn a_pause_is_not_shown_to_after_hooks_so_none_turns_it_into_a_failure() {
    let runs = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let registry = {
        let mut registry = shredder_by_default(&runs);
        registry.with_hook(Forgive { seen: seen.clone() });
        registry
    };
    // Destructive: the registry asks. `Forgive` would turn an error into a success; a pause
    // is no error, and it never sees it.
    let asked = registry
        .run_one(&shred("a"), &SkillContext::default())
        .await;
    assert!(
        matches!(
            agent_core::Outcome::of(&asked),
            agent_core::Outcome::Paused(agent_core::Pause::Approval(_))
        ),
        "{:?}",
        asked.output
    );
    assert!(seen.lock().unwrap().is_empty(), "{seen:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // Once approved, it runs, and its after-hooks see the finished result.
    let ctx = SkillContext::default();
    ctx.scope()
        .approve("call_1", "shred_file", &shred("a").arguments);
    let ran = registry.run_one(&shred("a"), &ctx).await;
    assert!(matches!(
        agent_core::Outcome::of(&ran),
        agent_core::Outcome::Done(_)
    ));
    assert_eq!(*seen.lock().unwrap(), ["shred_file"]);
}

#[tokio::test]
async fn after_hooks_see_and_may_change_every_result_errors_included() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut registry = Registry::new();
    registry
        .add(Echo)
        .add(Panicky)
        .with_hook(Forgive { seen: seen.clone() });
    let calls = [
        ToolCall::new("1", "echo", json!({"text": "ok"})),
        ToolCall::new("2", "nope", json!({})),
        ToolCall::new("3", "echo", json!({"txt": "bad"})),
        ToolCall::new("4", "panicky", json!({})),
    ];
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    assert_eq!(*seen.lock().unwrap(), ["echo", "nope", "echo", "panicky"]);
    assert!(results.iter().all(|r| !r.is_error()));
    assert_eq!(
        results[1].content(),
        "forgiven: unknown skill `nope`; available skills: `echo`, `panicky`"
    );
    assert!(
        results[2]
            .content()
            .starts_with("forgiven: invalid arguments: `txt`: unknown field")
    );
}

#[tokio::test]
async fn permission_gate_allows_by_metadata() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry
        .add(Shred { runs: runs.clone() })
        .add(Echo)
        .with_hook(PermissionGate::new(|_name, metadata| {
            !metadata.is_destructive
        }));
    let calls = [
        ToolCall::new("1", "echo", json!({"text": "fine"})),
        ToolCall::new("2", "wipe", json!({"path": "x"})),
    ];
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    assert_eq!(results[0].content(), "fine");
    assert!(matches!(results[1].output, Err(SkillError::Denied(_))));
    assert!(
        results[1]
            .content()
            .contains("permission to run `shred_file` was not granted")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// Records the order of before-hooks and of skill starts within one concurrent batch.
struct Order {
    log: Arc<Tracker>,
}

#[async_trait]
impl SkillHook for Order {
    async fn before(
        &self,
        _name: &str,
        _m: &SkillMetadata,
        args: &Value,
    ) -> Result<HookVerdict, SkillError> {
        // Yield so that, were hooks run concurrently, their log lines would interleave with starts.
        tokio::task::yield_now().await;
        self.log
            .log
            .lock()
            .unwrap()
            .push(format!("hook {}", args["label"].as_str().unwrap()));
        Ok(HookVerdict::Proceed)
    }
}

#[tokio::test(start_paused = true)]
async fn before_hooks_of_a_batch_run_one_at_a_time_in_call_order_before_it_starts() {
    let tracker = Arc::new(Tracker::default());
    let mut registry = Registry::new();
    registry
        .add(Probe {
            name: "look",
            safe: true,
            tracker: tracker.clone(),
        })
        .with_hook(Order {
            log: tracker.clone(),
        });
    let calls: Vec<ToolCall> = ["a", "b", "c"]
        .iter()
        .map(|l| ToolCall::new(*l, "look", json!({"label": l, "sleep_ms": 5})))
        .collect();
    registry.run_many(&calls, &SkillContext::default()).await;
    assert_eq!(
        &tracker.lines()[..6],
        [
            "hook a", "hook b", "hook c", "start a", "start b", "start c"
        ]
    );
}

#[tokio::test]
async fn hooks_see_the_skill_name_when_it_is_called_by_an_alias() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder(&runs);
    registry.with_hook(Scripted {
        label: "h",
        log: log.clone(),
        outcome: HookVerdict::Proceed,
    });
    let result = registry
        .run_one(
            &ToolCall::new("1", "wipe", json!({"path": "a"})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(
        &*result.name, "wipe",
        "the result keeps the alias the model used"
    );
    assert_eq!(
        *log.lock().unwrap(),
        [r#"h before shred_file {"path":"a"}"#, "h after shred_file"]
    );
}

/// A hook with a bug: it panics on some arguments, before or after the call.
struct Fragile;

#[async_trait]
impl SkillHook for Fragile {
    async fn before(
        &self,
        _name: &str,
        _m: &SkillMetadata,
        args: &Value,
    ) -> Result<HookVerdict, SkillError> {
        if args["text"] == "boom before" {
            panic!("the hook broke before");
        }
        Ok(HookVerdict::Proceed)
    }

    async fn after(
        &self,
        _name: &str,
        args: &Value,
        _result: &mut Result<SkillOutput, SkillError>,
    ) {
        if args["text"] == "boom after" {
            panic!("the hook broke after");
        }
    }
}

#[tokio::test]
async fn a_panicking_hook_becomes_an_error_result_and_the_batch_goes_on() {
    let mut registry = Registry::new();
    registry
        .add(Echo)
        .add(Big { chars: 3 })
        .with_hook(Fragile)
        // A gate's rule runs as `before` is called, not when its future is polled.
        .with_hook(PermissionGate::new(|name, _| {
            assert_ne!(name, "big", "the gate broke");
            true
        }));
    let calls = [
        ToolCall::new("1", "echo", json!({"text": "one"})),
        ToolCall::new("2", "echo", json!({"text": "boom before"})),
        ToolCall::new("3", "big", json!({})),
        ToolCall::new("4", "echo", json!({"text": "boom after"})),
        ToolCall::new("5", "echo", json!({"text": "five"})),
    ];
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    let ids: Vec<&str> = results.iter().map(|r| &*r.call_id).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5"]);
    assert_eq!(results[0].content(), "one");
    assert_eq!(results[4].content(), "five");
    for (i, broke) in [
        (1, "the hook broke before"),
        (2, "the gate broke"),
        (3, "the hook broke after"),
    ] {
        assert!(results[i].is_error(), "{:?}", results[i].output);
        let text = results[i].content();
        assert!(
            text.contains("hook panicked") && text.contains(broke),
            "{text}"
        );
    }
    // The same through the single-call path.
    let one = registry.run_one(&calls[1], &SkillContext::default()).await;
    assert!(
        one.content().contains("the hook broke before"),
        "{}",
        one.content()
    );
}

// The default for destructive skills: a person decides unless the application chose otherwise.

#[tokio::test]
async fn a_destructive_call_without_a_policy_waits_for_a_person_and_does_not_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = shredder_by_default(&runs);
    let results = registry
        .run_many(&[shred("a"), shred("b")], &SkillContext::default())
        .await;
    for result in &results {
        let Err(SkillError::ApprovalRequired(reason)) = &result.output else {
            panic!("expected ApprovalRequired, got {:?}", result.output);
        };
        assert!(reason.contains("`shred_file` is destructive"), "{reason}");
    }
    // One call alone takes the path without hooks too: the same answer.
    let one = registry
        .run_one(&shred("c"), &SkillContext::default())
        .await;
    assert!(matches!(one.output, Err(SkillError::ApprovalRequired(_))));
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing destructive ran");
}

#[tokio::test]
async fn hooks_that_only_watch_do_not_lift_the_default() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder_by_default(&runs);
    let log = Arc::new(Mutex::new(Vec::new()));
    registry.with_hook(Scripted {
        label: "watch",
        log: log.clone(),
        outcome: HookVerdict::Proceed,
    });
    let result = registry
        .run_one(&shred("a"), &SkillContext::default())
        .await;
    assert!(matches!(
        result.output,
        Err(SkillError::ApprovalRequired(_))
    ));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // The watching hook saw the call; its after-hook sees the call once it has run, and a
    // call that waits for a person has not.
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_hook_that_denies_wins_over_the_default_question() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder_by_default(&runs);
    registry.with_hook(Scripted {
        label: "no",
        log: Arc::new(Mutex::new(Vec::new())),
        outcome: HookVerdict::Deny("never".into()),
    });
    let result = registry
        .run_one(&shred("a"), &SkillContext::default())
        .await;
    assert!(matches!(result.output, Err(SkillError::Denied(ref r)) if r == "never"));
}

#[tokio::test]
async fn the_application_may_allow_or_deny_destructive_calls() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder_by_default(&runs);
    registry.destructive_calls(agent_core::DestructiveCalls::Deny);
    let denied = registry
        .run_one(&shred("a"), &SkillContext::default())
        .await;
    assert!(matches!(denied.output, Err(SkillError::Denied(_))));
    assert!(denied.content().contains("does not run destructive skills"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    registry.destructive_calls(agent_core::DestructiveCalls::Allow);
    let ran = registry
        .run_one(&shred("a"), &SkillContext::default())
        .await;
    assert!(ran.output.is_ok(), "{:?}", ran.output);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_permission_gate_is_the_policy_and_the_default_stands_aside() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = shredder_by_default(&runs);
    registry.with_hook(PermissionGate::new(|_name, _metadata| true));
    let result = registry
        .run_one(&shred("a"), &SkillContext::default())
        .await;
    assert!(result.output.is_ok(), "{:?}", result.output);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_call_a_person_approved_runs_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = shredder_by_default(&runs);
    let ctx = SkillContext::default();
    ctx.scope()
        .approve("call_1", "shred_file", &shred("a").arguments);
    let result = registry.run_one(&shred("a"), &ctx).await;
    assert!(result.output.is_ok(), "{:?}", result.output);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // The same call again, same id and arguments: the approval was used up.
    let again = registry.run_one(&shred("a"), &ctx).await;
    assert!(
        matches!(again.output, Err(SkillError::ApprovalRequired(_))),
        "{:?}",
        again.output
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_approval_does_not_run_another_call_with_the_same_id() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = shredder_by_default(&runs);
    let ctx = SkillContext::default();
    // Approved: shred_file(a). Asked next: shred_file(b), under the same id.
    ctx.scope()
        .approve("call_1", "shred_file", &shred("a").arguments);
    let other = registry.run_one(&shred("b"), &ctx).await;
    assert!(
        matches!(other.output, Err(SkillError::ApprovalRequired(_))),
        "{:?}",
        other.output
    );
    // Nor is the grant left for the approved call after a mismatch took it: it answered one call.
    let approved = registry.run_one(&shred("a"), &ctx).await;
    assert!(matches!(
        approved.output,
        Err(SkillError::ApprovalRequired(_))
    ));
    // A grant for another skill does not let this one through either.
    ctx.scope()
        .approve("call_1", "wipe_disk", &shred("a").arguments);
    let wrong_skill = registry.run_one(&shred("a"), &ctx).await;
    assert!(matches!(
        wrong_skill.output,
        Err(SkillError::ApprovalRequired(_))
    ));
    // Keys in another order are the same arguments.
    let mut reordered = shred("a");
    reordered.arguments = serde_json::from_str(&reordered.arguments.to_string()).unwrap();
    ctx.scope()
        .approve("call_1", "shred_file", &reordered.arguments);
    ctx.scope().clear_decisions();
    let cleared = registry.run_one(&shred("a"), &ctx).await;
    assert!(matches!(
        cleared.output,
        Err(SkillError::ApprovalRequired(_))
    ));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn nobody_is_asked_about_arguments_the_skill_would_refuse() {
    let runs = Arc::new(AtomicUsize::new(0));
    let bad = ToolCall::new("call_1", "shred_file", json!({ "path": 7 }));
    // Without hooks (one call, and a batch) and with a watching hook: the same error, first.
    let plain = shredder_by_default(&runs);
    let one = plain.run_one(&bad, &SkillContext::default()).await;
    assert!(
        matches!(one.output, Err(SkillError::BadArgs { .. })),
        "{:?}",
        one.output
    );
    let batch = plain
        .run_many(&[bad.clone(), bad.clone()], &SkillContext::default())
        .await;
    assert!(
        batch
            .iter()
            .all(|r| matches!(r.output, Err(SkillError::BadArgs { .. })))
    );
    let mut watched = shredder_by_default(&runs);
    watched.with_hook(Scripted {
        label: "watch",
        log: Arc::new(Mutex::new(Vec::new())),
        outcome: HookVerdict::Proceed,
    });
    let hooked = watched.run_one(&bad, &SkillContext::default()).await;
    assert!(
        matches!(hooked.output, Err(SkillError::BadArgs { .. })),
        "{:?}",
        hooked.output
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
