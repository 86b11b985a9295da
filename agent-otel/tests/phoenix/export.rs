//! A run's spans as Phoenix receives them: one trace, `invoke_agent` › `turn` › `chat` and
//! `execute_tool`, the sub-agent's `invoke_agent` inside its parent's `execute_tool`, and the
//! GenAI attributes with their convention types; the conversation's content only when turned on,
//! and then cut at the value limit.

use std::collections::HashMap;

use serde_json::Value;

use crate::agent::{ANSWER, GOAL, SESSION, SYSTEM};
use crate::child::Scenario;
use test_support::phoenix::Span;

use crate::phoenix;

/// The spans of the scripted tree run (`agent::tree`): two `invoke_agent`, four `turn`, four
/// `chat`, three `execute_tool`.
const TREE_SPANS: usize = 13;

/// The tree run's spans by what they are.
struct Tree<'a> {
    spans: &'a [Span],
    by_id: HashMap<&'a str, &'a Span>,
}

impl<'a> Tree<'a> {
    fn new(spans: &'a [Span]) -> Self {
        let by_id = spans.iter().map(|s| (s.span_id(), s)).collect();
        Tree { spans, by_id }
    }

    fn named(&self, name: &str) -> Vec<&'a Span> {
        self.spans.iter().filter(|s| s.name() == name).collect()
    }

    fn one(&self, name: &str) -> &'a Span {
        let found = self.named(name);
        assert_eq!(found.len(), 1, "one span named {name}: {found:#?}");
        found[0]
    }

    fn parent(&self, span: &Span) -> &'a Span {
        let id = span.parent_id().expect("the span has a parent");
        self.by_id
            .get(id)
            .unwrap_or_else(|| panic!("no span {id} in the trace"))
    }

    /// The span's parent's parent: a `chat` or `execute_tool` is in a `turn` of its agent.
    fn agent_of(&self, span: &Span) -> &'a Span {
        let turn = self.parent(span);
        assert_eq!(turn.name(), "turn", "{span:?} is in a turn");
        self.parent(turn)
    }

    fn tool_call(&self, id: &str) -> &'a Span {
        let calls: Vec<_> = self
            .spans
            .iter()
            .filter(|s| s.text("gen_ai.tool.call.id") == Some(id))
            .collect();
        assert_eq!(calls.len(), 1, "one span of tool call {id}");
        calls[0]
    }

    fn answer(&self, id: &str) -> &'a Span {
        let answers: Vec<_> = self
            .spans
            .iter()
            .filter(|s| s.text("gen_ai.response.id") == Some(id))
            .collect();
        assert_eq!(answers.len(), 1, "one chat span answered {id}");
        answers[0]
    }
}

