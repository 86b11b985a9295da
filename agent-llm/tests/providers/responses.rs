//! The OpenAI Responses API against recorded traffic (pydantic-ai's cassettes, replayed over
//! HTTP on loopback): tool calls streamed and whole, reasoning summaries as thinking, encrypted
//! reasoning and the items of an answer sent back on the next turn as the recorded client sent
//! them, structured output, and a conversation chained by `previous_response_id`.

use agent_core::{SkillOutput, ToolDefinition, ToolResult};
use agent_llm::{
    ChatRequest, Effort, LlmProvider, Message, OpenAiResponsesProvider, ResponsesState, StopReason,
    StreamEvent, ThinkingConfig, ToolChoice, Usage,
};
use serde_json::{Value, json};

use crate::server::{Reply, Server, fixture};
use crate::{done, drain};

pub fn provider(server: &Server) -> OpenAiResponsesProvider {
    OpenAiResponsesProvider::new("sk-test", "gpt-test").with_base_url(format!("{}/v1", server.url))
}

pub fn cassette(name: &str) -> Value {
    serde_yaml_ng::from_str(&fixture(name)).unwrap()
}

/// The body the recorded client sent in interaction `i`.
fn sent_then(cassette: &Value, i: usize) -> Value {
    cassette["interactions"][i]["request"]["parsed_body"].clone()
}

/// The recorded answer of interaction `i`, whole or streamed.
pub fn answer(cassette: &Value, i: usize) -> Reply {
    let response = &cassette["interactions"][i]["response"];
    match response["body"]["string"].as_str() {
        Some(events) => Reply::sse(events),
        None => Reply::json(200, &response["parsed_body"]),
    }
}

fn tool(recorded: &Value) -> ToolDefinition {
    ToolDefinition {
        name: recorded["name"].as_str().unwrap().into(),
        description: recorded["description"].as_str().unwrap_or_default().into(),
        input_schema: recorded["parameters"].clone(),
        output_schema: None,
    }
}

fn texts(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn thinking(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// The answer's items of `kind` as the provider keeps them for the next turn.
fn kept<'m>(message: &'m Message, kind: &str) -> Vec<&'m Value> {
    message
        .provider_items_of("openai-responses")
        .filter(|item| item["type"] == kind)
        .collect()
}

#[tokio::test]
async fn a_streamed_call_then_its_answer_round_trip_as_recorded() {
    let cassette = cassette("openai_responses_vcr_stream_tool_call_then_text_roundtrip.yaml");
    let server = Server::start([answer(&cassette, 0), answer(&cassette, 1)]).await;
    let provider = provider(&server).with_strict_tools(true);
    let tools = [tool(&sent_then(&cassette, 0)["tools"][0])];
    let mut transcript = vec![Message::user("What is the capital of France?")];

    let (events, error) =
        drain(provider.stream(&ChatRequest::new(&transcript).tools(&tools))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events[0],
        StreamEvent::ToolCallStarted {
            index: 0,
            id: "call_kL0PCQV7M2WMoVX8V8OtYSAL".into(),
            name: "get_capital".into()
        }
    );
    let pieces: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(pieces, ["{\"", "country", "\":\"", "France", "\"}"]);
    let first = done(&events).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let call = &first.message.tool_calls[0];
    assert_eq!(
        (call.id.as_str(), &call.arguments),
        (
            "call_kL0PCQV7M2WMoVX8V8OtYSAL",
            &json!({"country": "France"})
        )
    );
    assert!(events.contains(&StreamEvent::ToolCallFinished(call.clone())));
    assert_eq!(
        first.usage,
        Usage {
            input_tokens: 255,
            output_tokens: 16,
            ..Usage::default()
        }
    );
    assert_eq!(
        first.id.as_deref(),
        Some("resp_67e554a155508191900ee113293c4c830794405d35281ae2")
    );

    transcript.push(first.message.clone());
    transcript.push(Message::tool_result(&ToolResult::new(
        call,
        Ok(SkillOutput::from("Paris")),
    )));
    let (events, error) =
        drain(provider.stream(&ChatRequest::new(&transcript).tools(&tools))).await;
    assert!(error.is_none(), "{error:?}");
    let second = done(&events);
    assert_eq!(texts(&events), "The capital of France is Paris.");
    assert_eq!(second.message.content, "The capital of France is Paris.");
    assert_eq!(second.stop_reason, StopReason::EndTurn);
    assert_eq!(
        (second.usage.input_tokens, second.usage.output_tokens),
        (278, 9)
    );

    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    assert_eq!(server.received()[0].path, "/v1/responses");
    assert_eq!(
        server.received()[0].header("authorization"),
        Some("Bearer sk-test")
    );
    assert_eq!(sent[0]["input"], sent_then(&cassette, 0)["input"]);
    assert_eq!(sent[0]["tools"], sent_then(&cassette, 0)["tools"]);
    assert_eq!(sent[0]["stream"], json!(true));
    // The call goes back with its item id, answered by its call id.
    assert_eq!(
        sent[1]["input"],
        json!([
            {"role": "user", "content": "What is the capital of France?"},
            {"type": "function_call", "id": "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2",
             "call_id": "call_kL0PCQV7M2WMoVX8V8OtYSAL", "name": "get_capital",
             "arguments": "{\"country\":\"France\"}"},
            {"type": "function_call_output", "call_id": "call_kL0PCQV7M2WMoVX8V8OtYSAL", "output": "Paris"},
        ])
    );
}

