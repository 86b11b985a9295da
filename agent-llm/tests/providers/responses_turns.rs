//! The Responses API over several recorded turns: an answer of reasoning, commentary and a call
//! sent back item by item in its order; structured output (`text.format`) beside a tool; and a
//! conversation chained by `previous_response_id`.

use agent_core::{SkillOutput, ToolDefinition, ToolResult};
use agent_llm::{
    ChatRequest, LlmProvider, Message, ResponseSchema, ResponsesState, StopReason, StreamEvent,
};
use serde_json::{Value, json};

use crate::responses::{answer, cassette, provider};
use crate::server::Server;
use crate::{done, drain};

fn sent_then(cassette: &Value, i: usize) -> Value {
    cassette["interactions"][i]["request"]["parsed_body"].clone()
}

fn tools_of(recorded: &Value) -> Vec<ToolDefinition> {
    recorded["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| ToolDefinition {
            name: t["name"].as_str().unwrap().into(),
            description: t["description"].as_str().unwrap_or_default().into(),
            input_schema: t["parameters"].clone(),
            output_schema: None,
        })
        .collect()
}

#[tokio::test]
async fn reasoning_commentary_and_a_call_go_back_in_their_order_with_their_ids() {
    let cassette =
        cassette("openai_responses_vcr_stream_commentary_phase_tool_call_roundtrip.yaml");
    let server = Server::start([answer(&cassette, 0), answer(&cassette, 1)]).await;
    let provider = provider(&server)
        .with_strict_tools(true)
        .with_state(ResponsesState::Stateless);
    let recorded = sent_then(&cassette, 0);
    let instructions = recorded["instructions"].as_str().unwrap().to_owned();
    let tools = tools_of(&recorded);
    let mut transcript = vec![Message::user("What is the capital of PotatoLand?")];
    fn ask<'a>(t: &'a [Message], system: &'a str, tools: &'a [ToolDefinition]) -> ChatRequest<'a> {
        ChatRequest::new(t).system(system).tools(tools)
    }

    let (events, error) = drain(provider.stream(&ask(&transcript, &instructions, &tools))).await;
    assert!(error.is_none(), "{error:?}");
    let first = done(&events).clone();
    let commentary = "I\u{2019}ll check the capital lookup tool for \u{201c}PotatoLand.\u{201d}";
    assert_eq!(first.message.content, commentary);
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let call = first.message.tool_calls[0].clone();
    assert_eq!(call.arguments, json!({"country": "PotatoLand"}));
    // The commentary streamed before the call was announced.
    let text_at = events
        .iter()
        .position(|e| matches!(e, StreamEvent::TextDelta(_)));
    let call_at = events
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCallStarted { .. }));
    assert!(text_at < call_at, "{events:?}");
    assert_eq!(first.usage.reasoning_tokens, 26);

    transcript.push(first.message.clone());
    transcript.push(Message::tool_result(&ToolResult::new(
        &call,
        Ok(SkillOutput::from("Potato City")),
    )));
    let (events, error) = drain(provider.stream(&ask(&transcript, &instructions, &tools))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        done(&events).message.content,
        "The capital of PotatoLand is **Potato City**."
    );

    let ours = server.received()[1].json()["input"].clone();
    let theirs = sent_then(&cassette, 1)["input"].clone();
    assert_eq!(ours.as_array().unwrap().len(), 5);
    for i in [0, 1, 3, 4] {
        assert_eq!(ours[i], theirs[i], "input item {i}");
    }
    // The cassette keeps the request's text with plain quotes; the rest of the message item is
    // as the recorded client sent it back: its id, phase and status.
    let mut message = ours[2].clone();
    assert_eq!(message["content"][0]["text"], commentary);
    message["content"][0]["text"] = theirs[2]["content"][0]["text"].clone();
    assert_eq!(message, theirs[2]);
}

