//! One `Registry::run_many` call with one cheap skill call, against the floor: deserializing the
//! arguments with `serde_json::from_value` and calling the function directly. With no hooks, then
//! with three hooks that proceed (each implements `before` as an `async fn`; `after` is left to its
//! default), then with three `PermissionGate`s that allow the call.
//!
//! `cargo bench -p agent-core --bench dispatch` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;

use agent_core::__private::{schemars, serde};
use agent_core::{
    DynSkill, HookOutcome, PermissionGate, Registry, Skill, SkillContext, SkillError, SkillHook,
    SkillMetadata, SkillOutput, ToolCall, async_trait,
};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::__private::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::__private::schemars")]
struct AddInput {
    a: i64,
    b: i64,
}

async fn add(input: AddInput) -> Result<String, SkillError> {
    Ok((input.a + input.b).to_string())
}

struct Add;

#[async_trait]
impl Skill for Add {
    type Input = AddInput;
    fn name(&self) -> &str {
        "add"
    }
    fn description(&self) -> &str {
        "Add two numbers."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    async fn run(&self, input: AddInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        add(input).await.map(SkillOutput::from)
    }
}

struct Pass;

#[async_trait]
impl SkillHook for Pass {
    async fn before(
        &self,
        _: &str,
        _: &SkillMetadata,
        _: &Value,
    ) -> Result<HookOutcome, SkillError> {
        Ok(HookOutcome::Proceed)
    }
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let args = json!({"a": 2, "b": 40});
    let calls = [ToolCall::new("call_1", "add", args.clone())];
    let ctx = SkillContext::default();
    let mut plain = Registry::new();
    plain.add(Add);
    let mut hooked = Registry::new();
    hooked
        .add(Add)
        .with_hook(Pass)
        .with_hook(Pass)
        .with_hook(Pass);
    let mut gated = Registry::new();
    gated
        .add(Add)
        .with_hook(PermissionGate::new(|_, m| m.is_read_only))
        .with_hook(PermissionGate::new(|_, m| !m.is_destructive))
        .with_hook(PermissionGate::new(|name, _| name != "delete_file"));

    let mut group = c.benchmark_group("dispatch");
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_secs(1));
    }
    group.bench_function("floor: from_value + direct call", |b| {
        b.to_async(&rt).iter(|| async {
            let input: AddInput = serde_json::from_value(black_box(&args).clone()).unwrap();
            black_box(add(input).await.unwrap())
        })
    });
    // Not a goal: the skill's own share of a registry call (arguments parsed from `&Value`, the
    // boxed future `#[async_trait]` makes), to show what the registry itself adds.
    let skill: std::sync::Arc<dyn DynSkill> = std::sync::Arc::new(Add);
    group.bench_function("DynSkill::start + await", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(skill.start(black_box(&args), &ctx).unwrap().await.unwrap())
        })
    });
    group.bench_function("run_many, no hooks", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(plain.run_many(black_box(&calls), &ctx).await) })
    });
    group.bench_function("run_many, 3 hooks", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(hooked.run_many(black_box(&calls), &ctx).await) })
    });
    group.bench_function("run_many, 3 permission gates", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(gated.run_many(black_box(&calls), &ctx).await) })
    });
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
