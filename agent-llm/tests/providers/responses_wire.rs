//! The Responses API's request body exactly, an answer's items sent back as they came or as
//! they were changed, and shapes no recording here has (written inline, as the API documents
//! them): answers cut at the token limit, refusals, several message items, failures in a stream.

use agent_core::{SkillError, SkillOutput, ToolCall, ToolDefinition, ToolResult};
use agent_llm::{
    ChatRequest, Effort, LlmProvider, Message, ProviderError, ResponsesState, StopReason,
    StreamEvent, ThinkingConfig, ToolChoice,
};
use serde_json::{Value, json};

use crate::responses::provider;
use crate::server::{Reply, Server};
use crate::{done, drain};

fn weather_tool() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "get_weather".into(),
        description: "Get the weather.".into(),
        input_schema: json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
        output_schema: None,
    }]
}

/// A server-sent-events body of `events`, each named by its `type`.
fn events(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn created() -> Value {
    json!({"type": "response.created", "response": {"id": "resp_1", "model": "gpt-test", "status": "in_progress", "output": []}})
}

fn finished(kind: &str, status: &str, reason: Option<&str>) -> Value {
    json!({"type": kind, "response": {"id": "resp_1", "model": "gpt-test", "status": status,
        "incomplete_details": reason.map(|r| json!({"reason": r})),
        "usage": {"input_tokens": 20, "output_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}})
}

/// A whole answer with these output items.
fn whole(output: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "model": "gpt-test", "status": "completed", "output": output,
           "usage": {"input_tokens": 20, "output_tokens": 10, "input_tokens_details": {"cached_tokens": 5}, "output_tokens_details": {"reasoning_tokens": 4}}})
}

#[tokio::test]
async fn the_request_body_is_exactly_what_the_api_expects() {
    let server = Server::start([]).await;
    let call = ToolCall::new("call_1", "get_weather", json!({"location": "Paris"}));
    let call2 = ToolCall::new("call_2", "get_weather", json!({"location": "Rome"}));
    let transcript = vec![
        Message::user("Weather in Paris and Rome?"),
        Message::assistant_with_tool_calls("Checking.", vec![call.clone(), call2.clone()]),
        Message::tool_result(&ToolResult::new(&call, Ok(SkillOutput::from("sunny")))),
        Message::tool_result(&ToolResult::new(&call2, Err(SkillError::tool("")))),
        Message::system("Use metric units."),
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
    assert_eq!(
        provider(&server).request_body(&request, true),
        json!({
            "model": "gpt-test",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"role": "assistant", "content": "Checking."},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"location\":\"Paris\"}"},
                {"type": "function_call", "call_id": "call_2", "name": "get_weather", "arguments": "{\"location\":\"Rome\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
                {"type": "function_call_output", "call_id": "call_2", "output": "the tool failed without a message"},
                {"role": "system", "content": "Use metric units."},
                {"role": "user", "content": "And tomorrow?"}
            ],
            "tools": [{"type": "function", "name": "get_weather", "description": "Get the weather.",
                       "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
                       "strict": false}],
            "tool_choice": {"type": "function", "name": "get_weather"},
            "parallel_tool_calls": false,
            "max_output_tokens": 300,
            "temperature": 0.5,
            "stream": true
        }),
        "no stop sequences: the API has none"
    );

    // Thinking: an effort for the budget, summaries to show, no temperature.
    let thinking = request.clone().thinking(ThinkingConfig::Budget(5000));
    let body = provider(&server).request_body(&thinking, false);
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    assert!(body.get("temperature").is_none(), "{body}");
    let quiet = provider(&server).with_reasoning_summary(false);
    let low = request
        .clone()
        .thinking(ThinkingConfig::Adaptive(Effort::Low));
    assert_eq!(
        quiet.request_body(&low, false)["reasoning"],
        json!({"effort": "low"})
    );
    let high = request.clone().thinking(ThinkingConfig::Budget(20_000));
    assert_eq!(
        quiet.request_body(&high, false)["reasoning"]["effort"],
        "high"
    );

    // What each state asks of the server; chained with no earlier answer sends everything.
    for (state, store, include) in [
        (ResponsesState::Stored, None, None),
        (
            ResponsesState::Stateless,
            Some(json!(false)),
            Some(json!(["reasoning.encrypted_content"])),
        ),
        (ResponsesState::Chained, Some(json!(true)), None),
    ] {
        let body = provider(&server)
            .with_state(state)
            .request_body(&request, false);
        assert_eq!(body.get("store"), store.as_ref(), "{state:?}");
        assert_eq!(body.get("include"), include.as_ref(), "{state:?}");
        assert!(body.get("previous_response_id").is_none());
        assert_eq!(body["input"].as_array().unwrap().len(), 8);
    }
}

#[tokio::test]
async fn an_answers_items_go_back_as_they_came_unless_the_message_changed() {
    let answer = whole(json!([
        {"type": "reasoning", "id": "rs_1", "status": "completed", "summary": [{"type": "summary_text", "text": "Look first."}]},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Let me look.", "annotations": [], "logprobs": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
         "arguments": "{\"path\": \"a.txt\"}", "status": "completed"}
    ]));
    let server = Server::start([Reply::json(200, &answer)]).await;
    let transcript = [Message::user("Read a.txt")];
    let response = provider(&server)
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    assert_eq!(response.message.content, "Let me look.");
    assert_eq!(
        (
            response.usage.input_tokens,
            response.usage.cache_read_tokens,
            response.usage.reasoning_tokens
        ),
        (15, 5, 4)
    );
    let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look first."}]});
    let message = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]});
    let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
                      "arguments": "{\"path\": \"a.txt\"}"});
    let input_of = |answer: Message, state: ResponsesState| -> Vec<Value> {
        let next = [Message::user("Read a.txt"), answer];
        let body = provider(&server)
            .with_state(state)
            .request_body(&ChatRequest::new(&next), false);
        body["input"].as_array().unwrap()[1..].to_vec()
    };
    let same = response.message.clone();
    assert_eq!(
        input_of(same.clone(), ResponsesState::Stored),
        [reasoning.clone(), message.clone(), call.clone()],
        "as they came, the arguments' text unchanged"
    );
    assert_eq!(
        input_of(same, ResponsesState::Stateless),
        [message, call.clone()],
        "stateless, the server could not find reasoning that is not encrypted"
    );

    let mut edited = response.message.clone();
    edited.content = "Let me look at a.txt.".into();
    assert_eq!(
        input_of(edited, ResponsesState::Stored),
        [
            reasoning.clone(),
            json!({"role": "assistant", "content": "Let me look at a.txt."}),
            call
        ],
    );
    let mut new_arguments = response.message.clone();
    new_arguments.tool_calls[0].arguments = json!({"path": "b.txt"});
    assert_eq!(
        input_of(new_arguments, ResponsesState::Stored)[2]["arguments"],
        "{\"path\":\"b.txt\"}"
    );
    let mut emptied = response.message.clone();
    emptied.content.clear();
    emptied.tool_calls.clear();
    assert!(
        input_of(emptied, ResponsesState::Stored).is_empty(),
        "a reasoning item never goes last, without the item that followed it"
    );
}

