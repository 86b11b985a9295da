//! The scripted agents the child processes run: the model's choices come from `MockProvider`,
//! everything else is the real runtime (skills, a sub-agent, a permission gate, sessions, prices).

use agent_core::{Permission, PermissionGate, Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply, ModelPrice, PriceTable, Usage};
use agent_runtime::{AgentRuntime, MemorySessionStore, RunOutcome};
use serde_json::json;

/// What the run is asked; the tests look for it where content must not be.
pub const GOAL: &str = "Tell me about the secret-wren-goal";
/// The system prompt.
pub const SYSTEM: &str = "You are a careful ornithologist.";
/// The parent's last answer.
pub const ANSWER: &str = "A wren is a small private bird.";
/// The session the tree run is in (`gen_ai.conversation.id`).
pub const SESSION: &str = "s-otel-42";

/// Look something up.
///
/// # Arguments
/// * `key` - What.
#[skill(read_only, register = false)]
async fn lookup(key: String) -> Result<String, SkillError> {
    Ok(format!("{key} is a bird"))
}

/// Ring a bell (a person says yes first).
#[skill(destructive, register = false)]
async fn ring() -> Result<String, SkillError> {
    Ok("rung".into())
}

fn usage(input: u64, output: u64, cache_read: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        ..Usage::default()
    }
}

/// `reply` as answered by `model`, with the answer id `id` and `usage`.
fn answered(reply: MockReply, model: &str, id: &str, usage: Usage) -> MockReply {
    match reply.with_usage(usage) {
        MockReply::Response(mut response) => {
            response.model = Some(model.into());
            response.id = Some(id.into());
            MockReply::Response(response)
        }
        other => other,
    }
}

fn prices() -> PriceTable {
    PriceTable::empty()
        .with_model("wren-1", ModelPrice::per_million(2.0, 10.0).cache_read(0.2))
        .with_model("robin-1", ModelPrice::per_million(1.0, 4.0))
}

/// A run in session [`SESSION`] whose model calls `lookup` (c1) and the sub-agent `research`
/// (c2) in one turn, then answers; `research` calls `lookup` (c3) itself, then answers. `goal`
/// replaces [`GOAL`] when given (a long one, for the bound on attribute values).
pub async fn tree(goal: Option<String>) -> RunOutcome {
    let mut child_registry = Registry::new();
    child_registry.add(LookupSkill);
    let child = AgentRuntime::new(
        MockProvider::new([
            answered(
                MockReply::tool_calls([ToolCall::new("c3", "lookup", json!({"key": "robin"}))]),
                "robin-1",
                "msg_r1",
                usage(40, 8, 0),
            ),
            answered(
                MockReply::text("Robins are birds too."),
                "robin-1",
                "msg_r2",
                usage(60, 6, 0),
            ),
        ])
        .with_model("robin-1"),
        child_registry,
    )
    .prices(prices());
    let mut registry = Registry::new();
    registry
        .add(LookupSkill)
        .add(child.into_skill("research", "Researches a bird."));
    let parent = MockProvider::new([
        answered(
            MockReply::tool_calls([
                ToolCall::new("c1", "lookup", json!({"key": "secret-wren-arg"})),
                ToolCall::new("c2", "research", json!({"goal": "robins"})),
            ]),
            "wren-1",
            "msg_1",
            usage(100, 20, 30),
        ),
        answered(
            MockReply::text(ANSWER),
            "wren-1",
            "msg_2",
            usage(150, 10, 0),
        ),
    ])
    .with_model("wren-1");
    let store = MemorySessionStore::default();
    AgentRuntime::new(parent, registry)
        .system(SYSTEM)
        .prices(prices())
        .run(goal.unwrap_or_else(|| GOAL.to_owned()))
        .in_session(&store, SESSION)
        .await
        .expect("the scripted run ends")
}

/// The registry of the pausing run: `ring`, which a person must approve.
fn gated() -> Registry {
    let mut registry = Registry::new();
    registry.add(RingSkill);
    registry.with_hook(PermissionGate::with(|_, metadata| {
        if metadata.is_destructive {
            Permission::Ask("rings".into())
        } else {
            Permission::Allow
        }
    }));
    registry
}

/// The first half of a paused run: the model calls `ring` (c1), which waits for approval.
pub async fn pause() -> RunOutcome {
    let mock = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "c1",
        "ring",
        json!({}),
    )])])
    .with_model("wren-1");
    AgentRuntime::new(mock, gated())
        .run("Ring the bell.")
        .await
        .expect("the run pauses")
}

/// The second half, in another process: `ring` approved, the model answers.
pub async fn resume(state: agent_runtime::RunState) -> RunOutcome {
    let mock = MockProvider::new([MockReply::text("Rang once.")]).with_model("wren-1");
    AgentRuntime::new(mock, gated())
        .continue_paused(state, [("c1", agent_runtime::Decision::Approve)])
        .await
        .expect("the run goes on")
}

/// A parent whose model asks `gardener` (`p1`), an agent used as a skill, whose model rings
/// (`c1`), which waits for approval; `parent` and `child` are the two models' replies.
fn nested(parent: Vec<MockReply>, child: Vec<MockReply>) -> AgentRuntime {
    let gardener = AgentRuntime::new(MockProvider::new(child).with_model("wren-1"), gated());
    let mut registry = Registry::new();
    registry.add(gardener.into_skill("gardener", "Rings the bell."));
    AgentRuntime::new(MockProvider::new(parent).with_model("wren-1"), registry)
}

/// The first half of a run that pauses inside an agent used as a skill.
pub async fn nested_pause() -> RunOutcome {
    nested(
        vec![MockReply::tool_calls([ToolCall::new(
            "p1",
            "gardener",
            json!({"goal": "Ring the bell."}),
        )])],
        vec![MockReply::tool_calls([ToolCall::new(
            "c1",
            "ring",
            json!({}),
        )])],
    )
    .run("Have the bell rung.")
    .await
    .expect("the run pauses")
}

/// The second half, in another process: the inner `ring` approved by its path id.
pub async fn nested_resume(state: agent_runtime::RunState) -> RunOutcome {
    nested(
        vec![MockReply::text("The gardener rang.")],
        vec![MockReply::text("Rang once.")],
    )
    .continue_paused(state, [("p1/c1", agent_runtime::Decision::Approve)])
    .await
    .expect("the run goes on")
}
