//! Gemini's recorded single answers (pydantic-ai's cassettes) over loopback: thoughts streamed
//! as thinking, structured output, the token limit and a safety stop in neutral words with
//! Gemini's kept, cached and thinking tokens, and the function-calling modes.

use agent_llm::{
    ChatRequest, GeminiProvider, LlmProvider, Message, ResponseSchema, StopReason, StreamEvent,
    ThinkingConfig, ToolChoice, Usage,
};
use serde_json::{Value, json};

use crate::gemini::{
    cassette, json_schema_tools, provider, recorded_reply, recorded_request, recorded_stream,
};
use crate::server::Server;
use crate::{done, drain};

#[tokio::test]
async fn streamed_thoughts_arrive_as_thinking_and_become_one_summary() {
    let cassette = cassette("gemini_vcr_stream_thoughts_then_signed_text.yaml");
    let server = Server::start([recorded_reply(&cassette, 0)]).await;
    let transcript = [Message::user("How do I cross the street?")];
    let request = ChatRequest::new(&transcript).thinking(ThinkingConfig::Budget(2048));
    let (events, error) = drain(provider(&server, "gemini-2.5-pro").stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let thinking: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking.len(), 4);
    assert!(thinking[0].starts_with("**Clarifying User Goals**"));
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let answer = done(&events);
    assert_eq!(answer.message.content, text);
    assert!(text.starts_with("This is a great question!"));
    assert!(!text.contains("Clarifying User Goals"));
    let items: Vec<&Value> = answer.message.provider_items_of("gemini").collect();
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(
        items[0]["text"],
        thinking.concat(),
        "the pieces are one summary"
    );
    assert!(items[0].get("thoughtSignature").is_none());
    assert_eq!(items[1]["part"], "text");
    let body = recorded_stream(&cassette, 0);
    let signature = items[1]["thoughtSignature"].as_str().unwrap();
    assert!(body.contains(&format!("\"thoughtSignature\": \"{signature}\"")));
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert!(answer.usage.reasoning_tokens > 0);
    assert_eq!(
        server.received()[0].json()["generationConfig"],
        json!({"thinkingConfig": {"thinkingBudget": 2048, "includeThoughts": true}, "maxOutputTokens": 4096 + 2048})
    );
}

#[tokio::test]
async fn a_response_schema_is_sent_as_json_schema_or_converted_and_the_answer_is_its_json() {
    let cassette = cassette("gemini_vcr_nonstream_response_json_schema.yaml");
    let recorded = recorded_request(&cassette, 0)["generationConfig"].clone();
    let schema = ResponseSchema {
        name: "CityLocation".into(),
        schema: recorded["responseJsonSchema"].clone(),
    };
    let server = Server::start([recorded_reply(&cassette, 0), recorded_reply(&cassette, 0)]).await;
    let transcript = [Message::user("What is the largest city in Mexico?")];
    let request = ChatRequest::new(&transcript).response_schema(&schema);
    let gemini = provider(&server, "gemini-2.0-flash");
    assert!(gemini.supports_response_schema());
    let answer = gemini
        .clone()
        .with_json_schema(true)
        .complete(&request)
        .await
        .unwrap();
    let value: Value = serde_json::from_str(&answer.message.content).unwrap();
    assert_eq!(value, json!({"city": "Mexico City", "country": "Mexico"}));
    gemini.complete(&request).await.unwrap();
    let sent = server.received();
    let config = sent[0].json()["generationConfig"].clone();
    assert_eq!(config["responseJsonSchema"], recorded["responseJsonSchema"]);
    assert_eq!(config["responseMimeType"], recorded["responseMimeType"]);
    let converted = sent[1].json()["generationConfig"].clone();
    assert!(converted.get("responseJsonSchema").is_none());
    assert_eq!(
        converted["responseSchema"],
        json!({
            "description": "A city and its country.",
            "title": "CityLocation",
            "type": "OBJECT",
            "properties": {"city": {"type": "STRING"}, "country": {"type": "STRING"}},
            "required": ["city", "country"],
        })
    );
}

#[tokio::test]
async fn the_token_limit_and_a_safety_stop_are_ours_with_geminis_words_kept() {
    let limit = cassette("gemini_vcr_nonstream_max_tokens.yaml");
    let safety = cassette("gemini_vcr_nonstream_safety_blocked.yaml");
    let server = Server::start([recorded_reply(&limit, 0), recorded_reply(&safety, 0)]).await;
    let transcript = [Message::user("What is the capital of France?")];
    let request = ChatRequest::new(&transcript)
        .max_tokens(5)
        .thinking(ThinkingConfig::Budget(0));
    let gemini = provider(&server, "gemini-2.5-flash");
    let cut = gemini.complete(&request).await.unwrap();
    assert_eq!(cut.stop_reason, StopReason::MaxTokens);
    assert_eq!(cut.provider_stop_reason.as_deref(), Some("MAX_TOKENS"));
    assert_eq!(cut.message.content, "The capital of France is");
    assert_eq!(
        server.received()[0].json()["generationConfig"],
        json!({"thinkingConfig": {"thinkingBudget": 0}, "maxOutputTokens": 5}),
        "no thinking: nothing to include, and the limit is the answer's"
    );
    let refused = gemini
        .complete(&ChatRequest::new(&[Message::user("Tell me a joke.")]))
        .await
        .unwrap();
    assert_eq!(refused.stop_reason, StopReason::Refusal);
    assert_eq!(refused.provider_stop_reason.as_deref(), Some("SAFETY"));
    assert_eq!(refused.message.content, "");
    assert_eq!(refused.usage.input_tokens, 14);
}

#[tokio::test]
async fn cached_and_thinking_tokens_are_counted_apart() {
    let cassette = cassette("gemini_vcr_nonstream_cached_content_thoughts_usage.yaml");
    let server = Server::start([recorded_reply(&cassette, 1)]).await;
    let transcript = [Message::user("What is the capital?")];
    let answer = provider(&server, "gemini-2.5-flash")
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    assert_eq!(answer.message.content, "Paris.");
    // 3,520 prompt tokens of which 3,512 cached; 2 answer tokens and 42 of thinking.
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 8,
            output_tokens: 44,
            cache_read_tokens: 3512,
            cache_write_tokens: 0,
            reasoning_tokens: 42,
            ..Usage::default() // all of it text: no tokens of other modalities
        }
    );
    assert_eq!(answer.usage.total(), 3564, "the recorded totalTokenCount");
}

#[test]
fn tool_choice_is_the_function_calling_mode() {
    let transcript = [Message::user("hi")];
    let tools =
        json_schema_tools("gemini_vcr_nonstream_three_parallel_calls_signed_roundtrip.yaml");
    let body = |choice: ToolChoice| {
        let request = ChatRequest::new(&transcript)
            .tools(&tools)
            .tool_choice(choice);
        GeminiProvider::new("k", "m").request_body(&request, true)["toolConfig"].clone()
    };
    assert_eq!(
        body(ToolChoice::Auto),
        Value::Null,
        "the default is not sent"
    );
    assert_eq!(
        body(ToolChoice::Required),
        json!({"functionCallingConfig": {"mode": "ANY"}})
    );
    assert_eq!(
        body(ToolChoice::None),
        json!({"functionCallingConfig": {"mode": "NONE"}})
    );
    assert_eq!(
        body(ToolChoice::Tool("final_result".into())),
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["final_result"]}})
    );
}
