//! A run shows up as a tree of `tracing` spans named after the OpenTelemetry GenAI conventions:
//! `invoke_agent` › `turn` › `chat` and `execute_tool`.

use std::sync::{Arc, Mutex};

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use serde_json::json;
use test_support::traced::TextFields;
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// Look something up.
///
/// # Arguments
/// * `key` - What.
#[skill(read_only, register = false)]
async fn lookup(key: String) -> Result<String, SkillError> {
    Ok(key)
}

/// A span's name, its parent's name and its fields.
type SpanRecord = (String, Option<String>, Vec<(String, String)>);

#[derive(Default, Clone)]
struct Spans(Arc<Mutex<Vec<SpanRecord>>>);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let span = ctx.span(id).expect("the span exists");
        let parent = span.parent().map(|p| p.name().to_owned());
        let mut fields = Vec::new();
        attrs.record(&mut TextFields(&mut fields));
        self.0
            .lock()
            .unwrap()
            .push((attrs.metadata().name().to_owned(), parent, fields));
    }
}

/// Each span's name and its parent's.
fn tree(recorded: &[SpanRecord]) -> Vec<(&str, Option<&str>)> {
    recorded
        .iter()
        .map(|(n, p, _)| (n.as_str(), p.as_deref()))
        .collect()
}

#[tokio::test]
async fn a_run_is_a_tree_of_gen_ai_spans() {
    let spans = Spans::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({"key": "a"}))]),
        MockReply::text("done"),
    ]);
    AgentRuntime::new(mock, registry).run("go").await.unwrap();

    let recorded = spans.0.lock().unwrap().clone();
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
    let fields = |name: &str| {
        recorded
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap()
            .2
            .clone()
    };
    assert!(
        fields("invoke_agent").contains(&("gen_ai.operation.name".into(), "invoke_agent".into()))
    );
    assert!(fields("chat").contains(&("gen_ai.system".into(), "mock".into())));
    let tool = fields("execute_tool");
    assert!(
        tool.contains(&("gen_ai.tool.name".into(), "lookup".into())),
        "{tool:?}"
    );
    assert!(
        tool.contains(&("gen_ai.tool.call.id".into(), "c1".into())),
        "{tool:?}"
    );

    // An agent called as a skill: its run's spans nest under the parent's `execute_tool`.
    spans.0.lock().unwrap().clear();
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
    let recorded = spans.0.lock().unwrap().clone();
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
}
