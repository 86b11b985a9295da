//! Typed runs and a paused run over Gemini, on real HTTP on loopback: what each output mode puts
//! on the wire (the final-answer function, `responseSchema`), answers read back whole and
//! streamed, and a run paused on a destructive call that continues from its state in JSON with
//! the call's thought signature still on it.

use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{Registry, SkillError};
use agent_llm::{GeminiProvider, LlmProvider};
use agent_runtime::{AgentRuntime, Decision, FinishReason, OutputMode, RunState};
use serde_json::{Value, json};

use crate::server::{End, Reply, Server};

use crate::ticket::{Ticket, answer, ticket};

fn gemini(server: &Server) -> GeminiProvider {
    GeminiProvider::new("gm-test", "gemini-2.5-flash").with_base_url(&server.url)
}

/// A whole answer of `parts`.
fn parts_answer(id: &str, parts: Value) -> Reply {
    Reply::json(
        200,
        &json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 10, "totalTokenCount": 30},
            "modelVersion": "gemini-2.5-flash", "responseId": id,
        }),
    )
}

fn text_answer(text: &str) -> Reply {
    parts_answer("r_text", json!([{"text": text}]))
}

/// A stream that writes `text` in pieces of 7 characters (JSON cut mid-token), the last with the
/// finish reason, as Gemini streams.
pub(crate) fn text_stream(text: &str) -> Reply {
    let chars: Vec<char> = text.chars().collect();
    let pieces: Vec<String> = chars.chunks(7).map(|c| c.iter().collect()).collect();
    let last = pieces.len() - 1;
    let chunks = pieces
        .iter()
        .enumerate()
        .map(|(i, piece)| {
            let mut candidate = json!({"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0});
            if i == last {
                candidate["finishReason"] = json!("STOP");
            }
            let chunk = json!({"candidates": [candidate], "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": i + 1}, "responseId": "r_stream"});
            format!("data: {chunk}\r\n\r\n").into_bytes()
        })
        .collect();
    Reply::sse_chunks(chunks, End::Finish)
}

fn runtime(provider: impl LlmProvider + 'static, with_tool: bool) -> AgentRuntime {
    let mut registry = Registry::new();
    if with_tool {
        registry.add(LookupSkill);
    }
    AgentRuntime::new(provider, registry)
}

/// Look a ticket up by number.
///
/// # Arguments
/// * `number` - The ticket's number.
#[agent_core::skill(read_only, register = false)]
async fn lookup(number: u32) -> Result<String, SkillError> {
    Ok(format!("ticket {number}: users cannot log in"))
}

#[tokio::test]
async fn tool_mode_offers_final_answer_as_a_converted_declaration_and_reads_its_args() {
    let server = Server::start([parts_answer(
        "r_tool",
        json!([{"functionCall": {"name": "final_answer", "args": answer()}}]),
    )])
    .await;
    let typed = runtime(gemini(&server), true)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = server.received()[0].json();
    let declarations = sent["tools"][0]["functionDeclarations"].as_array().unwrap();
    let names: Vec<&str> = declarations
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lookup", "final_answer"]);
    let parameters = &declarations[1]["parameters"];
    assert_eq!(parameters["type"], "OBJECT");
    assert_eq!(parameters["required"], json!(["title", "priority"]));
    assert_eq!(parameters["properties"]["labels"]["nullable"], json!(true));
    assert!(
        !parameters.to_string().contains("uint8"),
        "no format Gemini refuses: {parameters}"
    );
    assert!(sent["generationConfig"].get("responseSchema").is_none());
}

#[tokio::test]
async fn native_mode_sends_a_response_schema_and_reads_the_text() {
    let server = Server::start([text_answer(&answer().to_string())]).await;
    let typed = runtime(gemini(&server), false)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let config = server.received()[0].json()["generationConfig"].clone();
    assert_eq!(config["responseMimeType"], "application/json");
    let schema = &config["responseSchema"];
    assert_eq!(schema["type"], "OBJECT");
    // Strict form, converted: every property required, the optional one nullable.
    assert_eq!(schema["required"], json!(["title", "priority", "labels"]));
    assert_eq!(schema["properties"]["labels"]["type"], "ARRAY");
    assert_eq!(schema["properties"]["labels"]["nullable"], json!(true));
    assert!(schema.get("additionalProperties").is_none(), "{schema}");
}

#[tokio::test]
async fn native_mode_with_json_schema_sends_the_schema_as_it_is() {
    let server = Server::start([text_answer(&answer().to_string())]).await;
    let typed = runtime(gemini(&server).with_json_schema(true), false)
        .output_mode(OutputMode::Native)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let config = server.received()[0].json()["generationConfig"].clone();
    assert_eq!(
        config["responseJsonSchema"]["additionalProperties"],
        json!(false)
    );
    assert!(config.get("responseSchema").is_none());
}

#[tokio::test]
async fn a_streamed_native_answer_is_parsed_once_complete() {
    let server = Server::start([text_stream(&answer().to_string())]).await;
    let typed = runtime(gemini(&server), false)
        .streaming(true)
        .run("File a ticket.")
        .typed::<Ticket>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(ticket()));
    let sent = &server.received()[0];
    assert_eq!(
        sent.path,
        "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert!(sent.json()["generationConfig"]["responseSchema"].is_object());
}

static WIPED: AtomicUsize = AtomicUsize::new(0);

/// Wipe a directory.
///
/// # Arguments
/// * `dir` - The directory to wipe.
#[agent_core::skill(destructive, register = false)]
async fn wipe(dir: String) -> Result<String, SkillError> {
    WIPED.fetch_add(1, Ordering::SeqCst);
    Ok(format!("wiped {dir}"))
}

#[tokio::test]
async fn a_paused_gemini_run_continues_from_json_with_the_calls_signature_intact() {
    let server = Server::start([
        parts_answer(
            "r_pause",
            json!([
                {"text": "I will wipe it."},
                {"functionCall": {"name": "wipe", "args": {"dir": "/tmp/g"}}, "thoughtSignature": "c2lnbmVkIGNhbGw="},
            ]),
        ),
        text_answer("Wiped."),
    ])
    .await;
    let mut registry = Registry::new();
    registry.add(WipeSkill);
    let runtime = AgentRuntime::new(gemini(&server), registry);
    let outcome = runtime.run("Clean up /tmp/g.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &outcome.finish else {
        panic!("expected a pause, got {:?}", outcome.finish);
    };
    assert_eq!(&*pending[0].call.id, "call_r_pause_0");
    assert_eq!(
        WIPED.load(Ordering::SeqCst),
        0,
        "nothing ran before the decision"
    );

    let json = serde_json::to_string(outcome.state.as_deref().unwrap()).unwrap();
    let state: RunState = serde_json::from_str(&json).unwrap();
    let done = runtime
        .continue_paused(state, [("call_r_pause_0", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(WIPED.load(Ordering::SeqCst), 1, "ran exactly once");
    let sent = server.received()[1].json();
    let contents = sent["contents"].as_array().unwrap();
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [
            {"text": "I will wipe it."},
            {"functionCall": {"id": "call_r_pause_0", "name": "wipe", "args": {"dir": "/tmp/g"}}, "thoughtSignature": "c2lnbmVkIGNhbGw="},
        ]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"id": "call_r_pause_0", "name": "wipe", "response": {"output": "wiped /tmp/g"}}},
        ]})
    );
}