#[tokio::test]
async fn a_typed_answer_is_asked_for_with_text_format_and_read_from_the_text() {
    let cassette =
        cassette("openai_responses_vcr_nonstream_json_schema_text_format_roundtrip.yaml");
    let server = Server::start([answer(&cassette, 0), answer(&cassette, 1)]).await;
    let provider = provider(&server);
    let recorded = sent_then(&cassette, 0);
    let tools = tools_of(&recorded);
    let format = &recorded["text"]["format"];
    let schema = ResponseSchema {
        name: format["name"].as_str().unwrap().into(),
        schema: format["schema"].clone(),
    };
    assert!(provider.supports_response_schema());
    let mut transcript = vec![Message::user(
        recorded["input"][0]["content"].as_str().unwrap(),
    )];
    fn ask<'a>(
        t: &'a [Message],
        tools: &'a [ToolDefinition],
        schema: &'a ResponseSchema,
    ) -> ChatRequest<'a> {
        ChatRequest::new(t).tools(tools).response_schema(schema)
    }

    let first = provider
        .complete(&ask(&transcript, &tools, &schema))
        .await
        .unwrap();
    assert_eq!(first.message.tool_calls[0].name, "get_user_country");
    assert_eq!(first.message.tool_calls[0].arguments, json!({}));
    transcript.push(first.message.clone());
    transcript.push(Message::tool_result(&ToolResult::new(
        &first.message.tool_calls[0],
        Ok(SkillOutput::from("Mexico")),
    )));
    let second = provider
        .complete(&ask(&transcript, &tools, &schema))
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&second.message.content).unwrap(),
        json!({"city": "Mexico City", "country": "Mexico"})
    );

    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    for (i, body) in sent.iter().enumerate() {
        assert_eq!(body["text"], sent_then(&cassette, i)["text"], "request {i}");
        assert_eq!(
            body["tools"],
            sent_then(&cassette, i)["tools"],
            "request {i}"
        );
    }
    assert_eq!(
        sent[1]["input"][1],
        json!({"type": "function_call", "id": "fc_68477f0fa7c081a19a525f7c6f180f310b8591d9001d2329",
               "call_id": "call_tTAThu8l2S9hNky2krdwijGP", "name": "get_user_country", "arguments": "{}"}),
        "an empty text is not sent as a message"
    );
    assert_eq!(sent[1]["input"][2], sent_then(&cassette, 1)["input"][3]);
}

#[tokio::test]
async fn a_chained_conversation_sends_only_what_follows_the_last_answer() {
    let cassette = cassette("openai_responses_vcr_nonstream_previous_response_id_chain.yaml");
    let server = Server::start((0..4).map(|i| answer(&cassette, i))).await;
    let provider = provider(&server)
        .with_strict_tools(true)
        .with_state(ResponsesState::Chained);
    let tools = tools_of(&sent_then(&cassette, 0));
    let mut transcript = vec![Message::user("Say hi in one word, no punctuation.")];

    let hello = provider
        .complete(&ChatRequest::new(&transcript).tools(&tools))
        .await
        .unwrap();
    assert_eq!(hello.message.content, "Hello");
    transcript.push(hello.message);
    transcript.push(Message::user("What's the weather in New York?"));
    for result in ["no station in New York; try NYC", "Sunny, 72F"] {
        let asked = provider
            .complete(&ChatRequest::new(&transcript).tools(&tools))
            .await
            .unwrap();
        assert_eq!(asked.stop_reason, StopReason::ToolUse);
        let call = asked.message.tool_calls[0].clone();
        transcript.push(asked.message);
        transcript.push(Message::tool_result(&ToolResult::new(
            &call,
            Ok(SkillOutput::from(result)),
        )));
    }
    let last = provider
        .complete(&ChatRequest::new(&transcript).tools(&tools))
        .await
        .unwrap();
    assert_eq!(
        last.message.content,
        "The weather in New York is sunny and 72°F."
    );

    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    assert!(sent[0].get("previous_response_id").is_none());
    assert_eq!(sent[0]["input"], sent_then(&cassette, 0)["input"]);
    // The second and the last requests are the recorded ones: the new messages only, after the
    // answer they continue.
    for i in [1, 3] {
        let theirs = sent_then(&cassette, i);
        for key in ["input", "previous_response_id", "store"] {
            assert_eq!(sent[i][key], theirs[key], "request {i}: {key}");
        }
    }
    assert_eq!(
        sent[2]["previous_response_id"],
        sent_then(&cassette, 2)["previous_response_id"]
    );
    assert_eq!(sent[2]["input"].as_array().unwrap().len(), 1);
}