#[tokio::test]
async fn several_message_items_are_paragraphs_whole_and_streamed() {
    let say = |id: &str, text: &str| {
        json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": text, "annotations": []}]})
    };
    let stream = events(&[
        created(),
        json!({"type": "response.output_item.added", "output_index": 0, "item": say("msg_1", "")}),
        json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "First."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": say("msg_1", "First.")}),
        // A second message whose text arrives only with its item.
        json!({"type": "response.output_item.added", "output_index": 1, "item": say("msg_2", "")}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": say("msg_2", "Second.")}),
        finished("response.completed", "completed", None),
    ]);
    let server = Server::start([
        Reply::json(
            200,
            &whole(json!([say("msg_1", "First."), say("msg_2", "Second.")])),
        ),
        Reply::sse(&stream),
    ])
    .await;
    let transcript = [Message::user("go")];
    let request = ChatRequest::new(&transcript);
    let answer = provider(&server).complete(&request).await.unwrap();
    assert_eq!(answer.message.content, "First.\n\nSecond.");
    let (events, error) = drain(provider(&server).stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "First.\n\nSecond.");
    assert_eq!(done(&events).message, answer.message);
    // Both items go back, each with its own text.
    let next = [Message::user("go"), answer.message];
    let body = provider(&server).request_body(&ChatRequest::new(&next), false);
    assert_eq!(body["input"][1], say("msg_1", "First."));
    assert_eq!(body["input"][2], say("msg_2", "Second."));
}

#[tokio::test]
async fn an_answer_cut_at_the_token_limit_keeps_its_text_and_never_runs_the_cut_call() {
    let cut_call = json!({"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "write_file",
                          "arguments": "{\"path\": \"b\", \"text\": \"lo", "status": "incomplete"});
    let mut whole_cut = whole(json!([
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\": \"a\"}", "status": "completed"},
        cut_call,
    ]));
    whole_cut["status"] = json!("incomplete");
    whole_cut["incomplete_details"] = json!({"reason": "max_output_tokens"});
    let stream = events(&[
        created(),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Writing."}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "write_file", "arguments": "", "status": "in_progress"}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc_2", "delta": "{\"path\": \"b\", \"text\": \"lo"}),
        finished(
            "response.incomplete",
            "incomplete",
            Some("max_output_tokens"),
        ),
    ]);
    let server = Server::start([Reply::json(200, &whole_cut), Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let request = ChatRequest::new(&transcript);
    let answer = provider(&server).complete(&request).await.unwrap();
    assert_eq!(answer.stop_reason, StopReason::MaxTokens);
    assert_eq!(
        answer.provider_stop_reason.as_deref(),
        Some("max_output_tokens")
    );
    assert_eq!(
        answer.message.tool_calls,
        [ToolCall::new("call_1", "read_file", json!({"path": "a"}))]
    );
    assert_eq!(answer.truncated_tool_calls[0].id, "call_2");

    let (events, error) = drain(provider(&server).stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let streamed = done(&events);
    assert_eq!(streamed.stop_reason, StopReason::MaxTokens);
    assert_eq!(streamed.message.content, "Writing.");
    assert!(streamed.message.tool_calls.is_empty());
    let cut = &streamed.truncated_tool_calls[0];
    assert_eq!(
        (cut.id.as_str(), cut.partial_arguments.as_str()),
        ("call_2", "{\"path\": \"b\", \"text\": \"lo")
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallFinished(_)))
    );
    // The cut call is never sent back.
    let next = [Message::user("go"), streamed.message.clone()];
    let body = provider(&server).request_body(&ChatRequest::new(&next), false);
    assert!(!body.to_string().contains("call_2"), "{body}");
}

