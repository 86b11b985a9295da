//! Batch execution against its ideal: 16 concurrency-safe calls that each wait on a 50 ms timer
//! (ideal: 50 ms, with the limit raised to 16), 16 calls that must run alone (ideal: 16 × 50 ms),
//! and a mixed sequence (8 safe, 1 alone, 8 safe: ideal 150 ms).
//!
//! `cargo bench -p agent-core --bench batches` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;
use std::time::Duration;

use agent_core::{Registry, SkillContext, SkillError, ToolCall, skill};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// Wait 50 ms.
#[skill(read_only, register = false)]
async fn wait_safe() -> Result<&'static str, SkillError> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok("ok")
}

/// Wait 50 ms, alone.
#[skill(register = false)]
async fn wait_alone() -> Result<&'static str, SkillError> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok("ok")
}

fn calls(names: &[&str]) -> Vec<ToolCall> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| ToolCall::new(format!("c{i}"), *n, json!({})))
        .collect()
}

fn batches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let mut registry = Registry::new();
    registry
        .with_max_concurrency(16)
        .add(WaitSafeSkill)
        .add(WaitAloneSkill);
    let ctx = SkillContext::default();
    let parallel = calls(&["wait_safe"; 16]);
    let serial = calls(&["wait_alone"; 16]);
    let mut mixed_names = vec!["wait_safe"; 8];
    mixed_names.push("wait_alone");
    mixed_names.extend(["wait_safe"; 8]);
    let mixed = calls(&mixed_names);

    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let mut group = c.benchmark_group("batches");
    group.sample_size(10);
    if quick {
        group
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_secs(1));
    }
    for (name, calls) in [
        ("16 safe (ideal 50 ms)", &parallel),
        ("16 alone (ideal 800 ms)", &serial),
        ("8 safe, 1 alone, 8 safe (ideal 150 ms)", &mixed),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt)
                .iter(|| async { black_box(registry.run_many(calls, &ctx).await) })
        });
    }
    group.finish();
}

criterion_group!(benches, batches);
criterion_main!(benches);
