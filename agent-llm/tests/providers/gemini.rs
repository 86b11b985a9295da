//! Gemini against its recorded traffic (pydantic-ai's cassettes), replayed over loopback:
//! conversations turn by turn with what eugene sends compared to what was recorded, thought
//! signatures echoed back exactly, thinking, structured output, usage and finish reasons.

use agent_core::{SkillOutput, ToolDefinition, ToolResult};
use agent_llm::{
    ChatRequest, ChatResponse, Effort, GeminiProvider, LlmProvider, Message, StopReason,
    StreamEvent, ThinkingConfig, Usage,
};
use serde_json::{Value, json};

use crate::server::{End, Received, Reply, Server, fixture};
use crate::{done, drain};

/// A recorded cassette.
pub(crate) fn cassette(name: &str) -> Value {
    serde_yaml_ng::from_str(&fixture(name)).unwrap()
}

/// Interaction `i`'s request body as recorded.
pub(crate) fn recorded_request(cassette: &Value, i: usize) -> &Value {
    &cassette["interactions"][i]["request"]["parsed_body"]
}

/// Interaction `i`'s streamed body, byte for byte.
pub(crate) fn recorded_stream(cassette: &Value, i: usize) -> String {
    let body = &cassette["interactions"][i]["response"]["body"]["string"];
    body.as_str().expect("a streamed body").to_owned()
}

/// A server-sent-events body as the server streamed it: one chunk per event.
pub(crate) fn stream_reply(body: &str) -> Reply {
    let chunks = body
        .split_inclusive("\r\n\r\n")
        .map(|event| event.as_bytes().to_vec())
        .collect();
    Reply::sse_chunks(chunks, End::Finish)
}

/// Interaction `i`'s answer, as recorded.
pub(crate) fn recorded_reply(cassette: &Value, i: usize) -> Reply {
    let response = &cassette["interactions"][i]["response"];
    if response["body"]["string"].is_string() {
        return stream_reply(&recorded_stream(cassette, i));
    }
    let status = response["status"]["code"].as_u64().unwrap() as u16;
    Reply::json(status, &response["parsed_body"])
}

/// A provider for `model` talking to `server` (the base URL has the API version, as Google's).
pub(crate) fn provider(server: &Server, model: &str) -> GeminiProvider {
    GeminiProvider::new("gm-test", model).with_base_url(format!("{}/v1beta", server.url))
}

/// What pydantic-ai recorded, in the form eugene sends it: its made-up call ids replaced by
/// ours (pairwise, in order), results under `output` instead of its `return_value`, and
/// signatures back in base64's standard alphabet (the Python SDK re-encodes the bytes it was
/// given in the URL-safe one). Nothing else changes.
pub(crate) fn as_we_send(recorded: &Value, our_ids: &[String]) -> Value {
    let mut theirs = Vec::new();
    collect_call_ids(recorded, &mut theirs);
    let mut value = recorded.clone();
    rewrite(&mut value, &theirs, our_ids);
    value
}

fn collect_call_ids(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(id) = map.get("functionCall").and_then(|c| c["id"].as_str()) {
                into.push(id.to_owned());
            }
            map.values().for_each(|v| collect_call_ids(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_call_ids(v, into)),
        _ => {}
    }
}

fn rewrite(value: &mut Value, theirs: &[String], ours: &[String]) {
    match value {
        Value::Object(map) => {
            for key in ["functionCall", "functionResponse"] {
                if let Some(id) = map.get_mut(key).and_then(|c| c.get_mut("id")) {
                    let at = theirs.iter().position(|t| Some(t.as_str()) == id.as_str());
                    *id = json!(ours[at.expect("a recorded id")]);
                }
            }
            if let Some(response) = map.get_mut("response").and_then(Value::as_object_mut)
                && let Some(returned) = response.remove("return_value")
            {
                response.insert("output".into(), returned);
            }
            if let Some(Value::String(signature)) = map.get_mut("thoughtSignature") {
                *signature = signature.replace('-', "+").replace('_', "/");
            }
            map.values_mut().for_each(|v| rewrite(v, theirs, ours));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, theirs, ours)),
        _ => {}
    }
}

/// A recorded conversation and what replaying it gave.
struct Replayed {
    cassette: Value,
    answers: Vec<ChatResponse>,
    sent: Vec<Received>,
    /// Every call id of the conversation, in order.
    ids: Vec<String>,
}

