use agent_core::{SkillOutput, ToolCall, ToolDefinition, ToolResult};
use agent_llm::cassette::{Cassette, Matcher};
use agent_llm::{
    AnthropicProvider, CacheControl, ChatRequest, LlmProvider, Message, ProviderError, StopReason,
    StreamEvent, Thinking, ToolChoice, Usage,
};
use serde_json::{Value, json};

use crate::server::{Reply, Server, fixture};
use crate::{done, drain};

fn provider(server: &Server) -> AnthropicProvider {
    AnthropicProvider::new("sk-test", "claude-test").with_base_url(&server.url)
}

fn weather_tool() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "get_weather".into(),
        description: "Get the weather.".into(),
        input_schema: json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
        output_schema: None,
    }]
}

#[tokio::test]
async fn streamed_text_then_tool_use_is_parsed_exactly() {
    let server = Server::start([Reply::sse(&fixture(
        "anthropic_stream_text_then_single_tool_use_partial_json.sse",
    ))])
    .await;
    let transcript = [Message::user("What's the weather in Paris?")];
    let tools = weather_tool();
    let (events, error) =
        drain(provider(&server).stream(&ChatRequest::new(&transcript).tools(&tools))).await;
    assert!(error.is_none(), "{error:?}");
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        ["I", "'ll check the current weather in Paris for you."]
    );
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas,
        ["{\"locati", "on\": \"P", "ar", "is\"}"],
        "the empty first fragment is not an event"
    );
    assert!(events.contains(&StreamEvent::ToolCallStarted {
        index: 0,
        id: "toolu_01NRLabsLyVHZPKxbKvkfSMn".into(),
        name: "get_weather".into()
    }));
    let call = ToolCall::new(
        "toolu_01NRLabsLyVHZPKxbKvkfSMn",
        "get_weather",
        json!({"location": "Paris"}),
    );
    assert!(events.contains(&StreamEvent::ToolCallFinished(call.clone())));
    let response = done(&events);
    assert_eq!(
        response.message.content,
        "I'll check the current weather in Paris for you."
    );
    assert_eq!(response.message.tool_calls, [call]);
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.provider_stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 377,
            output_tokens: 65,
            ..Usage::default()
        }
    );
    assert_eq!(response.id.as_deref(), Some("msg_019Q1hrJbZG26Fb9BQhrkHEr"));
    assert!(response.truncated_tool_calls.is_empty());
}

#[tokio::test]
async fn a_tool_call_cut_off_by_max_tokens_is_reported_and_never_returned_as_a_call() {
    let server = Server::start([Reply::sse(&fixture(
        "anthropic_stream_max_tokens_truncated_mid_tool_input.sse",
    ))])
    .await;
    let transcript = [Message::user("Write my taxes guide.")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallFinished(_)))
    );
    let response = done(&events);
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    assert_eq!(response.provider_stop_reason.as_deref(), Some("max_tokens"));
    assert!(response.message.tool_calls.is_empty());
    assert_eq!(response.truncated_tool_calls.len(), 1);
    let cut = &response.truncated_tool_calls[0];
    assert_eq!(
        (cut.id.as_str(), cut.name.as_str()),
        ("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file")
    );
    assert!(
        cut.partial_arguments
            .starts_with("{\"filename\": \"taxes.txt\", \"lines_of_text\": [")
    );
    assert!(cut.partial_arguments.ends_with("\n\"Filing taxes"));
    assert!(
        response
            .message
            .content
            .starts_with("I'll create a comprehensive tax guide")
    );
    assert_eq!(response.usage.output_tokens, 124);
}