#[tokio::test]
async fn a_refusal_or_a_content_filter_is_a_refusal_whole_and_streamed() {
    let words = "I'm sorry, I can't help with that.";
    let refusal = whole(
        json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                                "content": [{"type": "refusal", "refusal": words}]}]),
    );
    let mut filtered = whole(json!([]));
    filtered["status"] = json!("incomplete");
    filtered["incomplete_details"] = json!({"reason": "content_filter"});
    let stream = events(&[
        created(),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "I'm sorry, "}),
        json!({"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "I can't help with that."}),
        finished("response.completed", "completed", None),
    ]);
    let server = Server::start([
        Reply::json(200, &refusal),
        Reply::json(200, &filtered),
        Reply::sse(&stream),
    ])
    .await;
    let transcript = [Message::user("do something bad")];
    let request = ChatRequest::new(&transcript);
    let answer = provider(&server).complete(&request).await.unwrap();
    assert_eq!(
        (answer.message.content.as_str(), answer.stop_reason),
        (words, StopReason::Refusal)
    );
    let answer = provider(&server).complete(&request).await.unwrap();
    assert_eq!(answer.stop_reason, StopReason::Refusal);
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
    // It goes back as the refusal it was.
    let next = [Message::user("x"), streamed.message.clone()];
    let body = provider(&server).request_body(&ChatRequest::new(&next), false);
    assert_eq!(
        body["input"][1]["content"],
        json!([{"type": "refusal", "refusal": words}])
    );
}