/// Replays a recorded conversation: each recorded answer in turn, our transcript growing with
/// each answer and the results the recording sent back next (handed over in `reverse` order,
/// to show they are put back in the order of the calls).
async fn replay(
    name: &str,
    configure: impl Fn(GeminiProvider) -> GeminiProvider,
    tools: &[ToolDefinition],
    system: Option<&str>,
    stream: bool,
    reverse: bool,
) -> Replayed {
    let cassette = cassette(name);
    let turns = cassette["interactions"].as_array().unwrap().len();
    let server = Server::start((0..turns).map(|i| recorded_reply(&cassette, i))).await;
    let first = recorded_request(&cassette, 0);
    let model = cassette["interactions"][0]["request"]["uri"]
        .as_str()
        .unwrap()
        .split("/models/")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    let provider = configure(provider(&server, &model));
    let mut transcript = vec![Message::user(
        first["contents"][0]["parts"][0]["text"].as_str().unwrap(),
    )];
    let mut answers = Vec::new();
    let mut ids = Vec::new();
    for i in 0..turns {
        let mut request = ChatRequest::new(&transcript).tools(tools);
        if let Some(system) = system {
            request = request.system(system);
        }
        let answer = if stream {
            let (events, error) = drain(provider.stream(&request)).await;
            assert!(error.is_none(), "turn {i}: {error:?}");
            done(&events).clone()
        } else {
            provider.complete(&request).await.unwrap()
        };
        transcript.push(answer.message.clone());
        ids.extend(answer.message.tool_calls.iter().map(|c| c.id.to_string()));
        if i + 1 < turns {
            let next = recorded_request(&cassette, i + 1);
            let results = next["contents"].as_array().unwrap().last().unwrap();
            let mut messages: Vec<Message> = results["parts"]
                .as_array()
                .unwrap()
                .iter()
                .zip(&answer.message.tool_calls)
                .map(|(part, call)| {
                    let response = &part["functionResponse"];
                    assert_eq!(response["name"], call.name.as_str());
                    let text = match &response["response"]["return_value"] {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    Message::tool_result(&ToolResult::new(call, Ok(SkillOutput::from(text))))
                })
                .collect();
            if reverse {
                messages.reverse();
            }
            transcript.extend(messages);
        }
        answers.push(answer);
    }
    assert_eq!(server.remaining(), 0);
    Replayed {
        cassette,
        answers,
        sent: server.received(),
        ids,
    }
}

/// The tools of a recording whose declarations are JSON Schema (`parameters_json_schema`).
pub(crate) fn json_schema_tools(cassette: &str) -> Vec<ToolDefinition> {
    let cassette = self::cassette(cassette);
    recorded_request(&cassette, 0)["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| ToolDefinition {
            name: d["name"].as_str().unwrap().into(),
            description: d["description"].as_str().unwrap().into(),
            input_schema: d["parameters_json_schema"].clone(),
            output_schema: None,
        })
        .collect()
}

fn json_schema(provider: GeminiProvider) -> GeminiProvider {
    provider.with_json_schema(true)
}

#[tokio::test]
async fn a_streamed_answer_with_a_system_instruction_is_read_and_sent_as_recorded() {
    let cassette = cassette("gemini_vcr_stream_text_system_instruction.yaml");
    let server = Server::start([recorded_reply(&cassette, 0)]).await;
    let transcript = [Message::user("What is the capital of France?")];
    let request = ChatRequest::new(&transcript)
        .system("You are a helpful chatbot.")
        .temperature(0.0);
    let (events, error) = drain(provider(&server, "gemini-2.0-flash-exp").stream(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["The", " capital of France", " is Paris.\n"]);
    let answer = done(&events);
    assert_eq!(answer.message.content, "The capital of France is Paris.\n");
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(answer.provider_stop_reason.as_deref(), Some("STOP"));
    // The running total's last word: the prompt count changed between chunks.
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 13,
            output_tokens: 8,
            ..Usage::default()
        }
    );
    assert_eq!(answer.id.as_deref(), Some("w1peaMz6INOvnvgPgYfPiQY"));
    assert_eq!(answer.model.as_deref(), Some("gemini-2.0-flash-exp"));
    assert!(answer.message.provider_items.is_empty());

    let sent = &server.received()[0];
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-2.0-flash-exp:streamGenerateContent?alt=sse"
    );
    assert_eq!(sent.header("x-goog-api-key"), Some("gm-test"));
    let recorded = recorded_request(&cassette, 0);
    let body = sent.json();
    assert_eq!(body["contents"], recorded["contents"]);
    assert_eq!(
        body["systemInstruction"]["parts"],
        recorded["systemInstruction"]["parts"]
    );
    assert_eq!(body["generationConfig"]["temperature"], json!(0.0));
}