#[tokio::test]
async fn encrypted_reasoning_and_a_call_go_back_exactly_as_the_recorded_client_sent_them() {
    let cassette = cassette("openai_responses_vcr_nonstream_reasoning_tool_call_roundtrip.yaml");
    let server = Server::start([answer(&cassette, 0), answer(&cassette, 1)]).await;
    let provider = provider(&server)
        .with_strict_tools(true)
        .with_state(ResponsesState::Stateless);
    let recorded = sent_then(&cassette, 0);
    let instructions = recorded["instructions"].as_str().unwrap().to_owned();
    let tools = [tool(&recorded["tools"][0])];
    let mut transcript = vec![Message::user(
        recorded["input"][0]["content"].as_str().unwrap(),
    )];
    fn ask<'a>(t: &'a [Message], system: &'a str, tools: &'a [ToolDefinition]) -> ChatRequest<'a> {
        ChatRequest::new(t)
            .system(system)
            .tools(tools)
            .thinking(ThinkingConfig::Adaptive(Effort::Low))
    }

    let first = provider
        .complete(&ask(&transcript, &instructions, &tools))
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(first.message.tool_calls[0].name, "update_plan");
    assert!(
        first.message.tool_calls[0].arguments["plan"]
            .as_str()
            .unwrap()
            .starts_with("Plan:\n1) Determine required first-letter acrostics")
    );
    assert_eq!(first.message.content, "", "the reasoning is not the answer");
    assert_eq!(
        first.usage,
        Usage {
            input_tokens: 124,
            output_tokens: 1926,
            reasoning_tokens: 1792,
            ..Usage::default()
        }
    );
    let reasoning = kept(&first.message, "reasoning");
    assert_eq!(reasoning.len(), 1);
    assert!(
        reasoning[0]["encrypted_content"]
            .as_str()
            .unwrap()
            .starts_with("gAAAAABoxC0_aDtrISw_")
    );

    transcript.push(first.message.clone());
    transcript.push(Message::tool_result(&ToolResult::new(
        &first.message.tool_calls[0],
        Ok(SkillOutput::from("plan updated")),
    )));
    let second = provider
        .complete(&ask(&transcript, &instructions, &tools))
        .await
        .unwrap();
    assert!(
        second
            .message
            .content
            .starts_with("Softly old fountains illumine alleys\n")
    );
    assert_eq!(second.stop_reason, StopReason::EndTurn);
    assert_eq!(
        second.usage,
        Usage {
            input_tokens: 39,
            output_tokens: 124,
            cache_read_tokens: 2048,
            ..Usage::default()
        }
    );

    let sent: Vec<Value> = server.received().iter().map(|r| r.json()).collect();
    for (ours, theirs) in sent.iter().zip([recorded.clone(), sent_then(&cassette, 1)]) {
        for key in ["input", "instructions", "include"] {
            assert_eq!(ours[key], theirs[key], "{key}");
        }
        for key in ["name", "parameters", "strict", "type"] {
            assert_eq!(ours["tools"][0][key], theirs["tools"][0][key], "{key}");
        }
        assert_eq!(ours["reasoning"]["effort"], "low");
        assert_eq!(ours["store"], json!(false));
    }
}