#[tokio::test]
async fn failures_inside_an_answer_are_clear_errors() {
    let failed = json!({"type": "response.failed", "response": {"id": "resp_1", "status": "failed",
                        "error": {"code": "server_error", "message": "The model failed to generate a response."}}});
    let error_event = json!({"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.", "param": null});
    let mut whole_failed = whole(json!([]));
    whole_failed["status"] = json!("failed");
    whole_failed["error"] = json!({"code": "server_error", "message": "The model failed."});
    let server = Server::start([
        Reply::sse(&events(&[created(), failed])),
        Reply::sse(&events(&[created(), error_event])),
        Reply::sse("event: response.created\ndata: {\"type\": \"response.created\", \"resp\n\n"),
        Reply::sse(&events(&[created(), json!({"type": "response.function_call_arguments.delta", "output_index": 3, "delta": "{}"})])),
        Reply::json(200, &whole_failed),
        Reply::json(200, &json!({"id": "resp_1", "status": "completed"})),
    ])
    .await;
    let transcript = [Message::user("go")];
    let request = ChatRequest::new(&transcript);
    let stream_error = |error: Option<ProviderError>| match error {
        Some(ProviderError::Stream {
            error_type,
            message,
            ..
        }) => (error_type, message),
        other => panic!("expected a stream error, got {other:?}"),
    };
    let (_, error) = drain(provider(&server).stream(&request)).await;
    assert_eq!(
        stream_error(error),
        (
            Some("server_error".into()),
            "The model failed to generate a response.".into()
        )
    );
    let (_, error) = drain(provider(&server).stream(&request)).await;
    assert_eq!(
        stream_error(error),
        (Some("rate_limit_exceeded".into()), "Slow down.".into())
    );
    for expected in ["is not JSON", "never started"] {
        let (_, error) = drain(provider(&server).stream(&request)).await;
        match error {
            Some(ProviderError::Decode { message, .. }) => {
                assert!(message.contains(expected), "{message}")
            }
            other => panic!("expected a decode error, got {other:?}"),
        }
    }
    let error = provider(&server).complete(&request).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "openai-responses stream failed (server_error): The model failed."
    );
    let error = provider(&server).complete(&request).await.unwrap_err();
    assert!(matches!(error, ProviderError::Decode { .. }), "{error}");
}

#[tokio::test]
async fn a_server_that_names_items_only_by_their_ids_is_understood() {
    let message = json!({"type": "message", "id": "msg_1", "role": "assistant", "content": []});
    let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": ""});
    let stream = events(&[
        created(),
        json!({"type": "response.output_item.added", "item": message}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Reading."}),
        json!({"type": "response.output_item.added", "item": call}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"path\": \"a\"}"}),
        json!({"type": "response.output_item.done", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\": \"a\"}", "status": "completed"}}),
        finished("response.completed", "completed", None),
    ]);
    let server = Server::start([Reply::sse(&stream)]).await;
    let transcript = [Message::user("go")];
    let (events, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);
    assert_eq!(response.message.content, "Reading.");
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new("call_1", "read_file", json!({"path": "a"}))]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
}
