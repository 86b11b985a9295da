//! What each span carries: the provider, the models asked and answering, the answer's id and
//! finish reason, tokens (cache reads and writes included), what a call cost, the session as the
//! conversation, errors as `error.type`, and the conversation's content only when turned on.

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply, ModelPrice, PriceTable, ProviderError, Usage};
use agent_runtime::{AgentEvent, AgentRuntime, MemorySessionStore};
use serde_json::{Value, json};

use super::Spans;

/// Look something up.
///
/// # Arguments
/// * `key` - What.
#[skill(read_only, register = false)]
async fn lookup(key: String) -> Result<String, SkillError> {
    Ok(format!("{key} is a bird"))
}

/// Always fails.
#[skill(read_only, register = false)]
async fn broken() -> Result<String, SkillError> {
    Err(SkillError::tool("the disk is gone"))
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(LookupSkill).add(BrokenSkill);
    registry
}

fn usage(input: u64, output: u64, cache_read: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        ..Usage::default()
    }
}

/// `reply` as answered by `model`, with the answer id `id`.
fn answered(reply: MockReply, model: &str, id: &str) -> MockReply {
    match reply {
        MockReply::Response(mut response) => {
            response.model = Some(model.into());
            response.id = Some(id.into());
            MockReply::Response(response)
        }
        other => other,
    }
}

fn number(text: Option<&str>) -> f64 {
    text.expect("the field is there").parse().unwrap()
}

#[tokio::test]
async fn model_calls_carry_provider_models_answer_tokens_and_cost() {
    let (spans, _guard) = Spans::install();
    let mock = MockProvider::new([
        answered(
            MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({"key": "wren"}))])
                .with_usage(usage(100, 20, 30)),
            "wren-1",
            "msg_1",
        ),
        answered(
            MockReply::text("A wren is a bird.").with_usage(usage(150, 10, 0)),
            "wren-1",
            "msg_2",
        ),
    ])
    .with_model("wren-1");
    let table = PriceTable::empty()
        .with_model("wren-1", ModelPrice::per_million(2.0, 10.0).cache_read(0.2));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = AgentRuntime::new(mock, registry())
        .prices(table)
        .event_sink(tx)
        .run("What is a wren?")
        .await
        .unwrap();
    let mut costs = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let AgentEvent::Usage { cost, .. } = event {
            costs.push(cost.total().as_dollars());
        }
    }

    let chats = spans.named("chat");
    assert_eq!(chats.len(), 2);
    let first = &chats[0];
    assert_eq!(first.field("otel.name"), Some("chat wren-1"));
    assert_eq!(first.field("otel.kind"), Some("client"));
    assert_eq!(first.field("gen_ai.operation.name"), Some("chat"));
    assert_eq!(first.field("gen_ai.provider.name"), Some("mock"));
    assert_eq!(first.field("gen_ai.request.model"), Some("wren-1"));
    assert_eq!(first.field("gen_ai.response.model"), Some("wren-1"));
    assert_eq!(first.field("gen_ai.response.id"), Some("msg_1"));
    assert_eq!(chats[1].field("gen_ai.response.id"), Some("msg_2"));
    assert_eq!(
        first.field("gen_ai.response.finish_reasons"),
        Some(r#"["tool_call"]"#)
    );
    assert_eq!(
        chats[1].field("gen_ai.response.finish_reasons"),
        Some(r#"["stop"]"#)
    );
    // Input tokens count the prompt whole, the cached part too; the cached part is also apart.
    assert_eq!(first.field("gen_ai.usage.input_tokens"), Some("130"));
    assert_eq!(first.field("gen_ai.usage.output_tokens"), Some("20"));
    assert_eq!(
        first.field("gen_ai.usage.cache_read.input_tokens"),
        Some("30")
    );
    assert_eq!(
        first.field("gen_ai.usage.cache_creation.input_tokens"),
        Some("0")
    );
    // Each call's cost is the one its Usage event reported, and not nothing.
    assert_eq!(costs.len(), 2);
    for (chat, cost) in chats.iter().zip(&costs) {
        assert!(*cost > 0.0);
        assert_eq!(number(chat.field("gen_ai.usage.cost")), *cost);
    }

    let agent = &spans.named("invoke_agent")[0];
    assert_eq!(agent.field("otel.kind"), Some("internal"));
    assert_eq!(agent.field("gen_ai.provider.name"), Some("mock"));
    assert_eq!(agent.field("gen_ai.usage.input_tokens"), Some("280"));
    assert_eq!(agent.field("gen_ai.usage.output_tokens"), Some("30"));
    assert_eq!(
        number(agent.field("gen_ai.usage.cost")),
        outcome.cost.total().as_dollars()
    );
    assert_eq!(agent.field("error.type"), None);

    let tool = &spans.named("execute_tool")[0];
    assert_eq!(tool.field("otel.name"), Some("execute_tool lookup"));
    assert_eq!(tool.field("gen_ai.tool.type"), Some("function"));
    assert_eq!(tool.field("gen_ai.tool.call.id"), Some("c1"));
    assert_eq!(tool.field("error.type"), None);
}

#[tokio::test]
async fn an_unpriced_model_has_no_cost_on_its_spans_rather_than_nothing_spent() {
    let (spans, _guard) = Spans::install();
    let mock = MockProvider::new([MockReply::text("hi")]).with_model("no-such-model-x9");
    AgentRuntime::new(mock, registry()).run("hi").await.unwrap();
    assert_eq!(spans.named("chat")[0].field("gen_ai.usage.cost"), None);
    assert_eq!(
        spans.named("invoke_agent")[0].field("gen_ai.usage.cost"),
        None
    );
    assert_eq!(
        spans.named("chat")[0].field("gen_ai.usage.input_tokens"),
        Some("10")
    );
}

#[tokio::test]
async fn failed_tools_and_model_calls_say_what_failed() {
    let (spans, _guard) = Spans::install();
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "broken", json!({}))]),
        MockReply::error(ProviderError::Api {
            provider: "mock".into(),
            status: 429,
            error_type: Some("rate_limit_error".into()),
            message: "slow down".into(),
            retry_after: None,
        }),
    ]);
    let error = AgentRuntime::new(mock, registry())
        .run("go")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("429"), "{error}");

    let tool = &spans.named("execute_tool")[0];
    assert_eq!(tool.field("error.type"), Some("tool"));
    assert_eq!(tool.field("otel.status_code"), Some("ERROR"));
    let chats = spans.named("chat");
    assert_eq!(chats[0].field("error.type"), None);
    assert_eq!(chats[1].field("error.type"), Some("429"));
    assert_eq!(chats[1].field("otel.status_code"), Some("ERROR"));
    let agent = &spans.named("invoke_agent")[0];
    assert_eq!(agent.field("error.type"), Some("429"));
    assert_eq!(agent.field("otel.status_code"), Some("ERROR"));
}

