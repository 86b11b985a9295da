//! Live sets ([`LiveSkills`]): skills that change while a registry is held behind an `Arc`, as a
//! runtime holds it. What the model is shown, what calls reach, and what a change in the middle
//! of a batch, a bad skill, a name clash or a hook does.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_core::registry::LiveSkills;
use agent_core::{
    DynSkill, HookVerdict, Registry, RegistryError, Skill, SkillContext, SkillError, SkillHook,
    SkillMetadata, SkillOutput, ToolCall, async_trait,
};
use common::*;
use serde_json::{Value, json};

/// A skill named at run time that answers with a fixed text.
struct Named {
    name: String,
    answer: String,
    defer: bool,
}

fn named(name: &str, answer: &str) -> Arc<dyn DynSkill> {
    Arc::new(Named {
        name: name.into(),
        answer: answer.into(),
        defer: false,
    })
}

fn deferred(name: &str, answer: &str) -> Arc<dyn DynSkill> {
    Arc::new(Named {
        name: name.into(),
        answer: answer.into(),
        defer: true,
    })
}

#[async_trait]
impl Skill for Named {
    type Input = NoInput;
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "Answer with a fixed text about weather."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn should_defer(&self) -> bool {
        self.defer
    }
    async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok(self.answer.clone().into())
    }
}

/// A skill that puts other skills in place of a live set's when it runs, as an MCP server does
/// when a tool call changes its tool list.
struct Swap {
    live: LiveSkills,
    to: Vec<Arc<dyn DynSkill>>,
}

#[async_trait]
impl Skill for Swap {
    type Input = NoInput;
    fn name(&self) -> &str {
        "swap"
    }
    fn description(&self) -> &str {
        "Change the live skills."
    }
    async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        assert!(self.live.replace(self.to.clone()).is_empty());
        Ok("swapped".into())
    }
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall::new(id, name, json!({}))
}

fn names(registry: &Registry) -> Vec<String> {
    registry.definitions().into_iter().map(|d| d.name).collect()
}

#[tokio::test]
async fn a_registry_behind_an_arc_shows_and_runs_what_its_live_set_has_now() {
    let live = LiveSkills::try_new([named("old", "from old")]).unwrap();
    let mut registry = Registry::new();
    registry.add(Echo).add_live(live.clone());
    let registry = Arc::new(registry);
    let ctx = SkillContext::default();
    assert_eq!(names(&registry), ["echo", "old"]);
    assert_eq!(
        registry.run_one(&call("1", "old"), &ctx).await.content(),
        "from old"
    );
    let version = registry.live_version();

    assert!(live.replace([named("new", "from new")]).is_empty());
    assert_eq!(
        registry.live_version(),
        version + 1,
        "a replacement is seen"
    );
    assert_eq!(names(&registry), ["echo", "new"]);
    assert_eq!(
        registry.run_one(&call("2", "new"), &ctx).await.content(),
        "from new"
    );
    let gone = registry.run_one(&call("3", "old"), &ctx).await;
    assert!(
        matches!(&gone.output, Err(SkillError::UnknownSkill { suggestions, .. }) if suggestions.contains(&"new".to_owned())),
        "a removed skill is unknown, and the error names the live set's skills: {gone:?}"
    );
    assert!(registry.contains("new") && !registry.contains("old"));
    assert!(registry.metadata("new").unwrap().is_read_only);
    assert_eq!(registry.get("new").unwrap().name(), "new");
    assert_eq!(registry.names().collect::<Vec<_>>(), ["echo", "new"]);
    assert_eq!(registry.len(), 2);
    assert!(registry.has_live_skills());
}

#[tokio::test]
async fn a_batch_keeps_the_skills_it_started_with_and_the_next_one_sees_the_change() {
    let live = LiveSkills::try_new([named("old", "from old")]).unwrap();
    let mut registry = Registry::new();
    registry
        .add(Swap {
            live: live.clone(),
            to: vec![named("new", "from new")],
        })
        .add_live(live.clone());
    let ctx = SkillContext::default();
    // `swap` runs alone, before `old`: the set changes in between, within one batch of calls.
    let results = registry
        .run_many(
            &[call("1", "swap"), call("2", "old"), call("3", "new")],
            &ctx,
        )
        .await;
    assert_eq!(results[0].content(), "swapped");
    assert_eq!(
        results[1].content(),
        "from old",
        "looked up when the batch started"
    );
    assert!(
        matches!(results[2].output, Err(SkillError::UnknownSkill { .. })),
        "`new` was not there when the batch started: {:?}",
        results[2]
    );
    let next = registry
        .run_many(&[call("4", "old"), call("5", "new")], &ctx)
        .await;
    assert!(matches!(
        next[0].output,
        Err(SkillError::UnknownSkill { .. })
    ));
    assert_eq!(next[1].content(), "from new");
}

#[test]
fn a_bad_skill_is_left_out_with_its_reason_and_the_others_are_put_in_place() {
    let live = LiveSkills::try_new([named("keep", "")]).unwrap();
    let refused = live.replace([
        named("has space", ""),
        named("fine", ""),
        named("fine", "again"),
        named("other", ""),
    ]);
    assert_eq!(live.names(), ["fine", "other"]);
    assert!(matches!(&refused[..], [
        RegistryError::InvalidName { name },
        RegistryError::Duplicate { name: twice, .. },
    ] if name == "has space" && twice == "fine"));
    // Made strictly, a set refuses the first bad skill and is not made.
    assert!(matches!(
        LiveSkills::try_new([named("ok", ""), named("bad/name", "")]),
        Err(RegistryError::InvalidName { .. })
    ));
}

