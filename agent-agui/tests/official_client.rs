//! The official AG-UI client (`@ag-ui/client`'s HttpAgent, from npm, run with node) runs a
//! scripted eugene agent through the endpoint on loopback: the events it receives, each checked
//! with `@ag-ui/core`'s own schemas, and the conversation it assembles from them.

mod support;

use agent_agui::AguiServer;
use agent_llm::MockReply;
use serde_json::json;
use support::*;

/// A run that calls a read-only skill and answers: every event in the protocol's order, the
/// call's arguments streamed, its result, the answer's text streamed, usage as state, a success.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_reaches_the_official_client_as_valid_ag_ui_events() {
    let runtime = runtime([
        call("c1", "lookup", "main"),
        MockReply::text("main is 3 commits ahead."),
    ]);
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(addr, "t-events", json!([{"message": "How is main?"}])).await;
    all_valid(&report);
    let turn = &report["turns"][0];
    assert_eq!(turn["error"], json!(null));
    // Pieces of text the client had not read yet arrive joined (the server's buffer joins
    // them): consecutive TEXT_MESSAGE_CONTENT events are one here, their text checked below.
    let mut seen: Vec<String> = types(turn)
        .into_iter()
        .filter(|t| t != "STATE_SNAPSHOT")
        .collect();
    seen.dedup_by(|a, b| a == b && a == "TEXT_MESSAGE_CONTENT");
    let mut expected = vec![
        "RUN_STARTED",
        "STEP_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
    ];
    expected.extend(["TEXT_MESSAGE_CONTENT"]);
    expected.extend(["TEXT_MESSAGE_END", "STEP_FINISHED", "RUN_FINISHED"]);
    assert_eq!(seen, expected);
    // The mock streams the answer word by word: "main ", "is ", "3 ", "commits ", "ahead.";
    // joined or not, the pieces are the answer.
    let streamed: String = turn["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, "main is 3 commits ahead.");
    assert!(types(turn).contains(&"STATE_SNAPSHOT".to_owned()));
    let events = turn["events"].as_array().unwrap();
    assert_eq!(events[1]["stepName"], "step 1");
    assert_eq!(events[2]["toolCallName"], "lookup");
    let last = events.last().unwrap();
    assert_eq!(last["outcome"], json!({"type": "success"}));
    assert_eq!(last["result"], "main is 3 commits ahead.");
    // The client assembled the conversation from the events: the call, its result, the answer.
    let messages = report["messages"].as_array().unwrap();
    let call = messages
        .iter()
        .find(|m| m["toolCalls"].is_array())
        .expect("an assistant message with the call");
    assert_eq!(call["toolCalls"][0]["id"], "c1");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(
            call["toolCalls"][0]["function"]["arguments"]
                .as_str()
                .unwrap()
        )
        .unwrap(),
        json!({"name": "main"})
    );
    assert!(messages.iter().any(|m| m["role"] == "tool"
        && m["toolCallId"] == "c1"
        && m["content"] == "main: 3 commits ahead"));
    assert_eq!(
        messages.last().unwrap()["content"],
        "main is 3 commits ahead."
    );
}

/// A thread is a conversation the server keeps: the second message's run sees the first turn.
#[tokio::test(flavor = "multi_thread")]
async fn a_thread_continues_its_conversation() {
    let runtime = runtime([MockReply::text("Hello."), MockReply::text("Again.")]);
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(
        addr,
        "t-conversation",
        json!([{"message": "Hi"}, {"message": "Once more"}]),
    )
    .await;
    all_valid(&report);
    for turn in report["turns"].as_array().unwrap() {
        assert_eq!(turn["error"], json!(null));
    }
    let last = report["turns"][1]["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["result"], "Again.");
}