/// The cassette's two interactions: four parallel tool calls, then the answer after four results,
/// replayed through `agent_llm::cassette` with each request compared whole to the recorded one
/// (but for pydantic-ai's `?beta=true` query, and `system`, which eugene sends as one text block
/// where the SDK sent a string: compared below): the follow-up carries the four results in ONE
/// user message, one `tool_result` block per `tool_use` id, exactly as the real API was sent.
#[tokio::test]
async fn four_parallel_tool_calls_round_trip_as_the_recorded_conversation() {
    let name = "anthropic_vcr_nonstream_four_parallel_tool_use_roundtrip.yaml";
    let cassette = Cassette::parse(name, &fixture(name)).unwrap_or_else(|e| panic!("{e}"));
    let first_request = cassette.interactions()[0].request.body.json().unwrap();
    let model = first_request["model"].as_str().unwrap().to_owned();
    let matcher = Matcher::new().ignore_query().ignore_body_field("/system");
    let server = cassette.serve(matcher).await.unwrap();
    let provider = AnthropicProvider::new("sk-test", model)
        .with_base_url(server.base_url())
        .with_cache_control(CacheControl::none());
    let system = first_request["system"].as_str().unwrap().to_owned();
    let tools: Vec<ToolDefinition> = vec![ToolDefinition {
        name: "retrieve_entity_info".into(),
        description: "Get the knowledge about the given entity.".into(),
        input_schema: first_request["tools"][0]["input_schema"].clone(),
        output_schema: None,
    }];
    let mut transcript = vec![Message::user(
        "Alice, Bob, Charlie and Daisy are a family. Who is the youngest?",
    )];

    let first = provider
        .complete(&ChatRequest::new(&transcript).system(&system).tools(&tools))
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let names: Vec<&str> = first
        .message
        .tool_calls
        .iter()
        .map(|c| c.arguments["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Alice", "Bob", "Charlie", "Daisy"]);
    assert_eq!(
        first.message.tool_calls[0].id,
        "toolu_0167cfEnoQaPviGdVXA95zcu"
    );
    assert_eq!(
        first.usage,
        Usage {
            input_tokens: 423,
            output_tokens: 202,
            ..Usage::default()
        }
    );

    let answers = [
        "alice is bob's wife",
        "bob is alice's husband",
        "charlie is alice's son",
        "daisy is bob's daughter and charlie's younger sister",
    ];
    transcript.push(first.message.clone());
    for (call, answer) in first.message.tool_calls.iter().zip(answers) {
        transcript.push(Message::tool_result(&ToolResult::new(
            call,
            Ok(SkillOutput::from(answer)),
        )));
    }
    let second = provider
        .complete(&ChatRequest::new(&transcript).system(&system).tools(&tools))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        second
            .message
            .content
            .starts_with("Based on the retrieved information")
    );
    assert_eq!(second.stop_reason, StopReason::EndTurn);

    server.assert_all_used();
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[1].json().unwrap()["tool_choice"],
        json!({"type": "auto"})
    );
    for request in &sent {
        assert_eq!(
            request.json().unwrap()["system"],
            json!([{"type": "text", "text": system}])
        );
    }
}

#[tokio::test]
async fn the_request_body_and_headers_are_exactly_what_the_api_expects() {
    let server = Server::start([Reply::sse(&fixture(
        "anthropic_stream_text_then_single_tool_use_partial_json.sse",
    ))])
    .await;
    let call = ToolCall::new("toolu_1", "get_weather", json!({"location": "Paris"}));
    let transcript = vec![
        Message::user("Weather in Paris and Rome?"),
        Message::assistant_with_tool_calls(
            "Checking.",
            vec![
                call.clone(),
                ToolCall::new("toolu_2", "get_weather", json!({"location": "Rome"})),
            ],
        ),
        Message::tool_result(&ToolResult::new(&call, Ok(SkillOutput::from("sunny")))),
        Message::tool_result(&ToolResult::new(
            &ToolCall::new("toolu_2", "get_weather", json!({})),
            Err(agent_core::SkillError::tool("no station")),
        )),
        Message::user("And tomorrow?"),
    ];
    let tools = weather_tool();
    let stop = vec!["END".to_owned()];
    let request = ChatRequest::new(&transcript)
        .system("Be brief.")
        .tools(&tools)
        .tool_choice(ToolChoice::Tool("get_weather".into()))
        .parallel_tool_calls(false)
        .max_tokens(300)
        .temperature(0.5)
        .stop_sequences(&stop);
    let (_, error) = drain(provider(&server).stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let received = &server.received()[0];
    assert_eq!(
        (received.method.as_str(), received.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(received.header("x-api-key"), Some("sk-test"));
    assert_eq!(received.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(received.header("content-type"), Some("application/json"));
    assert_eq!(
        received.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 300,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                // The newest user message and the one before it carry the conversation's
                // breakpoints, on their last blocks.
                {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?", "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"location": "Paris"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"location": "Rome"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "no station", "is_error": true},
                    {"type": "text", "text": "And tomorrow?", "cache_control": {"type": "ephemeral"}}
                ]}
            ],
            "tools": [{
                "name": "get_weather",
                "description": "Get the weather.",
                "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
                "cache_control": {"type": "ephemeral"}
            }],
            "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
            "temperature": 0.5,
            "stop_sequences": ["END"],
            "stream": true
        })
    );
}