#[tokio::test]
async fn three_streamed_turns_of_calls_and_results_are_sent_back_as_recorded() {
    let tool = |name: &str, what: &str, arg: &str, about: &str| ToolDefinition {
        name: name.into(),
        description: what.into(),
        input_schema: json!({
            "type": "object",
            "properties": {arg: {"type": "string", "description": about}},
            "required": [arg],
        }),
        output_schema: None,
    };
    let tools = [
        tool(
            "get_capital",
            "Get the capital of a country.",
            "country",
            "The country name.",
        ),
        tool(
            "get_temperature",
            "Get the temperature in a city.",
            "city",
            "The city name.",
        ),
    ];
    let replayed = replay(
        "gemini_vcr_stream_sequential_function_calls_roundtrip.yaml",
        |p| p,
        &tools,
        Some("You are a helpful chatbot."),
        true,
        false,
    )
    .await;
    let [capital, temperature, last] = &replayed.answers[..] else {
        panic!("three answers")
    };
    assert_eq!(capital.stop_reason, StopReason::ToolUse, "STOP with a call");
    assert_eq!(capital.message.tool_calls[0].name, "get_capital");
    assert_eq!(
        capital.message.tool_calls[0].arguments,
        json!({"country": "France"})
    );
    // Gemini gave no id: ours, from the answer's id and the call's place.
    assert_eq!(
        &*capital.message.tool_calls[0].id,
        "call_1lpeaMTxIpW1nvgP-O3vwQY_0"
    );
    assert_eq!(
        temperature.message.tool_calls[0].arguments,
        json!({"city": "Paris"})
    );
    assert_eq!(last.message.content, "The temperature in Paris is 30°C.\n");
    assert_eq!(last.stop_reason, StopReason::EndTurn);
    for (i, sent) in replayed.sent.iter().enumerate() {
        let recorded = recorded_request(&replayed.cassette, i);
        let body = sent.json();
        assert_eq!(
            body["contents"],
            as_we_send(&recorded["contents"], &replayed.ids),
            "turn {i}"
        );
        // The schemas, converted from JSON Schema, are what the SDK sent.
        assert_eq!(body["tools"], recorded["tools"], "turn {i}");
        assert!(body.get("toolConfig").is_none(), "automatic is the default");
    }
}

#[tokio::test]
async fn a_streamed_call_keeps_its_thought_signature_and_sends_it_back_byte_for_byte() {
    let name = "gemini_vcr_stream_thought_signature_on_function_call_roundtrip.yaml";
    let replayed = replay(
        name,
        json_schema,
        &json_schema_tools(name),
        None,
        true,
        false,
    )
    .await;
    let call = &replayed.answers[0];
    assert_eq!(call.stop_reason, StopReason::ToolUse);
    assert_eq!(call.message.tool_calls[0].name, "get_country");
    assert_eq!(
        call.usage,
        Usage {
            input_tokens: 29,
            output_tokens: 212,
            reasoning_tokens: 202,
            ..Usage::default()
        }
    );
    let body = recorded_stream(&replayed.cassette, 0);
    let received: Value = serde_json::from_str(
        body.split("\r\n\r\n")
            .next()
            .unwrap()
            .strip_prefix("data: ")
            .unwrap(),
    )
    .unwrap();
    let signature = &received["candidates"][0]["content"]["parts"][0]["thoughtSignature"];
    assert!(signature.as_str().unwrap().len() > 1000);
    assert_eq!(
        call.message.provider_items_of("gemini").collect::<Vec<_>>(),
        [
            &json!({"part": "functionCall", "id": &*call.message.tool_calls[0].id, "thoughtSignature": signature})
        ]
    );
    let sent = replayed.sent[1].json();
    assert_eq!(
        sent["contents"][1]["parts"][0]["thoughtSignature"], *signature,
        "exactly as received"
    );
    assert_eq!(
        sent["contents"],
        as_we_send(
            &recorded_request(&replayed.cassette, 1)["contents"],
            &replayed.ids
        )
    );
    assert_eq!(
        replayed.answers[1].message.content,
        "The capital of Mexico is Mexico City."
    );
}