#[tokio::test]
async fn streamed_reasoning_summaries_are_thinking_and_the_text_is_the_answer() {
    let cassette = cassette("openai_responses_vcr_stream_reasoning_summary_then_text.yaml");
    let server = Server::start([answer(&cassette, 0)]).await;
    let transcript = [Message::user("How do I cross the street?")];
    let request = ChatRequest::new(&transcript).thinking(ThinkingConfig::Adaptive(Effort::High));
    let (events, error) = drain(provider(&server).stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);

    let body = cassette["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap();
    let completed: Value = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .find(|e| e["type"] == "response.completed")
        .unwrap();
    let output = &completed["response"]["output"];
    let said = output
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "message")
        .unwrap()["content"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(response.message.content, said);
    assert_eq!(texts(&events), said);
    let thought = thinking(&events);
    assert!(
        thought.starts_with("**Providing street crossing instructions**"),
        "{thought}"
    );
    // Four summary parts, each its own paragraph, none of them in the answer.
    let summaries = output[0]["summary"].as_array().unwrap();
    assert_eq!(summaries.len(), 4);
    let parts: Vec<&str> = summaries
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(thought, parts.join("\n\n"));
    assert!(!response.message.content.contains(parts[0]));
    assert_eq!(response.usage, {
        let usage = &completed["response"]["usage"];
        let n = |v: &Value| v.as_u64().unwrap();
        Usage {
            input_tokens: n(&usage["input_tokens"]),
            output_tokens: n(&usage["output_tokens"]),
            reasoning_tokens: n(&usage["output_tokens_details"]["reasoning_tokens"]),
            ..Usage::default()
        }
    });
    assert!(response.usage.reasoning_tokens > 0);
    assert_eq!(
        kept(&response.message, "reasoning")[0]["summary"],
        output[0]["summary"]
    );

    let sent = server.received()[0].json();
    assert_eq!(
        sent["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(sent["input"], sent_then(&cassette, 0)["input"]);
}

#[tokio::test]
async fn a_streamed_call_after_encrypted_reasoning_keeps_the_reasoning_for_the_next_turn() {
    let cassette = cassette("openai_responses_vcr_stream_encrypted_reasoning_then_tool_call.yaml");
    let server = Server::start([answer(&cassette, 0)]).await;
    let recorded = sent_then(&cassette, 0);
    let tools = [tool(&recorded["tools"][0])];
    let transcript = [Message::user("Calculate 100 * 200 / 3")];
    let request = ChatRequest::new(&transcript)
        .tools(&tools)
        .tool_choice(ToolChoice::Required);
    let provider = provider(&server).with_state(ResponsesState::Stateless);
    let (events, error) = drain(provider.stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.message.tool_calls[0].arguments,
        json!({"result": 6666})
    );
    assert!(thinking(&events).is_empty(), "no summaries were asked for");
    assert_eq!(response.usage.reasoning_tokens, {
        let body = cassette["interactions"][0]["response"]["body"]["string"]
            .as_str()
            .unwrap();
        let completed: Value = body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str::<Value>(d).unwrap())
            .find(|e| e["type"] == "response.completed")
            .unwrap();
        completed["response"]["usage"]["output_tokens_details"]["reasoning_tokens"]
            .as_u64()
            .unwrap()
    });
    let sent = server.received()[0].json();
    assert_eq!(sent["tool_choice"], "required");
    assert_eq!(sent["include"], recorded["include"]);

    // The next turn sends the reasoning (as its item closed), then the call with its item id.
    let next = vec![
        transcript[0].clone(),
        response.message.clone(),
        Message::tool_result(&ToolResult::new(
            &response.message.tool_calls[0],
            Ok(SkillOutput::from("ok")),
        )),
    ];
    let body = provider.request_body(&ChatRequest::new(&next).tools(&tools), true);
    let input = body["input"].as_array().unwrap();
    assert_eq!(input.len(), 4);
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(
        input[1]["id"],
        "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405"
    );
    assert!(
        input[1]["encrypted_content"]
            .as_str()
            .unwrap()
            .starts_with("gAAAAABoyXvxI6jwG5j6")
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call", "id": "fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042",
               "call_id": "call_CWXgs68YprAjp6t0371hiPOI", "name": "final_result",
               "arguments": "{\"result\":6666}"})
    );
    assert_eq!(input[3]["type"], "function_call_output");
}
