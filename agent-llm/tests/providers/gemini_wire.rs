//! What eugene sends Gemini, whole (a request snapshot of a conversation with every kind of
//! message), and shapes of answers no recording has: Gemini's own call ids, a blocked prompt,
//! an answer of several text parts and calls streamed.

use agent_core::{SkillError, SkillOutput, ToolCall, ToolDefinition, ToolResult};
use agent_llm::{
    ChatRequest, GeminiProvider, LlmProvider, Message, ProviderItem, StopReason, StreamEvent,
    ThinkingConfig, ToolChoice,
};
use serde_json::{Value, json};

use crate::gemini::{provider, stream_reply};
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

fn text_answer(text: &str) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1},
        "modelVersion": "gemini-test", "responseId": "r1",
    })
}

#[tokio::test]
async fn the_request_body_url_and_headers_are_exactly_what_the_api_expects() {
    let server = Server::start([Reply::json(200, &text_answer("ok"))]).await;
    let paris = ToolCall::new("call_r0_0", "get_weather", json!({"location": "Paris"}));
    let rome = ToolCall::new("call_r0_1", "get_weather", json!({"location": "Rome"}));
    let mut calling =
        Message::assistant_with_tool_calls("Checking.", vec![paris.clone(), rome.clone()]);
    calling.provider_items = vec![
        ProviderItem::new("gemini", json!({"part": "thought", "text": "Two cities."})),
        ProviderItem::new(
            "gemini",
            json!({"part": "functionCall", "id": "call_r0_0", "thoughtSignature": "c2lnMQ=="}),
        ),
        // Another provider's item is not Gemini's business.
        ProviderItem::new(
            "openai-responses",
            json!({"type": "reasoning", "id": "rs_1"}),
        ),
    ];
    let transcript = vec![
        Message::system("Use metric units."),
        Message::user("Weather in Paris and Rome?"),
        calling,
        // Results handed over out of order, one of them failed.
        Message::tool_result(&ToolResult::new(&rome, Err(SkillError::tool("no station")))),
        Message::tool_result(&ToolResult::new(&paris, Ok(SkillOutput::from("sunny")))),
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
        .stop_sequences(&stop)
        .thinking(ThinkingConfig::Budget(1024));
    provider(&server, "models/gemini-2.5-flash")
        .complete(&request)
        .await
        .unwrap();
    let received = &server.received()[0];
    assert_eq!(
        (received.method.as_str(), received.path.as_str()),
        ("POST", "/v1beta/models/gemini-2.5-flash:generateContent")
    );
    assert_eq!(received.header("x-goog-api-key"), Some("gm-test"));
    assert_eq!(received.header("content-type"), Some("application/json"));
    assert_eq!(received.header("authorization"), None);
    assert_eq!(
        received.json(),
        json!({
            "systemInstruction": {"parts": [{"text": "Be brief.\n\nUse metric units."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
                {"role": "model", "parts": [
                    {"text": "Two cities.", "thought": true},
                    {"text": "Checking."},
                    {"functionCall": {"id": "call_r0_0", "name": "get_weather", "args": {"location": "Paris"}}, "thoughtSignature": "c2lnMQ=="},
                    {"functionCall": {"id": "call_r0_1", "name": "get_weather", "args": {"location": "Rome"}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"id": "call_r0_0", "name": "get_weather", "response": {"output": "sunny"}}},
                    {"functionResponse": {"id": "call_r0_1", "name": "get_weather", "response": {"error": "no station"}}},
                    {"text": "And tomorrow?"},
                ]},
            ],
            "tools": [{"functionDeclarations": [{
                "name": "get_weather",
                "description": "Get the weather.",
                "parameters": {"type": "OBJECT", "properties": {"location": {"type": "STRING"}}, "required": ["location"]},
            }]}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
            "generationConfig": {
                "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": true},
                "maxOutputTokens": 1324,
                "temperature": 0.5,
                "stopSequences": ["END"],
            },
        })
    );
}

#[test]
fn a_streamed_request_has_the_same_body_and_the_provider_is_named_gemini() {
    let transcript = [Message::user("hi")];
    let request = ChatRequest::new(&transcript);
    let gemini = GeminiProvider::new("", "gemini-2.5-flash");
    assert_eq!(
        gemini.request_body(&request, true),
        gemini.request_body(&request, false)
    );
    assert_eq!(gemini.name(), "gemini");
    assert!(format!("{gemini:?}").contains("generativelanguage.googleapis.com/v1beta"));
}

#[tokio::test]
async fn an_empty_key_sends_no_key_header() {
    let server = Server::start([Reply::json(200, &text_answer("ok"))]).await;
    let gemini = GeminiProvider::new("", "m").with_base_url(&server.url);
    gemini
        .complete(&ChatRequest::new(&[Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(server.received()[0].header("x-goog-api-key"), None);
    assert_eq!(server.received()[0].path, "/models/m:generateContent");
}

#[tokio::test]
async fn geminis_own_call_ids_are_kept_and_sent_back() {
    let answer = json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "fc_7", "name": "get_weather", "args": {"location": "Oslo"}}},
            {"functionCall": {"name": "get_weather"}},
        ]}, "finishReason": "STOP"}],
        "responseId": "r2",
    });
    let server = Server::start([Reply::json(200, &answer)]).await;
    let transcript = [Message::user("Oslo?")];
    let tools = weather_tool();
    let response = provider(&server, "m")
        .complete(&ChatRequest::new(&transcript).tools(&tools))
        .await
        .unwrap();
    let calls = &response.message.tool_calls;
    assert_eq!(&*calls[0].id, "fc_7");
    assert_eq!(&*calls[1].id, "call_r2_1", "ours where Gemini gave none");
    assert_eq!(calls[1].arguments, json!({}), "no args: none needed");
    let next = [
        Message::user("Oslo?"),
        response.message.clone(),
        Message::tool_result(&ToolResult::new(&calls[0], Ok(SkillOutput::from("-2°C")))),
    ];
    let body = GeminiProvider::new("k", "m").request_body(&ChatRequest::new(&next), false);
    assert_eq!(
        body["contents"][1]["parts"][0]["functionCall"]["id"],
        "fc_7"
    );
    assert_eq!(
        body["contents"][2]["parts"][0]["functionResponse"]["id"],
        "fc_7"
    );
}