#[tokio::test]
async fn parallel_calls_signed_on_the_first_go_back_in_call_order_over_five_turns() {
    let name = "gemini_vcr_nonstream_three_parallel_calls_signed_roundtrip.yaml";
    let tools = json_schema_tools(name);
    let system = "Tell three jokes. Generate topics with the generate_topic tool.";
    let replayed = replay(name, json_schema, &tools, Some(system), false, true).await;
    let first = &replayed.answers[0];
    assert_eq!(first.message.tool_calls.len(), 3);
    let ids: Vec<&str> = first.message.tool_calls.iter().map(|c| &*c.id).collect();
    assert_eq!(
        ids,
        [
            "call_wOd8abGuO5rgz7IP5tLEGA_0",
            "call_wOd8abGuO5rgz7IP5tLEGA_1",
            "call_wOd8abGuO5rgz7IP5tLEGA_2"
        ]
    );
    let signed: Vec<&Value> = first.message.provider_items_of("gemini").collect();
    assert_eq!(signed.len(), 1, "only the first call is signed");
    assert_eq!(signed[0]["id"], ids[0]);
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(
        first.usage,
        Usage {
            input_tokens: 83,
            output_tokens: 220,
            reasoning_tokens: 190,
            ..Usage::default()
        }
    );
    let last = replayed.answers.last().unwrap();
    assert_eq!(last.message.tool_calls[0].name, "final_result");
    for (i, sent) in replayed.sent.iter().enumerate() {
        let recorded = recorded_request(&replayed.cassette, i);
        let body = sent.json();
        // Results were handed over last call first; they go in the calls' order.
        assert_eq!(
            body["contents"],
            as_we_send(&recorded["contents"], &replayed.ids),
            "turn {i}"
        );
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], system);
        let declarations = body["tools"][0]["functionDeclarations"].as_array().unwrap();
        for (ours, theirs) in declarations.iter().zip(
            recorded["tools"][0]["functionDeclarations"]
                .as_array()
                .unwrap(),
        ) {
            assert_eq!(
                ours["parametersJsonSchema"],
                theirs["parameters_json_schema"]
            );
        }
    }
}

#[tokio::test]
async fn a_thought_summary_and_the_signed_text_go_back_as_recorded() {
    let name = "gemini_vcr_nonstream_thought_part_signed_text_roundtrip.yaml";
    let cassette = cassette(name);
    let server = Server::start([recorded_reply(&cassette, 0), recorded_reply(&cassette, 1)]).await;
    let provider = provider(&server, "gemini-3-pro-preview").with_json_schema(true);
    let tools = json_schema_tools(name);
    let system = "You are a helpful assistant.";
    let thinking = ThinkingConfig::Adaptive(Effort::High);
    let mut transcript = vec![Message::user("How do I cross the street?")];
    let first = provider
        .complete(
            &ChatRequest::new(&transcript)
                .system(system)
                .tools(&tools)
                .thinking(thinking),
        )
        .await
        .unwrap();
    assert!(
        first
            .message
            .content
            .starts_with("Crossing the street safely")
    );
    assert!(
        !first.message.content.contains("My Thought Process"),
        "thoughts are not the answer"
    );
    let items: Vec<&Value> = first.message.provider_items_of("gemini").collect();
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0]["part"], "thought");
    assert!(
        items[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("**A Safe Street-Crossing Guide")
    );
    assert_eq!(items[1]["part"], "text");
    let recorded_signature = &recorded_response(&cassette, 0)["candidates"][0]["content"]["parts"]
        [1]["thoughtSignature"];
    assert_eq!(items[1]["thoughtSignature"], *recorded_signature);
    assert_eq!(first.usage.reasoning_tokens, 1001);
    assert_eq!(first.usage.output_tokens, 1737);

    transcript.push(first.message.clone());
    let follow_up = recorded_request(&cassette, 1)["contents"][2]["parts"][0]["text"]
        .as_str()
        .unwrap();
    transcript.push(Message::user(follow_up));
    let second = provider
        .complete(
            &ChatRequest::new(&transcript)
                .system(system)
                .tools(&tools)
                .thinking(thinking),
        )
        .await
        .unwrap();
    assert!(!second.message.content.is_empty());
    let sent = server.received();
    assert_eq!(
        sent[1].json()["contents"],
        as_we_send(&recorded_request(&cassette, 1)["contents"], &[])
    );
    assert_eq!(
        sent[0].json()["generationConfig"]["thinkingConfig"],
        json!({"thinkingLevel": "high", "includeThoughts": true})
    );
    assert_eq!(
        sent[0].path,
        "/v1beta/models/gemini-3-pro-preview:generateContent"
    );
}

/// Interaction `i`'s whole answer, as recorded.
pub(crate) fn recorded_response(cassette: &Value, i: usize) -> &Value {
    &cassette["interactions"][i]["response"]["parsed_body"]
}