#[test]
fn cache_breakpoints_can_be_turned_off() {
    let transcript = [Message::user("hi")];
    let tools = weather_tool();
    let request = ChatRequest::new(&transcript).system("s").tools(&tools);
    let body = AnthropicProvider::new("k", "m")
        .with_cache_control(CacheControl::none())
        .request_body(&request, false);
    assert!(!body.to_string().contains("cache_control"), "{body}");
    let body = AnthropicProvider::new("k", "m").request_body(&request, false);
    assert_eq!(
        body["tools"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["messages"][0]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let cache = CacheControl {
        conversation: false,
        ..CacheControl::default()
    };
    let body = AnthropicProvider::new("k", "m")
        .with_cache_control(cache)
        .request_body(&request, false);
    assert!(
        body["messages"][0]["content"][0]
            .get("cache_control")
            .is_none()
    );
    assert!(body["system"][0].get("cache_control").is_some());
}

#[test]
fn conversation_breakpoints_take_only_the_room_the_four_leave() {
    let transcript = [
        Message::user("a"),
        Message::assistant("b"),
        Message::user("c"),
        Message::assistant("d"),
        Message::user("e"),
    ];
    let tools = weather_tool();
    let marked = |request: &ChatRequest<'_>, cache: CacheControl| -> Vec<usize> {
        let body = AnthropicProvider::new("k", "m")
            .with_cache_control(cache)
            .request_body(request, false);
        let marks = body.to_string().matches("cache_control").count();
        assert!(marks <= 4, "{marks} breakpoints: {body}");
        let messages = body["messages"].as_array().unwrap();
        (0..messages.len())
            .filter(|&i| messages[i]["content"][0].get("cache_control").is_some())
            .collect()
    };
    let full = ChatRequest::new(&transcript).system("s").tools(&tools);
    assert_eq!(marked(&full, CacheControl::default()), [2, 4]);
    let bare = ChatRequest::new(&transcript);
    assert_eq!(
        marked(&bare, CacheControl::default()),
        [2, 4],
        "two at most"
    );
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

#[tokio::test]
async fn thinking_blocks_are_kept_and_echoed_back_with_their_signature() {
    let stream = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m1", "model": "c", "usage": {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 7}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants "}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "a tool."}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "list_dir", "input": {}}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("list")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    assert!(events.contains(&StreamEvent::ThinkingDelta("a tool.".into())));
    let response = done(&events);
    assert_eq!(
        response.message.thinking,
        [Thinking::Thinking {
            thinking: "The user wants a tool.".into(),
            signature: "EqQBCgIYAhIM".into()
        }]
    );
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new("toolu_9", "list_dir", json!({}))],
        "an empty input buffer is {{}}"
    );
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 5,
            output_tokens: 30,
            cache_read_tokens: 100,
            cache_write_tokens: 7,
            ..Usage::default()
        }
    );

    let next = [Message::user("list"), response.message.clone()];
    let body = provider(&server).request_body(&ChatRequest::new(&next), true);
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "The user wants a tool.", "signature": "EqQBCgIYAhIM"})
    );
}