#[tokio::test]
async fn a_run_in_a_session_names_it_as_its_conversation() {
    let (spans, _guard) = Spans::install();
    let store = MemorySessionStore::default();
    let runtime = AgentRuntime::new(
        MockProvider::new([MockReply::text("one"), MockReply::text("two")]),
        registry(),
    );
    runtime
        .run("first")
        .in_session(&store, "s-42")
        .await
        .unwrap();
    runtime.run("second").await.unwrap();
    let agents = spans.named("invoke_agent");
    assert_eq!(agents[0].field("gen_ai.conversation.id"), Some("s-42"));
    assert_eq!(agents[1].field("gen_ai.conversation.id"), None);
}

/// The content fields of the `chat` spans of one run with a system prompt.
async fn content_of_a_run(spans: &Spans) -> Vec<Option<(String, String, String)>> {
    spans.clear();
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "lookup", json!({"key": "secret-wren"}))]),
        MockReply::text("It is a private bird."),
    ]);
    AgentRuntime::new(mock, registry())
        .system("You are careful.")
        .run("Tell me about my-private-goal")
        .await
        .unwrap();
    spans
        .named("chat")
        .iter()
        .map(|chat| {
            let get = |name: &str| chat.field(name).map(str::to_owned);
            Some((
                get("gen_ai.system_instructions")?,
                get("gen_ai.input.messages")?,
                get("gen_ai.output.messages")?,
            ))
        })
        .collect()
}

#[tokio::test]
async fn prompts_and_answers_are_on_the_spans_only_when_turned_on() {
    let (spans, _guard) = Spans::install();
    // Off by default: no field holds the goal, the instructions or the answer.
    agent_runtime::trace::record_content(false);
    assert_eq!(content_of_a_run(&spans).await, [None, None]);
    for span in spans.all() {
        for (_, value) in &span.fields {
            assert!(
                !value.contains("my-private-goal") && !value.contains("secret-wren"),
                "{span:?}"
            );
        }
    }

    agent_runtime::trace::record_content(true);
    let content = content_of_a_run(&spans).await;
    agent_runtime::trace::record_content(false);
    let [Some(first), Some(second)] = &content[..] else {
        panic!("{content:?}")
    };
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    assert_eq!(
        parse(&first.0),
        json!([{"type": "text", "content": "You are careful."}])
    );
    assert_eq!(
        parse(&first.1),
        json!([{"role": "user", "parts": [{"type": "text", "content": "Tell me about my-private-goal"}]}])
    );
    assert_eq!(
        parse(&first.2),
        json!([{"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"key": "secret-wren"}}
        ]}])
    );
    // The second call's input holds the call and its result; its output the answer.
    let input = parse(&second.1);
    assert_eq!(input.as_array().unwrap().len(), 3, "{input}");
    assert_eq!(
        input[2],
        json!({"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "c1", "response": "secret-wren is a bird"}
        ]})
    );
    assert_eq!(
        parse(&second.2)[0]["parts"],
        json!([{"type": "text", "content": "It is a private bird."}])
    );

    // Media is recorded as a reference (type, size, name), never as its bytes: in the same test,
    // since turning content on is process-wide.
    spans.clear();
    let png = agent_core::content::tiny_png();
    agent_runtime::trace::record_content(true);
    AgentRuntime::new(MockProvider::new([MockReply::text("A dot.")]), registry())
        .run("What is this?")
        .attach(agent_core::Media::new("image/png", png.clone()).named("dot.png"))
        .attach(agent_core::Media::url(
            "https://example.com/a.pdf",
            "application/pdf",
        ))
        .await
        .unwrap();
    agent_runtime::trace::record_content(false);
    let chat = &spans.named("chat")[0];
    let input = parse(chat.field("gen_ai.input.messages").unwrap());
    assert_eq!(
        input[0]["parts"],
        json!([
            {"type": "text", "content": "What is this?"},
            {"type": "blob_ref", "size": png.len(), "modality": "image", "mime_type": "image/png", "name": "dot.png"},
            {"type": "uri", "uri": "https://example.com/a.pdf", "modality": "document", "mime_type": "application/pdf"},
        ])
    );
    let base64 = "iVBORw0KGgo"; // how the PNG's base64 starts
    for span in spans.all() {
        for (_, value) in &span.fields {
            assert!(!value.contains(base64), "{span:?}");
        }
    }
}
