//! A paused run keeps the W3C trace context of its first `invoke_agent` span in its state, and
//! the drive that continues it, here or in another process, makes its own span a child of it.
//! The exporter's side of it (real trace ids, a real receiver) is agent-otel's tests; here a
//! [`TraceContext`] that writes span ids as trace contexts shows what the runtime asks of it.

use std::sync::{Mutex, Once};

use agent_core::{Permission, PermissionGate, Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::trace::{self, TraceContext};
use agent_runtime::{AgentRuntime, Decision, FinishReason, RunState};
use serde_json::json;

use super::Spans;

/// The `traceparent`s spans were made children of: `(span id, traceparent)`.
static PARENTS: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());

/// One test at a time: span ids start over with each test's subscriber, and `PARENTS` is shared.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Names span `n` `00-…n-…n-01`.
struct SpanIds;

impl TraceContext for SpanIds {
    fn traceparent(&self, span: &tracing::Span) -> Option<String> {
        let id = span.id()?.into_u64();
        Some(format!("00-{id:032x}-{id:016x}-01"))
    }

    fn set_parent(&self, span: &tracing::Span, traceparent: &str) {
        if let Some(id) = span.id() {
            PARENTS
                .lock()
                .unwrap()
                .push((id.into_u64(), traceparent.to_owned()));
        }
    }
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| assert!(trace::set_trace_context(SpanIds)));
}

/// Ring a bell (a person says yes first).
#[skill(destructive, register = false)]
async fn ring() -> Result<String, SkillError> {
    Ok("rung".into())
}

fn registry() -> Registry {
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

#[tokio::test]
async fn a_resumed_run_is_a_child_of_the_drive_that_paused_it() {
    let _serial = SERIAL.lock().await;
    install();
    PARENTS.lock().unwrap().clear();
    let (spans, _guard) = Spans::install();
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "ring", json!({}))]),
        MockReply::tool_calls([ToolCall::new("c2", "ring", json!({}))]),
        MockReply::text("Rang twice."),
    ]);
    let runtime = AgentRuntime::new(mock, registry());
    let paused = runtime.run("Ring.").await.unwrap();
    assert!(matches!(
        paused.finish,
        FinishReason::AwaitingApproval { .. }
    ));
    let first = spans.named("invoke_agent")[0].id;
    let expected = format!("00-{first:032x}-{first:016x}-01");

    // The state carries it through JSON, as a process that keeps the state would.
    let saved = serde_json::to_value(paused.state.as_deref().unwrap()).unwrap();
    assert_eq!(saved["trace_parent"], json!(expected), "{saved}");
    let state: RunState = serde_json::from_value(saved).unwrap();

    let again = runtime
        .continue_paused(state, [("c1", Decision::Approve)])
        .await
        .unwrap();
    let second = spans.named("invoke_agent")[1].id;
    assert_ne!(second, first);
    // Paused again: the second drive was made a child of the first, and the state still names
    // the first, so a third drive is one more child of it and not a chain.
    let state = again.state.clone().unwrap();
    let saved = serde_json::to_value(&*state).unwrap();
    assert_eq!(saved["trace_parent"], json!(expected));
    runtime
        .continue_paused(*state, [("c2", Decision::Approve)])
        .await
        .unwrap();
    let third = spans.named("invoke_agent")[2].id;
    let parents = PARENTS.lock().unwrap().clone();
    assert!(parents.contains(&(second, expected.clone())), "{parents:?}");
    assert!(parents.contains(&(third, expected.clone())), "{parents:?}");
    assert!(
        !parents.iter().any(|(span, _)| *span == first),
        "{parents:?}"
    );
}

/// A parent whose model calls `gardener` (`p1`), whose model rings (`c1`), which waits.
fn parent_of_a_ringing_child(replies: Vec<MockReply>, child: Vec<MockReply>) -> AgentRuntime {
    let gardener = AgentRuntime::new(MockProvider::new(child), registry());
    let mut parent = Registry::new();
    parent.add(gardener.into_skill("gardener", "Rings."));
    AgentRuntime::new(MockProvider::new(replies), parent)
}

#[tokio::test]
async fn a_paused_call_is_not_a_failed_span_and_a_child_resumed_elsewhere_is_a_child_of_its_call() {
    let _serial = SERIAL.lock().await;
    install();
    PARENTS.lock().unwrap().clear();
    let (spans, _guard) = Spans::install();
    let paused = parent_of_a_ringing_child(
        vec![MockReply::tool_calls([ToolCall::new(
            "p1",
            "gardener",
            json!({"goal": "Ring."}),
        )])],
        vec![MockReply::tool_calls([ToolCall::new(
            "c1",
            "ring",
            json!({}),
        )])],
    )
    .run("Ring through the gardener.")
    .await
    .unwrap();
    assert!(matches!(
        paused.finish,
        FinishReason::AwaitingApproval { .. }
    ));
    // The call to the child paused: its span says so, and is no error.
    let call = spans
        .named("execute_tool")
        .into_iter()
        .find(|s| s.field("gen_ai.tool.name") == Some("gardener"))
        .unwrap();
    assert_eq!(
        call.field("eugene.tool.paused"),
        Some("suspended"),
        "{call:?}"
    );
    assert_eq!(call.field("otel.status_code"), None, "{call:?}");
    assert_eq!(call.field("error.type"), None, "{call:?}");

    // "Another process": a runtime built anew, the state from JSON.
    let state: RunState =
        serde_json::from_value(serde_json::to_value(paused.state.as_deref().unwrap()).unwrap())
            .unwrap();
    spans.clear();
    let done = parent_of_a_ringing_child(
        vec![MockReply::text("Rang.")],
        vec![MockReply::text("Rung.")],
    )
    .continue_paused(state, [("p1/c1", Decision::Approve)])
    .await
    .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("Rang."));
    let child = spans
        .named("invoke_agent")
        .into_iter()
        .find(|s| s.field("gen_ai.agent.name") == Some("gardener"))
        .expect("the child's drive has its span");
    // Its parent is this drive's call to it, not the first drive's `invoke_agent gardener`.
    assert_eq!(child.parent.as_deref(), Some("execute_tool"), "{child:?}");
    let parents = PARENTS.lock().unwrap().clone();
    assert!(
        !parents.iter().any(|(span, _)| *span == child.id),
        "the child was not made a child of another trace context: {parents:?}"
    );
}
