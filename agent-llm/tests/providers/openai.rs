use agent_core::{
    Registry, SkillContext, SkillError, SkillOutput, ToolCall, ToolDefinition, ToolResult,
};
use agent_llm::{
    ChatRequest, LlmProvider, Message, OpenAiProvider, StopReason, StreamEvent, Usage,
};
use serde_json::{Value, json};

use crate::server::{End, Reply, Server, fixture};
use crate::{done, drain};

fn provider(server: &Server) -> OpenAiProvider {
    OpenAiProvider::new("sk-test", "gpt-test").with_base_url(format!("{}/v1", server.url))
}

fn chunks(deltas: &[Value]) -> String {
    deltas.iter().map(|d| format!("data: {d}\n\n")).collect()
}

fn delta(tool_calls: Value) -> Value {
    json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": tool_calls}, "finish_reason": null}]})
}

fn finish(reason: &str) -> Value {
    json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

#[tokio::test]
async fn two_parallel_streamed_tool_calls_are_parsed_exactly() {
    let server = Server::start([Reply::sse(&fixture(
        "openai_chat_stream_two_parallel_tool_calls_finish_and_usage.sse",
    ))])
    .await;
    let transcript = [Message::user("Weather in Edinburgh, and the NASDAQ?")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.provider_stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.message.tool_calls.len(), 2);
    let first = &response.message.tool_calls[0];
    assert_eq!(
        (first.id.as_str(), first.name.as_str()),
        ("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs")
    );
    assert_eq!(
        first.arguments,
        json!({"city": "Edinburgh", "country": "GB", "units": "c"})
    );
    let second = &response.message.tool_calls[1];
    assert_eq!(
        (second.id.as_str(), second.name.as_str()),
        ("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price")
    );
    assert_eq!(
        second.arguments,
        json!({"ticker": "AAPL", "exchange": "NASDAQ"})
    );
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 149,
            output_tokens: 60,
            ..Usage::default()
        }
    );
    let started: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStarted { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(started, [0, 1]);
    let finished = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallFinished(_)))
        .count();
    assert_eq!(finished, 2);
}

