//! A small team of agents, offline: a coordinator delegates to a `reader` and a `writer` (agents
//! used as skills), the writer's `publish` needs a person's approval, and the pause travels up to
//! the coordinator, is kept as JSON, and continues exactly once. Then the coordinator hands a
//! second conversation to a `support` agent.
//!
//! ```sh
//! cargo run --example team
//! ```
//!
//! Every model is scripted (a [`MockProvider`]) so that the example runs without a key; real
//! providers compose the same way.

use std::sync::atomic::{AtomicUsize, Ordering};

use eugene::{
    AgentRuntime, Decision, FinishReason, MockProvider, MockReply, Registry, RunState, SkillError,
    ToolCall, Usage, skill,
};
use serde_json::json;

/// Read the release notes.
#[skill(read_only, register = false)]
async fn read_notes() -> Result<String, SkillError> {
    Ok("v2.1: faster startup, a new `export` command, two bugs fixed.".into())
}

/// How many times `publish` really ran.
static PUBLISHED: AtomicUsize = AtomicUsize::new(0);

/// Publish a post on the project's blog.
///
/// # Arguments
/// * `text` - The post.
#[skill(destructive, register = false)]
async fn publish(text: String) -> Result<String, SkillError> {
    PUBLISHED.fetch_add(1, Ordering::SeqCst);
    Ok(format!("published {} characters", text.len()))
}

fn tokens(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    }
}

fn reader() -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(ReadNotesSkill);
    let model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("r1", "read_notes", json!({}))])
            .with_usage(tokens(40, 5)),
        MockReply::text("Faster startup, an `export` command, two fixes.")
            .with_usage(tokens(60, 12)),
    ]);
    AgentRuntime::new(model, registry).system("You read documents and report what they say.")
}

fn writer() -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(PublishSkill);
    let post = "v2.1 is out: faster startup and a new export command.";
    let model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("w1", "publish", json!({"text": post}))])
            .with_usage(tokens(50, 20)),
        MockReply::text("Posted.").with_usage(tokens(70, 3)),
    ]);
    AgentRuntime::new(model, registry).system("You write and publish short posts.")
}

fn support() -> AgentRuntime {
    let model = MockProvider::new([MockReply::text(
        "Support here: `export` writes CSV; see --help.",
    )]);
    AgentRuntime::new(model, Registry::new()).system("You answer users' questions.")
}

fn coordinator(model: MockProvider) -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(reader().into_skill("reader", "Reads documents and says what is in them."));
    registry.add(writer().into_skill("writer", "Writes and publishes posts."));
    AgentRuntime::new(model, registry)
        .system("You coordinate a reader and a writer.")
        .handoff(
            "support",
            "Answers users' questions about the product.",
            support(),
        )
}

#[tokio::main]
async fn main() {
    let team = coordinator(MockProvider::new([
        MockReply::tool_calls([
            ToolCall::new(
                "p1",
                "reader",
                json!({"goal": "Summarise the v2.1 release notes."}),
            ),
            ToolCall::new(
                "p2",
                "writer",
                json!({"goal": "Announce v2.1: faster startup, export."}),
            ),
        ])
        .with_usage(tokens(100, 30)),
        MockReply::text("Read the notes and announced the release.").with_usage(tokens(150, 10)),
    ]));
    let paused = team.run("Announce the v2.1 release.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("expected a pause, got {:?}", paused.finish);
    };
    for call in pending {
        println!("paused: {} ({}) — {}", call.path(), call.id(), call.reason);
    }
    // The state is plain data: keep it anywhere, continue in any process.
    let kept = serde_json::to_string(&paused.state.unwrap()).unwrap();
    println!(
        "kept {} bytes of state; publish ran {} times",
        kept.len(),
        PUBLISHED.load(Ordering::SeqCst)
    );
    let state: RunState = serde_json::from_str(&kept).unwrap();
    let decisions = pending.iter().map(|call| (call.id(), Decision::Approve));
    let done = team.continue_paused(state, decisions).await.unwrap();
    println!(
        "approved; publish ran {} time",
        PUBLISHED.load(Ordering::SeqCst)
    );
    println!("answer: {}", done.final_text.unwrap_or_default());
    println!("tokens, all agents: {}", done.usage.total());
    for (agent, usage) in &done.agents {
        println!("  {agent}: {}", usage.total());
    }

    let team = coordinator(MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "h1",
        "transfer_to_support",
        json!({}),
    )])]));
    let answered = team
        .run("How does the new export command work?")
        .await
        .unwrap();
    println!(
        "handed to {}: {}",
        answered.handoffs.join(" › "),
        answered.final_text.unwrap_or_default()
    );
}