/// Checks the tree run's spans against what the run itself reported.
fn check_tree(spans: &[Span], report: &Value) {
    assert_eq!(report["final_text"], ANSWER, "{report}");
    assert_eq!(spans.len(), TREE_SPANS, "{spans:#?}");
    let tree = Tree::new(spans);
    let trace = spans[0].trace_id();
    assert!(spans.iter().all(|s| s.trace_id() == trace), "one trace");
    let roots: Vec<_> = spans.iter().filter(|s| s.parent_id().is_none()).collect();
    assert_eq!(roots.len(), 1, "{roots:#?}");

    // The run: the top agent, its totals the run's own (the sub-agent's tokens included).
    let root = tree.one("invoke_agent");
    assert_eq!(roots[0].span_id(), root.span_id());
    assert_eq!(root.text("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(root.text("gen_ai.provider.name"), Some("mock"));
    assert_eq!(root.text("gen_ai.request.model"), Some("wren-1"));
    assert_eq!(root.text("gen_ai.agent.name"), None);
    assert_eq!(root.text("gen_ai.conversation.id"), Some(SESSION));
    let usage = &report["usage"];
    assert_eq!(
        root.int("gen_ai.usage.input_tokens"),
        usage["input_tokens"].as_i64()
    );
    assert_eq!(
        root.int("gen_ai.usage.output_tokens"),
        usage["output_tokens"].as_i64()
    );
    let cost = report["cost"].as_f64().expect("the run was priced");
    assert!(cost > 0.0);
    assert_eq!(root.float("gen_ai.usage.cost"), Some(cost));
    // Phoenix read the spans as GenAI ones: an agent, model calls, tools.
    assert_eq!(root.text("openinference.span.kind"), Some("AGENT"));

    // Its model calls.
    let chats = tree.named("chat wren-1");
    assert_eq!(chats.len(), 2);
    for chat in &chats {
        assert_eq!(tree.agent_of(chat).span_id(), root.span_id());
        assert_eq!(chat.text("gen_ai.operation.name"), Some("chat"));
        assert_eq!(chat.text("gen_ai.provider.name"), Some("mock"));
        assert_eq!(chat.text("gen_ai.request.model"), Some("wren-1"));
        assert_eq!(chat.text("gen_ai.response.model"), Some("wren-1"));
        assert!(chat.float("gen_ai.usage.cost").is_some_and(|c| c > 0.0));
        assert_eq!(chat.text("openinference.span.kind"), Some("LLM"));
    }
    let first = tree.answer("msg_1");
    assert_eq!(
        first.strings("gen_ai.response.finish_reasons"),
        Some(vec!["tool_call"])
    );
    // Input tokens count the prompt whole, the cached part too; the cached part is also apart.
    assert_eq!(first.int("gen_ai.usage.input_tokens"), Some(130));
    assert_eq!(first.int("gen_ai.usage.output_tokens"), Some(20));
    assert_eq!(first.int("gen_ai.usage.cache_read.input_tokens"), Some(30));
    assert_eq!(
        first.int("gen_ai.usage.cache_creation.input_tokens"),
        Some(0)
    );
    let second = tree.answer("msg_2");
    assert_eq!(
        second.strings("gen_ai.response.finish_reasons"),
        Some(vec!["stop"])
    );
    assert_eq!(second.int("gen_ai.usage.input_tokens"), Some(150));
    let own: f64 = chats
        .iter()
        .filter_map(|c| c.float("gen_ai.usage.cost"))
        .sum();
    assert!(own < cost, "the run's cost includes the sub-agent's");

    // Its tool call, and the sub-agent called as a tool, whose run is inside that call.
    let lookup = tree.tool_call("c1");
    assert_eq!(lookup.name(), "execute_tool lookup");
    assert_eq!(tree.agent_of(lookup).span_id(), root.span_id());
    assert_eq!(lookup.text("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(lookup.text("gen_ai.tool.name"), Some("lookup"));
    assert_eq!(lookup.text("gen_ai.tool.type"), Some("function"));
    assert_eq!(lookup.text("openinference.span.kind"), Some("TOOL"));
    let research = tree.tool_call("c2");
    assert_eq!(research.name(), "execute_tool research");
    assert_eq!(tree.agent_of(research).span_id(), root.span_id());
    let sub = tree.one("invoke_agent research");
    assert_eq!(tree.parent(sub).span_id(), research.span_id());
    assert_eq!(sub.text("gen_ai.agent.name"), Some("research"));
    assert_eq!(sub.text("gen_ai.request.model"), Some("robin-1"));
    // The sub-agent's tokens: its two calls.
    assert_eq!(sub.int("gen_ai.usage.input_tokens"), Some(100));
    assert_eq!(sub.int("gen_ai.usage.output_tokens"), Some(14));
    let sub_chats = tree.named("chat robin-1");
    assert_eq!(sub_chats.len(), 2);
    for chat in sub_chats {
        assert_eq!(tree.agent_of(chat).span_id(), sub.span_id());
    }
    let inner = tree.tool_call("c3");
    assert_eq!(inner.name(), "execute_tool lookup");
    assert_eq!(tree.agent_of(inner).span_id(), sub.span_id());
    assert_eq!(tree.named("turn").len(), 4);

    assert_eq!(
        report["shutdown"]["exported_spans"], TREE_SPANS,
        "the guard counted what Phoenix got: {report}"
    );
    assert_eq!(report["shutdown"]["failed_spans"], 0, "{report}");
}

/// What must never be on the spans while content is off.
const PRIVATE: [&str; 4] = ["secret-wren-goal", "secret-wren-arg", ANSWER, SYSTEM];

#[test]
fn a_run_exported_over_http_as_the_environment_says_is_one_trace_without_its_content() {
    let phoenix = phoenix();
    let project = "http-from-env";
    let ran = Scenario::new("tree")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.http_endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        .env(
            "OTEL_RESOURCE_ATTRIBUTES",
            format!("openinference.project.name={project}"),
        )
        .run();
    assert_eq!(
        ran.report["endpoint"],
        format!("{}/v1/traces", phoenix.http_endpoint())
    );
    let spans = phoenix.spans(project, TREE_SPANS);
    check_tree(&spans, &ran.report);
    assert_eq!(ran.warnings(), 0, "{}", ran.stderr);
    // Content is off by default: not the goal, the instructions, the tool's arguments or the
    // answer, in no attribute and no event.
    for span in &spans {
        for private in PRIVATE {
            assert!(
                !span.everything().contains(private),
                "{private} in {span:?}"
            );
        }
        for key in [
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.system_instructions",
        ] {
            assert_eq!(span.text(key), None, "{key} on {}", span.name());
        }
    }
}

#[test]
fn a_run_exported_over_grpc_as_set_up_in_code_carries_its_content_when_turned_on() {
    let phoenix = phoenix();
    let project = "grpc-explicit";
    let ran = Scenario::new("tree")
        .endpoint(phoenix.grpc_endpoint())
        .grpc()
        .project(project)
        .content(true)
        .run();
    let spans = phoenix.spans(project, TREE_SPANS);
    check_tree(&spans, &ran.report);
    let tree = Tree::new(&spans);
    let first = tree.answer("msg_1");
    let parse = |key: &str| -> Value {
        serde_json::from_str(first.text(key).unwrap_or_else(|| panic!("{key} is there"))).unwrap()
    };
    assert_eq!(parse("gen_ai.system_instructions")[0]["content"], SYSTEM);
    assert_eq!(
        parse("gen_ai.input.messages")[0]["parts"][0]["content"],
        GOAL
    );
    let called = &parse("gen_ai.output.messages")[0]["parts"][0];
    assert_eq!(called["type"], "tool_call");
    assert_eq!(called["arguments"]["key"], "secret-wren-arg");
    let last = tree.answer("msg_2");
    let answer: Value = serde_json::from_str(last.text("gen_ai.output.messages").unwrap()).unwrap();
    assert_eq!(answer[0]["parts"][0]["content"], ANSWER);
}

#[test]
fn recorded_content_is_cut_at_the_value_limit() {
    let phoenix = phoenix();
    // Turned on by the environment's variable; a goal far longer than any limit.
    for (project, limit) in [("cut-default", None), ("cut-500", Some(500))] {
        let mut scenario = Scenario::new("tree")
            .endpoint(phoenix.http_endpoint())
            .project(project)
            .goal_chars(100_000)
            .env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
        if let Some(limit) = limit {
            scenario = scenario.env("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", limit.to_string());
        }
        let ran = scenario.run();
        assert_eq!(ran.report["final_text"], ANSWER);
        let spans = phoenix.spans(project, TREE_SPANS);
        let tree = Tree::new(&spans);
        let limit = limit.unwrap_or(agent_otel::DEFAULT_ATTRIBUTE_VALUE_LIMIT);
        for id in ["msg_1", "msg_2"] {
            let input = tree.answer(id).text("gen_ai.input.messages").unwrap();
            assert_eq!(input.chars().count(), limit, "{project} {id}");
            assert!(
                input.starts_with(r#"[{"role":"user","parts":[{"type":"text","content":"Tell me"#)
            );
        }
        // Short values are whole.
        let output = tree.answer("msg_2").text("gen_ai.output.messages").unwrap();
        assert!(serde_json::from_str::<Value>(output).is_ok(), "{output}");
    }
}
