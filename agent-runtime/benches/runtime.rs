//! The loop's cost per turn: 200 and 400 scripted turns (one tool call each, then a final answer)
//! through `AgentRuntime` with `MockProvider`. Linear growth means the 400-turn run takes 2.0× the
//! 200-turn one; the per-turn overhead is the 200-turn time / 201.
//!
//! `cargo bench -p agent-runtime --bench runtime` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// Look something up.
///
/// # Arguments
/// * `key` - What.
#[skill(read_only, register = false)]
async fn lookup(key: String) -> Result<String, SkillError> {
    Ok(format!("{key}: 42"))
}

fn script(turns: usize) -> MockProvider {
    let mut replies: Vec<MockReply> = (0..turns)
        .map(|i| {
            MockReply::text_and_tool_calls(
                "Next.",
                [ToolCall::new(
                    format!("c{i}"),
                    "lookup",
                    json!({"key": format!("k{i}")}),
                )],
            )
        })
        .collect();
    replies.push(MockReply::text("Done."));
    MockProvider::new(replies).without_recording()
}

fn runtime(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("runtime");
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_secs(1));
    }
    group.sample_size(20);
    for turns in [200usize, 400] {
        group.bench_function(format!("{turns} turns"), |b| {
            b.to_async(&rt).iter_batched(
                || {
                    let mut registry = Registry::new();
                    registry.add(LookupSkill);
                    AgentRuntime::new(script(turns), registry).max_steps(turns + 1).stuck_after(turns)
                },
                |runtime| async move { black_box(runtime.run("look everything up").await.unwrap()) },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, runtime);
criterion_main!(benches);
