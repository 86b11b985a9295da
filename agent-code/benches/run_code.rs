//! What a program costs against the same calls made directly, side by side in one run:
//!
//! - the floor: ten `add` calls through `Registry::run_one`, one after another, as the loop makes
//!   ten calls (without the ten model turns they would take, which no bench here can count);
//! - `run_code` with an empty program: starting the interpreter and tearing it down;
//! - `run_code` with a program that makes the same ten calls, one after another;
//! - `run_code` with a program that makes them together (`Promise.all`).
//!
//! `cargo bench -p agent-code --bench run_code` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;
use std::sync::Arc;

use agent_code::CodeMode;
use agent_core::{CurrentRegistry, Registry, SkillContext, SkillError, ToolCall, skill};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// Add two numbers.
///
/// # Arguments
/// * `a` - The first.
/// * `b` - The second.
#[skill(read_only, register = false)]
async fn add(a: i64, b: i64) -> Result<i64, SkillError> {
    Ok(a + b)
}

fn run_code(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut registry = Registry::new();
    registry.add(AddSkill).with_code_mode();
    let registry = Arc::new(registry);
    let ctx = SkillContext::new(".").with_extension(CurrentRegistry(registry.clone()));
    let program = |code: &str| ToolCall::new("p1", "run_code", json!({ "code": code }));
    let empty = program("return 0;");
    let serial = program(
        "let t = 0; for (let i = 0; i < 10; i++) t += await add({ a: i, b: 1 }); return t;",
    );
    let together = program(
        "const r = await Promise.all([...Array(10).keys()].map((i) => add({ a: i, b: 1 }))); \
         return r.reduce((x, y) => x + y, 0);",
    );
    let calls: Vec<ToolCall> = (0..10)
        .map(|i| ToolCall::new(format!("c{i}"), "add", json!({"a": i, "b": 1})))
        .collect();
    let mut group = c.benchmark_group("run_code");
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(300))
            .measurement_time(std::time::Duration::from_secs(2));
    }
    group.bench_function("floor: 10 calls through run_one", |b| {
        b.to_async(&rt).iter(|| async {
            for call in &calls {
                black_box(registry.run_one(call, &ctx).await);
            }
        })
    });
    for (name, call) in [
        ("empty program", &empty),
        ("program: 10 calls one after another", &serial),
        ("program: 10 calls together", &together),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let result = registry.run_one(call, &ctx).await;
                assert!(result.output.is_ok(), "{:?}", result.output);
                black_box(result)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, run_code);
criterion_main!(benches);