#[tokio::test]
async fn an_error_event_after_http_200_is_an_error_with_the_providers_words() {
    let stream = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 5}}}),
        ),
        (
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ]);
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("hi")];
    let (_, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    match error {
        Some(ProviderError::Stream {
            error_type,
            message,
            ..
        }) => {
            assert_eq!(
                (error_type.as_deref(), message.as_str()),
                (Some("overloaded_error"), "Overloaded")
            );
        }
        other => panic!("expected a stream error, got {other:?}"),
    }
    assert_eq!(
        server.received().len(),
        1,
        "a stream that delivered events is not replayed"
    );
}

#[test]
fn empty_tool_results_and_empty_user_text_are_encoded_as_the_api_accepts() {
    // The API answers 400 to `content: ""` with `is_error: true`, and to any empty text block.
    let ok = ToolCall::new("toolu_1", "touch", json!({"path": "a"}));
    let failed = ToolCall::new("toolu_2", "touch", json!({"path": "b"}));
    let transcript = vec![
        Message::user("Touch a and b."),
        Message::assistant_with_tool_calls("", vec![ok.clone(), failed.clone()]),
        Message::tool_result(&ToolResult::new(&ok, Ok(SkillOutput::from("")))),
        Message::tool_result(&ToolResult::new(
            &failed,
            Err(agent_core::SkillError::tool("")),
        )),
        Message::user(""),
    ];
    let body = AnthropicProvider::new("k", "m").request_body(&ChatRequest::new(&transcript), false);
    let blocks = body["messages"][2]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2, "no empty text block: {blocks:?}");
    assert_eq!(
        blocks[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "is_error": false}),
        "an empty result has no content"
    );
    assert_eq!(blocks[1]["tool_use_id"], "toolu_2");
    assert_eq!(blocks[1]["is_error"], true);
    assert!(
        !blocks[1]["content"].as_str().unwrap().trim().is_empty(),
        "a failure carries text: {blocks:?}"
    );
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "tool_use", "id": "toolu_1", "name": "touch", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_2", "name": "touch", "input": {"path": "b"}}
        ]),
        "no empty text before the calls"
    );
}

#[tokio::test]
async fn text_split_at_citations_stays_one_text_and_deltas_add_up_to_it() {
    // Text split where citations start and end is one sentence; a search between two texts
    // starts a new paragraph. Whole and streamed answers agree, and the deltas add up to it.
    let blocks = [
        json!({"type": "text", "text": "Let me check."}),
        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}}),
        json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}),
        json!({"type": "text", "text": "Rust is "}),
        json!({"type": "text", "text": "a systems language", "citations": [{"type": "web_search_result_location", "url": "https://example.com", "title": "Rust", "cited_text": "Rust is a systems language", "encrypted_index": "x"}]}),
        json!({"type": "text", "text": "."}),
    ];
    let expected = "Let me check.\n\nRust is a systems language.";
    let whole = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "c",
        "content": blocks, "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 9},
    });
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "model": "c", "usage": {"input_tokens": 3, "output_tokens": 1}}}),
    )];
    for (index, block) in blocks.iter().enumerate() {
        let text = block["text"].as_str();
        let mut start = block.clone();
        if text.is_some() {
            start["text"] = json!("");
        }
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        if let Some(text) = text {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
            ));
        }
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let server = Server::start([Reply::json(200, &whole), Reply::sse(&sse(&events))]).await;
    let transcript = [Message::user("What is Rust?")];
    let request = ChatRequest::new(&transcript);
    let answer = provider(&server).complete(&request).await.unwrap();
    assert_eq!(answer.message.content, expected);
    let (events, error) = drain(provider(&server).stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, expected);
    assert_eq!(done(&events).message.content, expected);
}
