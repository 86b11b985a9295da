//! A run shows up as a tree of `tracing` spans named after the OpenTelemetry GenAI conventions:
//! `invoke_agent` › `turn` › `chat` and `execute_tool`.

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use serde_json::json;

pub use super::{SpanRecord, Spans};

/// Look something up.
///
/// # Arguments
/// * `key` - What.
#[skill(read_only, register = false)]
async fn lookup(key: String) -> Result<String, SkillError> {
    Ok(key)
}

/// Each span's name and its parent's.
pub fn tree(recorded: &[SpanRecord]) -> Vec<(&str, Option<&str>)> {
    recorded
        .iter()
        .map(|s| (s.name.as_str(), s.parent.as_deref()))
        .collect()
}

#[tokio::test]
async fn a_run_is_a_tree_of_gen_ai_spans() {
    let (spans, _guard) = Spans::install();
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({"key": "a"}))]),
        MockReply::text("done"),
    ]);
    AgentRuntime::new(mock, registry).run("go").await.unwrap();

    let recorded = spans.all();
    assert_eq!(
        tree(&recorded),
        [
            ("invoke_agent", None),
            ("turn", Some("invoke_agent")),
            ("chat", Some("turn")),
            ("execute_tool", Some("turn")),
            ("turn", Some("invoke_agent")),
            ("chat", Some("turn")),
        ]
    );
    // An agent called as a skill: its run's spans nest under the parent's `execute_tool`.
    spans.clear();
    let mut child_registry = Registry::new();
    child_registry.add(LookupSkill);
    let child = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({"key": "b"}))]),
            MockReply::text("child done"),
        ]),
        child_registry,
    );
    let mut registry = Registry::new();
    registry.add(child.into_skill("helper", "Helps."));
    let parent = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("p1", "helper", json!({"goal": "help"}))]),
        MockReply::text("done"),
    ]);
    AgentRuntime::new(parent, registry).run("go").await.unwrap();
    let recorded = spans.all();
    assert_eq!(
        tree(&recorded),
        [
            ("invoke_agent", None),
            ("turn", Some("invoke_agent")),
            ("chat", Some("turn")),
            ("execute_tool", Some("turn")),
            ("invoke_agent", Some("execute_tool")),
            ("turn", Some("invoke_agent")),
            ("chat", Some("turn")),
            ("execute_tool", Some("turn")),
            ("turn", Some("invoke_agent")),
            ("chat", Some("turn")),
            ("turn", Some("invoke_agent")),
            ("chat", Some("turn")),
        ]
    );
    // The agent below says who it is; the one on top has no name.
    let agents = spans.named("invoke_agent");
    assert_eq!(agents[0].field("gen_ai.agent.name"), None);
    assert_eq!(agents[0].field("otel.name"), Some("invoke_agent"));
    assert_eq!(agents[1].field("gen_ai.agent.name"), Some("helper"));
    assert_eq!(agents[1].field("otel.name"), Some("invoke_agent helper"));
}