#[tokio::test]
async fn the_registrys_own_skill_wins_a_name_clash_and_is_shown_once() {
    let live = LiveSkills::try_new([named("echo", "the live one"), named("say", "alias")]).unwrap();
    let other = LiveSkills::try_new([named("solo", "first set"), named("late", "")]).unwrap();
    let later = LiveSkills::try_new([named("solo", "second set")]).unwrap();
    let mut registry = Registry::new();
    registry
        .add(Echo)
        .add_live(live)
        .add_live(other)
        .add_live(later);
    let defs = registry.definitions();
    let shown: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    // The live `say` is shadowed too: it is an alias of the registry's `echo`.
    assert_eq!(shown, ["echo", "solo", "late"], "each name once");
    let ctx = SkillContext::default();
    let echo = ToolCall::new("1", "echo", json!({"text": "own"}));
    assert_eq!(registry.run_one(&echo, &ctx).await.content(), "own");
    // `say` is an alias of the registry's `echo`: the alias is the registry's too.
    let say = ToolCall::new("2", "say", json!({"text": "alias of own"}));
    assert_eq!(registry.run_one(&say, &ctx).await.content(), "alias of own");
    assert_eq!(
        registry.run_one(&call("3", "solo"), &ctx).await.content(),
        "first set"
    );
}

/// Denies every call of one skill.
struct DenyNamed(&'static str);

#[async_trait]
impl SkillHook for DenyNamed {
    async fn before(
        &self,
        name: &str,
        _: &SkillMetadata,
        _: &Value,
    ) -> Result<HookVerdict, SkillError> {
        Ok(if name == self.0 {
            HookVerdict::Deny("not this one".into())
        } else {
            HookVerdict::Proceed
        })
    }
}

#[tokio::test]
async fn the_registrys_hooks_see_a_skill_that_came_later() {
    let live = LiveSkills::default();
    let mut registry = Registry::new();
    registry.with_hook(DenyNamed("wipe")).add_live(live.clone());
    live.replace([named("wipe", "wiped"), named("look", "looked")]);
    let ctx = SkillContext::default();
    let results = registry
        .run_many(&[call("1", "wipe"), call("2", "look")], &ctx)
        .await;
    assert!(
        matches!(&results[0].output, Err(SkillError::Denied(reason)) if reason == "not this one")
    );
    assert_eq!(results[1].content(), "looked");
}

#[tokio::test]
async fn deferred_live_skills_are_found_by_tool_search_as_the_set_is_at_each_search() {
    let live = LiveSkills::try_new([deferred("forecast", "sunny")]).unwrap();
    let mut registry = Registry::new();
    registry.add(Echo).add_live(live.clone());
    assert!(
        registry.contains("tool_search"),
        "a deferred live skill brings the search"
    );
    assert_eq!(names(&registry), ["echo", "tool_search"]);

    live.replace([deferred("forecast", "sunny"), deferred("radar", "rain")]);
    let ctx = SkillContext::default();
    let search = ToolCall::new("1", "tool_search", json!({"query": "radar"}));
    let found = registry.run_one(&search, &ctx).await;
    assert!(found.content().contains("radar"), "{}", found.content());
    let shown: Vec<String> = registry
        .definitions_for(ctx.scope())
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(shown, ["echo", "tool_search", "radar"]);

    live.replace([]);
    let none = registry.run_one(&search, &ctx).await;
    assert!(
        none.content().starts_with("No tool matches"),
        "{}",
        none.content()
    );
}

#[test]
fn without_tool_search_a_live_sets_deferred_skills_are_shown() {
    let live = LiveSkills::default();
    let mut registry = Registry::new();
    registry.add(Echo).add_live(live.clone());
    live.replace([deferred("forecast", "")]);
    assert!(!registry.contains("tool_search"));
    assert_eq!(
        names(&registry),
        ["echo", "forecast"],
        "not out of the model's reach"
    );
}

#[test]
fn a_weak_handle_does_not_keep_the_set_alive() {
    let live = LiveSkills::try_new([named("a", "")]).unwrap();
    let weak = live.downgrade();
    assert_eq!(weak.upgrade().unwrap().names(), ["a"]);
    let mut registry = Registry::new();
    registry.add_live(live);
    assert!(weak.upgrade().is_some(), "the registry holds it");
    drop(registry);
    assert!(weak.upgrade().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_while_calls_are_dispatched_gives_each_call_one_set_or_the_other() {
    let live = LiveSkills::try_new([named("ask", "one")]).unwrap();
    let mut registry = Registry::new();
    registry.add_live(live.clone());
    let registry = Arc::new(registry);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (live, stop) = (live.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let answer = if i.is_multiple_of(2) { "two" } else { "one" };
                live.replace([named("ask", answer)]);
                i += 1;
            }
            i
        })
    };
    let ctx = SkillContext::default();
    let calls: Vec<ToolCall> = (0..8).map(|i| call(&i.to_string(), "ask")).collect();
    for _ in 0..2_000 {
        for result in registry.run_many(&calls, &ctx).await {
            let text = result.content();
            assert!(text == "one" || text == "two", "{text}");
        }
        assert_eq!(registry.definitions().len(), 1);
    }
    stop.store(true, Ordering::Relaxed);
    assert!(swapper.join().unwrap() > 0);
}
