//! The loop's cost per turn: 200 and 400 scripted turns (one tool call each, then a final answer)
//! through `AgentRuntime` with `MockProvider`. Linear growth means the 400-turn run takes 2.0× the
//! 200-turn one; the per-turn overhead is the 200-turn time / 201.
//!
//! And the cost of an agent used as a skill (`nested`): a run whose model makes `n` calls in one
//! turn to `lookup` (the floor), against one whose `n` calls go to a child agent that calls
//! `lookup` itself (each child: two scripted turns of its own), for n = 1, 4 and 16.
//!
//! `cargo bench -p agent-runtime --bench runtime` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{
    ChatRequest, ChatResponse, EventStream, LlmProvider, Message, MockProvider, MockReply,
    ProviderError, Role, StopReason,
};
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

/// A parent whose one turn makes `n` calls to `callee`, then answers.
fn fan_out(n: usize, callee: &str, registry: Registry) -> AgentRuntime {
    // Different arguments for each call: the same call repeated would be refused as stuck.
    let calls = (0..n).map(|i| {
        let args = if callee == "lookup" {
            json!({"key": format!("k{i}")})
        } else {
            json!({"goal": format!("look k{i} up")})
        };
        ToolCall::new(format!("p{i}"), callee, args)
    });
    let model = MockProvider::new([MockReply::tool_calls(calls), MockReply::text("Done.")])
        .without_recording();
    AgentRuntime::new(model, registry).stuck_after(n + 1)
}

/// The child's model: it calls `lookup` when the last message is the goal and answers when it is
/// the result. Stateless, so children running at once each get their two turns.
struct LookThenAnswer;

#[async_trait::async_trait]
impl LlmProvider for LookThenAnswer {
    fn name(&self) -> &str {
        "look-then-answer"
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let message = match request.messages.last().map(|m| m.role) {
            Some(Role::Tool) => Message::assistant("k: 42"),
            _ => Message::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("c1", "lookup", json!({"key": "k"}))],
            ),
        };
        Ok(ChatResponse {
            message,
            stop_reason: StopReason::EndTurn,
            provider_stop_reason: None,
            usage: Default::default(),
            truncated_tool_calls: Vec::new(),
            model: None,
            id: None,
            provider: None,
        })
    }

    fn stream(&self, _request: &ChatRequest<'_>) -> EventStream {
        unreachable!("the runtime is not streaming")
    }
}

/// A child agent that calls `lookup` once, then answers.
fn child() -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    AgentRuntime::new(LookThenAnswer, registry)
}

fn nested(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("nested");
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_secs(1));
    }
    for n in [1usize, 4, 16] {
        group.bench_function(format!("{n} skill calls"), |b| {
            b.to_async(&rt).iter_batched(
                || {
                    let mut registry = Registry::new();
                    registry.add(LookupSkill);
                    fan_out(n, "lookup", registry)
                },
                |runtime| async move { black_box(runtime.run("go").await.unwrap()) },
                criterion::BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("{n} agent calls"), |b| {
            b.to_async(&rt).iter_batched(
                || {
                    let mut registry = Registry::new();
                    registry.add(child().into_skill("helper", "Looks things up."));
                    fan_out(n, "helper", registry)
                },
                |runtime| async move { black_box(runtime.run("go").await.unwrap()) },
                criterion::BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, runtime, nested, trust);
criterion_main!(benches);

/// Delete a branch (destructive: the run pauses on it).
///
/// # Arguments
/// * `name` - The branch.
#[skill(destructive, register = false)]
async fn delete_branch(name: String) -> Result<String, SkillError> {
    Ok(format!("deleted {name}"))
}

/// A run of `turns` lookups that then pauses on a destructive call: its state.
fn paused_state(rt: &tokio::runtime::Runtime, turns: usize) -> agent_runtime::RunState {
    let mut replies: Vec<MockReply> = (0..turns)
        .map(|i| {
            MockReply::tool_calls([ToolCall::new(
                format!("c{i}"),
                "lookup",
                json!({"key": format!("k{i}")}),
            )])
        })
        .collect();
    replies.push(MockReply::tool_calls([ToolCall::new(
        "d1",
        "delete_branch",
        json!({"name": "old-feature"}),
    )]));
    let mut registry = Registry::new();
    registry.add(LookupSkill).add(DeleteBranchSkill);
    let runtime = AgentRuntime::new(MockProvider::new(replies).without_recording(), registry)
        .max_steps(turns + 2)
        .stuck_after(turns + 1);
    let outcome = rt
        .block_on(std::future::IntoFuture::into_future(
            runtime.run("look, then tidy"),
        ))
        .unwrap();
    *outcome.state.expect("the run paused")
}

/// What trust costs when a run pauses: the digest of a pending call against writing its
/// arguments as JSON (the floor), and sealing and checking a paused state of 50 turns against
/// writing the state as JSON once (the floor: a state that leaves is written anyway).
fn trust(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let state = paused_state(&rt, 50);
    let pending = state.pending()[0].clone();
    let keys = agent_runtime::StateKeys::new("bench", [7u8; 32]).unwrap();
    let sealing = AgentRuntime::new(MockProvider::new([]), Registry::new()).seal_states(keys);
    let mut group = c.benchmark_group("trust");
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_secs(1));
    }
    group.bench_function("pending call: arguments as JSON (floor)", |b| {
        b.iter(|| black_box(serde_json::to_string(&pending.call.arguments).unwrap()))
    });
    group.bench_function("pending call: digest", |b| {
        b.iter(|| black_box(pending.digest()))
    });
    group.bench_function("paused state of 50 turns: as JSON (floor)", |b| {
        b.iter(|| black_box(serde_json::to_vec(&state).unwrap()))
    });
    group.bench_function("paused state of 50 turns: seal", |b| {
        b.iter(|| black_box(agent_runtime::bench_support::seal(&sealing, &state)))
    });
    let sealed = agent_runtime::bench_support::seal(&sealing, &state);
    group.bench_function("paused state of 50 turns: check the seal", |b| {
        b.iter(|| black_box(agent_runtime::bench_support::check(&sealing, &sealed)))
    });
    group.finish();
}