#[tokio::test]
async fn compatible_server_quirks_are_survived() {
    // Ids repeated on every delta, indexes starting at 1, arguments whole and as an object, an
    // empty id, `finish_reason: stop` although tools were called, and no `[DONE]`.
    let stream = chunks(&[
        delta(
            json!([{"index": 1, "id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"pa"}}]),
        ),
        delta(json!([{"index": 1, "id": "call_a", "function": {"arguments": "th\": \"a.txt\"}"}}])),
        delta(
            json!([{"index": 2, "id": "", "function": {"name": "list_dir", "arguments": {"path": "src"}}}]),
        ),
        delta(json!([{"index": 3, "function": {"name": "list_dir", "arguments": "{}"}}])),
        finish("stop"),
    ]);
    let server = Server::start([Reply::sse_chunks(vec![stream.into_bytes()], End::Finish)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    let calls = &response.message.tool_calls;
    assert_eq!(calls.len(), 3);
    assert_eq!(
        calls[0],
        ToolCall::new("call_a", "read_file", json!({"path": "a.txt"}))
    );
    assert_eq!(
        (calls[1].name.as_str(), &calls[1].arguments),
        ("list_dir", &json!({"path": "src"}))
    );
    assert!(
        !calls[1].id.is_empty() && !calls[2].id.is_empty() && calls[1].id != calls[2].id,
        "made-up ids are unique: {calls:?}"
    );
}

#[tokio::test]
async fn legacy_function_call_and_cached_usage_are_handled() {
    let stream = chunks(&[
        json!({"choices": [{"index": 0, "delta": {"function_call": {"name": "recall", "arguments": "{\"key\":"}}}]}),
        json!({"choices": [{"index": 0, "delta": {"function_call": {"arguments": " \"x\"}"}}}]}),
        finish("function_call"),
        json!({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 40}}}),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);
    assert_eq!(response.message.tool_calls.len(), 1);
    assert_eq!(
        (
            response.message.tool_calls[0].name.as_str(),
            &response.message.tool_calls[0].arguments
        ),
        ("recall", &json!({"key": "x"}))
    );
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 40,
            cache_write_tokens: 0,
            ..Usage::default()
        }
    );
}

#[tokio::test]
async fn ids_of_zero_on_every_call_are_made_unique() {
    let stream = chunks(&[
        delta(
            json!([{"index": 0, "id": "0", "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}}]),
        ),
        delta(
            json!([{"index": 1, "id": "0", "function": {"name": "read_file", "arguments": "{\"path\": \"b\"}"}}]),
        ),
        finish("tool_calls"),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let calls = &done(&events).message.tool_calls;
    assert_eq!(
        calls
            .iter()
            .map(|c| c.arguments["path"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(calls[0].id, "0");
    assert_ne!(
        calls[1].id, "0",
        "results must be matched to calls, so ids are unique"
    );
    let started: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStarted { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    let answered: Vec<&str> = calls.iter().map(|c| &*c.id).collect();
    assert_eq!(
        started, answered,
        "the events announce the ids the answer uses"
    );
}

#[tokio::test]
async fn an_answer_cut_at_the_token_limit_keeps_the_calls_it_finished() {
    // Calls stream one after another, so only the last can be cut off.
    let stream = chunks(&[
        delta(
            json!([{"index": 0, "id": "call_a", "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}}]),
        ),
        delta(
            json!([{"index": 1, "id": "call_b", "function": {"name": "write_file", "arguments": "{\"path\": \"b\", \"text\": \"lo"}}]),
        ),
        finish("length"),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new("call_a", "read_file", json!({"path": "a"}))]
    );
    let cut: Vec<(&str, &str, &str)> = response
        .truncated_tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.partial_arguments.as_str()))
        .collect();
    assert_eq!(
        cut,
        [("call_b", "write_file", "{\"path\": \"b\", \"text\": \"lo")]
    );
}

#[tokio::test]
async fn invalid_argument_json_becomes_a_bad_args_result_not_a_provider_error() {
    let stream = chunks(&[
        delta(
            json!([{"index": 0, "id": "call_x", "function": {"name": "echo", "arguments": "{\"text\": \"unterminated"}}]),
        ),
        finish("tool_calls"),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let call = done(&events).message.tool_calls[0].clone();
    assert_eq!(call.arguments, json!("{\"text\": \"unterminated"));

    #[agent_core::skill(read_only, register = false)]
    /// Echo.
    ///
    /// # Arguments
    /// * `text` - Text.
    async fn echo(text: String) -> Result<String, SkillError> {
        Ok(text)
    }
    let mut registry = Registry::new();
    registry.add(EchoSkill);
    let result = registry.run_one(&call, &SkillContext::default()).await;
    assert!(
        matches!(result.output, Err(SkillError::BadArgs { .. })),
        "{:?}",
        result.output
    );
    // Sent back exactly as received.
    let next = [Message::user("go"), done(&events).message.clone()];
    let body = provider(&server).request_body(&ChatRequest::new(&next), false);
    assert_eq!(
        body["messages"][1]["tool_calls"][0]["function"]["arguments"],
        json!("{\"text\": \"unterminated")
    );
}

#[tokio::test]
async fn the_request_body_with_tool_results_is_exactly_what_the_api_expects() {
    let server = Server::start([Reply::json(200, &json!({
        "id": "chatcmpl-1", "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sunny in Paris; Rome has no station."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 9}
    }))]).await;
    let call = ToolCall::new("call_1", "get_weather", json!({"location": "Paris"}));
    let call2 = ToolCall::new("call_2", "get_weather", json!({"location": "Rome"}));
    let transcript = vec![
        Message::user("Weather in Paris and Rome?"),
        Message::assistant_with_tool_calls("", vec![call.clone(), call2.clone()]),
        Message::tool_result(&ToolResult::new(&call, Ok(SkillOutput::from("sunny")))),
        Message::tool_result(&ToolResult::new(
            &call2,
            Err(SkillError::tool("no station")),
        )),
    ];
    let tools = vec![ToolDefinition {
        name: "get_weather".into(),
        description: "Get the weather.".into(),
        input_schema: json!({"type": "object", "properties": {"location": {"type": "string"}, "days": {"type": ["integer", "null"]}}, "required": ["location"]}),
        output_schema: None,
    }];
    let provider = provider(&server).with_strict_tools(true);
    let response = provider
        .complete(
            &ChatRequest::new(&transcript)
                .system("Be brief.")
                .tools(&tools)
                .max_tokens(100),
        )
        .await
        .unwrap();
    assert_eq!(
        response.message.content,
        "Sunny in Paris; Rome has no station."
    );
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(response.usage.input_tokens, 80);
    let received = &server.received()[0];
    assert_eq!(received.path, "/v1/chat/completions");
    assert_eq!(received.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        received.json(),
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":\"Rome\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
                {"role": "tool", "tool_call_id": "call_2", "content": "no station"}
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_weather",
                "description": "Get the weather.",
                "parameters": {
                    "type": "object",
                    "properties": {"location": {"type": "string"}, "days": {"type": ["integer", "null"]}},
                    "required": ["location", "days"],
                    "additionalProperties": false
                },
                "strict": true
            }}],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "max_tokens": 100,
            "stream": false
        })
    );
}

#[tokio::test]
async fn without_a_key_no_authorization_header_is_sent_and_streams_ask_for_usage() {
    let server = Server::start([Reply::sse(&fixture(
        "openai_chat_stream_two_parallel_tool_calls_finish_and_usage.sse",
    ))])
    .await;
    let provider = OpenAiProvider::new("", "llama").with_base_url(format!("{}/v1", server.url));
    let transcript = [Message::user("hi")];
    let (_, error) = drain(provider.stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let received = &server.received()[0];
    assert_eq!(received.header("authorization"), None);
    assert_eq!(
        received.json()["stream_options"],
        json!({"include_usage": true})
    );
}

#[tokio::test]
async fn calls_without_an_index_stay_separate() {
    // Gemini's compatible endpoint: no `index`, each call whole in its own chunk, ids that may be
    // empty; and a call split across deltas that repeat its id, still without an index.
    let no_index = |id: &str, name: Option<&str>, arguments: &str| {
        let mut function = json!({"arguments": arguments});
        if let Some(name) = name {
            function["name"] = json!(name);
        }
        delta(json!([{"id": id, "type": "function", "function": function}]))
    };
    let stream = chunks(&[
        no_index(
            "function-call-1",
            Some("get_weather"),
            "{\"location\":\"Sydney\"}",
        ),
        no_index(
            "function-call-2",
            Some("get_weather"),
            "{\"location\":\"Perth\"}",
        ),
        no_index("", Some("read_file"), "{\"path\":\"a\"}"),
        no_index("", Some("read_file"), "{\"path\":\"b\"}"),
        no_index("call_x", Some("list_dir"), "{\"pa"),
        no_index("call_x", None, "th\": \"src\"}"),
        finish("stop"),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let calls = &done(&events).message.tool_calls;
    let got: Vec<(&str, &Value)> = calls
        .iter()
        .map(|c| (c.name.as_str(), &c.arguments))
        .collect();
    assert_eq!(
        got,
        [
            ("get_weather", &json!({"location": "Sydney"})),
            ("get_weather", &json!({"location": "Perth"})),
            ("read_file", &json!({"path": "a"})),
            ("read_file", &json!({"path": "b"})),
            ("list_dir", &json!({"path": "src"})),
        ]
    );
    assert_eq!(
        (
            calls[0].id.as_str(),
            calls[1].id.as_str(),
            calls[4].id.as_str()
        ),
        ("function-call-1", "function-call-2", "call_x")
    );
    assert!(calls[2].id != calls[3].id && !calls[2].id.is_empty());
}

#[tokio::test]
async fn calls_that_all_say_index_zero_but_have_their_own_ids_stay_separate() {
    // Proxies that number each call by its place in its own chunk send index 0 for every call.
    let stream = chunks(&[
        delta(
            json!([{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": "}}]),
        ),
        delta(json!([{"index": 0, "function": {"arguments": "\"a\"}"}}])),
        delta(
            json!([{"index": 0, "id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"b\"}"}}]),
        ),
        finish("tool_calls"),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        done(&events).message.tool_calls,
        [
            ToolCall::new("call_a", "read_file", json!({"path": "a"})),
            ToolCall::new("call_b", "read_file", json!({"path": "b"})),
        ]
    );
}

#[tokio::test]
async fn an_empty_id_and_model_in_azures_first_chunk_are_not_the_answers() {
    let stream = chunks(&[
        json!({"choices": [], "created": 0, "id": "", "model": "", "object": "", "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]}),
        json!({"id": "chatcmpl-1", "model": "gpt-4o", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": null}]}),
        json!({"id": "chatcmpl-1", "model": "gpt-4o", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);
    assert_eq!(
        (response.id.as_deref(), response.model.as_deref()),
        (Some("chatcmpl-1"), Some("gpt-4o"))
    );
    assert_eq!(response.message.content, "hi");
}

#[tokio::test]
async fn reasoning_sent_under_both_names_is_streamed_once() {
    // vLLM sends the same text as `reasoning` and, for older clients, as `reasoning_content`.
    let stream = chunks(&[
        json!({"id": "c1", "choices": [{"index": 0, "delta": {"reasoning": "Let me think.", "reasoning_content": "Let me think."}}]}),
        json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "4"}, "finish_reason": "stop"}]}),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("2+2?")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let thinking: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ThinkingDelta(_)))
        .collect();
    assert_eq!(
        thinking,
        [&StreamEvent::ThinkingDelta("Let me think.".into())]
    );
}

#[tokio::test]
async fn a_refusal_is_the_answers_text_with_a_refusal_stop_whole_and_streamed() {
    let words = "I'm sorry, I can't help with that.";
    let whole = json!({
        "id": "chatcmpl-1", "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": null, "refusal": words}}],
    });
    let stream = chunks(&[
        json!({"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "refusal": ""}}]}),
        json!({"id": "c1", "choices": [{"index": 0, "delta": {"refusal": "I'm sorry, "}}]}),
        json!({"id": "c1", "choices": [{"index": 0, "delta": {"refusal": "I can't help with that."}}]}),
        finish("stop"),
    ]) + "data: [DONE]\n\n";
    let server = Server::start([Reply::json(200, &whole), Reply::sse(&stream)]).await;
    let transcript = [Message::user("do something bad")];
    let request = ChatRequest::new(&transcript);
    let answer = provider(&server).complete(&request).await.unwrap();
    assert_eq!(
        (answer.message.content.as_str(), answer.stop_reason),
        (words, StopReason::Refusal)
    );
    let (events, error) = drain(provider(&server).stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let streamed = done(&events);
    assert_eq!(
        (
            streamed.message.content.as_str(),
            streamed.stop_reason.clone()
        ),
        (words, StopReason::Refusal)
    );
}