#[tokio::test]
async fn a_blocked_prompt_is_a_refusal_with_the_block_reason() {
    let blocked = json!({
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": "gemini-2.5-flash", "responseId": "r3",
    });
    let server = Server::start([
        Reply::json(200, &blocked),
        stream_reply(&format!("data: {blocked}\r\n\r\n")),
    ])
    .await;
    let transcript = [Message::user("…")];
    let request = ChatRequest::new(&transcript);
    let gemini = provider(&server, "m");
    let whole = gemini.complete(&request).await.unwrap();
    assert_eq!(whole.stop_reason, StopReason::Refusal);
    assert_eq!(
        whole.provider_stop_reason.as_deref(),
        Some("PROHIBITED_CONTENT")
    );
    assert_eq!(whole.usage.input_tokens, 9);
    let (events, error) = drain(gemini.stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(done(&events).stop_reason, StopReason::Refusal);
}

#[tokio::test]
async fn a_streamed_answer_of_text_and_parallel_calls_gives_each_its_events() {
    let chunks = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me "}]}}], "responseId": "r4"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "check."}, {"functionCall": {"name": "get_weather", "args": {"location": "Paris"}}, "thoughtSignature": "c2ln"}]}}], "responseId": "r4"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"location": "Rome"}}}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 12}, "responseId": "r4"}),
    ];
    let body: String = chunks
        .iter()
        .map(|c| format!("data: {c}\r\n\r\n"))
        .collect();
    let server = Server::start([stream_reply(&body)]).await;
    let transcript = [Message::user("Paris and Rome?")];
    let tools = weather_tool();
    let (events, error) =
        drain(provider(&server, "m").stream(&ChatRequest::new(&transcript).tools(&tools))).await;
    assert!(error.is_none(), "{error:?}");
    let paris = ToolCall::new("call_r4_0", "get_weather", json!({"location": "Paris"}));
    let rome = ToolCall::new("call_r4_1", "get_weather", json!({"location": "Rome"}));
    let expected_start = [
        StreamEvent::TextDelta("Let me ".into()),
        StreamEvent::TextDelta("check.".into()),
        StreamEvent::ToolCallStarted {
            index: 0,
            id: "call_r4_0".into(),
            name: "get_weather".into(),
        },
        StreamEvent::ToolCallDelta {
            index: 0,
            arguments: r#"{"location":"Paris"}"#.into(),
        },
        StreamEvent::ToolCallFinished(paris.clone()),
        StreamEvent::ToolCallStarted {
            index: 1,
            id: "call_r4_1".into(),
            name: "get_weather".into(),
        },
        StreamEvent::ToolCallDelta {
            index: 1,
            arguments: r#"{"location":"Rome"}"#.into(),
        },
        StreamEvent::ToolCallFinished(rome.clone()),
    ];
    assert_eq!(events[..expected_start.len()], expected_start);
    assert!(matches!(events[expected_start.len()], StreamEvent::Usage(u) if u.output_tokens == 12));
    let answer = done(&events);
    assert_eq!(
        events.len(),
        expected_start.len() + 2,
        "no call finished twice: {events:?}"
    );
    assert_eq!(answer.message.content, "Let me check.");
    assert_eq!(answer.message.tool_calls, [paris, rome]);
    assert_eq!(answer.stop_reason, StopReason::ToolUse);
    assert_eq!(
        answer.message.provider_items,
        [ProviderItem::new(
            "gemini",
            json!({"part": "functionCall", "id": "call_r4_0", "thoughtSignature": "c2ln"})
        )]
    );
}
