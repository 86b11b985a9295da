//! The official Python SDK (`a2a-sdk` 1.3.0) as a client of our server: send, stream, get,
//! cancel, resubscribe to a running task (its live stream), a run paused for approval decided by
//! the client's next message, and a client without the token refused.

mod common;

use agent_core::ToolCall;
use agent_llm::MockReply;
use serde_json::{Value, json};

use common::{TOKEN, python_client, serve, server};

fn states(events: &Value) -> Vec<String> {
    events
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["state"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sends_and_gets_a_completed_task() {
    let served = serve(server(vec![MockReply::text("Hello from eugene")])).await;
    let seen = python_client(&served.url, Some(TOKEN), "get").await;
    assert_eq!(seen.get("error"), None, "{seen}");
    assert_eq!(seen["card_name"], "tester");
    assert_eq!(seen["streaming"], true);
    assert_eq!(seen["skills"], json!(["wait", "delete"]));
    assert_eq!(seen["state"], "TASK_STATE_COMPLETED");
    assert_eq!(seen["text"], "Hello from eugene");
    assert_eq!(seen["got_state"], "TASK_STATE_COMPLETED");
    assert_eq!(seen["got_text"], "Hello from eugene");
    assert_eq!(seen["history_roles"][0], "ROLE_USER");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_streams_status_and_artifact_updates() {
    let served = serve(server(vec![MockReply::text("streamed answer")])).await;
    let seen = python_client(&served.url, Some(TOKEN), "stream").await;
    assert_eq!(seen.get("error"), None, "{seen}");
    let events = &seen["events"];
    assert_eq!(events[0]["kind"], "task", "{events}");
    assert_eq!(
        states(events),
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ],
        "{events}"
    );
    let artifacts: Vec<&Value> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "artifact_update")
        .collect();
    let streamed: String = artifacts
        .iter()
        .filter(|e| e["last_chunk"] == false)
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, "streamed answer", "{events}");
    let last = artifacts.last().unwrap();
    assert_eq!(
        (&last["text"], &last["last_chunk"]),
        (&json!("streamed answer"), &json!(true))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_cancels_a_running_task() {
    let wait = ToolCall::new("w1", "wait", json!({"ms": 60_000}));
    let served = serve(server(vec![MockReply::tool_calls([wait])])).await;
    let started = std::time::Instant::now();
    let seen = python_client(&served.url, Some(TOKEN), "cancel").await;
    assert_eq!(seen.get("error"), None, "{seen}");
    assert_eq!(seen["state"], "TASK_STATE_CANCELED");
    eprintln!("cancel round trip (Python client): {:?}", started.elapsed());
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_resubscribes_to_the_live_stream_of_a_running_task() {
    let wait = ToolCall::new("w1", "wait", json!({"ms": 2_000}));
    let replies = vec![
        MockReply::tool_calls([wait]),
        MockReply::text("done waiting"),
    ];
    let served = serve(server(replies)).await;
    let seen = python_client(&served.url, Some(TOKEN), "resubscribe").await;
    assert_eq!(seen.get("error"), None, "{seen}");
    let events = &seen["events"];
    // The task as it is (still running), then what happened after: live, not a snapshot.
    assert_eq!(events[0]["kind"], "task", "{events}");
    assert_eq!(events[0]["state"], "TASK_STATE_WORKING", "{events}");
    assert_eq!(
        states(events).last().map(String::as_str),
        Some("TASK_STATE_COMPLETED"),
        "{events}"
    );
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["text"] == "done waiting"),
        "{events}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_decides_a_paused_run_and_it_completes() {
    let delete = ToolCall::new("c1", "delete", json!({"path": "old.log"}));
    let replies = vec![MockReply::tool_calls([delete]), MockReply::text("Deleted.")];
    let served = serve(server(replies)).await;
    let seen = python_client(&served.url, Some(TOKEN), "approval").await;
    assert_eq!(seen.get("error"), None, "{seen}");
    assert_eq!(
        states(&seen["first_events"]).last().map(String::as_str),
        Some("TASK_STATE_INPUT_REQUIRED")
    );
    assert_eq!(seen["paused_state"], "TASK_STATE_INPUT_REQUIRED");
    let call = &seen["pending"][0]["pendingCalls"][0];
    assert_eq!(
        (&call["id"], &call["skill"]),
        (&json!("c1"), &json!("delete"))
    );
    assert_eq!(call["arguments"], json!({"path": "old.log"}));
    assert_eq!(
        states(&seen["after_events"]).last().map(String::as_str),
        Some("TASK_STATE_COMPLETED"),
        "{seen}"
    );
    assert_eq!(seen["final_state"], "TASK_STATE_COMPLETED");
    assert_eq!(seen["final_text"], "Deleted.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_without_the_token_is_refused() {
    let served = serve(server(vec![MockReply::text("never")])).await;
    let seen = python_client(&served.url, None, "unauthorized").await;
    // The card is public (it says how to authenticate); the call is not.
    assert_eq!(seen["card_name"], "tester");
    let error = seen["error"].as_str().expect("an error");
    assert!(error.contains("401"), "{error}");
}
