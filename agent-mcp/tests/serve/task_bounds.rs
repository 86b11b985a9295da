//! The bounds of MCP tasks, against rmcp's client: the caps on open and kept tasks (concurrent
//! calls included), the TTL, the end of the connection, and sessions over streamable HTTP that
//! cannot touch each other's tasks.

use std::time::Duration;

use agent_mcp::rmcp::model::{
    CallToolResponse, CancelTaskParams, ErrorCode, GetTaskParams, TaskPayload, TaskStatus,
};
use agent_mcp::rmcp::service::RunningService;
use agent_mcp::rmcp::{RoleClient, ServiceExt};
use serde_json::json;

use crate::task_support::{
    PATIENCE, TasksClient, call, code_of, completed_result, connect, file_appears, server,
    settings, start, text_of, until_terminal,
};

#[tokio::test]
async fn past_the_cap_on_open_tasks_the_next_call_is_refused_clearly_and_runs_nothing() {
    let (server, served) = server(settings().max_open(2));
    let client = connect(server, TasksClient::default()).await;
    let first = start(&client, "run_until_cancelled", json!({"name": "one"})).await;
    start(&client, "run_until_cancelled", json!({"name": "two"})).await;
    let refused = client
        .call_tool_once(call("run_until_cancelled", json!({"name": "three"})))
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) = refused else {
        panic!("expected a refusal, got {refused:?}")
    };
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    let text = text_of(&refused);
    assert!(
        text.contains("running 2 tasks") && text.contains("tasks/cancel"),
        "{text}"
    );
    // Nothing ran: the third skill never started.
    file_appears(&served.path("one.started")).await;
    file_appears(&served.path("two.started")).await;
    assert!(!served.path("three.started").exists());
    // Once one has finished, there is room again.
    client
        .cancel_task(CancelTaskParams::new(first.clone()))
        .await
        .unwrap();
    until_terminal(&client, &first).await;
    start(&client, "run_until_cancelled", json!({"name": "four"})).await;
    file_appears(&served.path("four.started")).await;
}

#[tokio::test]
async fn past_the_cap_on_kept_tasks_the_next_call_is_refused_though_all_have_finished() {
    let (server, _served) = server(settings().max_open(1).max_kept(2));
    let client = connect(server, TasksClient::default()).await;
    for _ in 0..2 {
        let id = start(&client, "sum_later", json!({"a": 1, "b": 1})).await;
        until_terminal(&client, &id).await;
    }
    let refused = client
        .call_tool_once(call("sum_later", json!({"a": 1, "b": 1})))
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) = refused else {
        panic!("expected a refusal, got {refused:?}")
    };
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    assert!(text_of(&refused).contains("holds 2 tasks"), "{refused:?}");
}

#[tokio::test]
async fn a_task_past_its_ttl_fails_naming_the_ttl_and_its_skill_is_cancelled() {
    let (server, served) = server(settings().ttl(Duration::from_millis(300)));
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "run_until_cancelled", json!({"name": "late"})).await;
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Failed, "{task:?}");
    let TaskPayload::Failed { error } = &task.payload else {
        panic!("{task:?}")
    };
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("TTL"), "{error:?}");
    assert_eq!(
        file_appears(&served.path("late.cancelled")).await,
        "cancelled"
    );
}

#[tokio::test]
async fn when_the_connection_ends_its_running_tasks_are_stopped() {
    let (server, served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    start(&client, "run_until_cancelled", json!({"name": "orphan"})).await;
    file_appears(&served.path("orphan.started")).await;
    client.cancel().await.unwrap();
    assert_eq!(
        file_appears(&served.path("orphan.cancelled")).await,
        "cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_cannot_open_more_tasks_than_the_cap() {
    let (server, _served) = server(settings().max_open(3));
    let client = connect(server, TasksClient::default()).await;
    let calls = (0..16).map(|n| {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            peer.call_tool_once(call(
                "run_until_cancelled",
                json!({"name": format!("c{n}")}),
            ))
            .await
            .unwrap()
        })
    });
    let mut tasks = 0;
    let mut refused = 0;
    for answer in futures_join(calls).await {
        match answer {
            CallToolResponse::Task(_) => tasks += 1,
            CallToolResponse::Complete(result) if result.is_error == Some(true) => refused += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((tasks, refused), (3, 13));
}

async fn futures_join<T>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles {
        out.push(
            tokio::time::timeout(PATIENCE, handle)
                .await
                .expect("answered")
                .unwrap(),
        );
    }
    out
}

/// rmcp's streamable-HTTP client, with the bearer token, for a server at `url`.
async fn connect_http(url: &str, token: &str) -> RunningService<RoleClient, TasksClient> {
    use agent_mcp::rmcp::transport::StreamableHttpClientTransport;
    use agent_mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    // reqwest is built without a crypto provider; McpSkills::connect_http installs this one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    TasksClient::default()
        .serve(transport)
        .await
        .expect("connects over HTTP")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_tasks_run_polled_and_cancelled_and_another_session_cannot_touch_them() {
    let (server, served) = server(settings());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let token = agent_mcp::generate_token().unwrap();
    let serving = tokio::spawn(server.bearer_token(token.clone()).serve_http_on(listener));
    let one = connect_http(&url, &token).await;
    let two = connect_http(&url, &token).await;

    let sum = start(&one, "sum_later", json!({"a": 20, "b": 22})).await;
    assert_eq!(
        text_of(&completed_result(&until_terminal(&one, &sum).await)),
        "42"
    );

    let id = start(&one, "run_until_cancelled", json!({"name": "mine"})).await;
    file_appears(&served.path("mine.started")).await;
    for error in [
        two.cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .unwrap_err(),
        two.get_task(GetTaskParams::new(id.clone()))
            .await
            .unwrap_err(),
    ] {
        assert_eq!(code_of(&error), Some(ErrorCode::INVALID_PARAMS), "{error}");
    }
    assert!(!served.path("mine.cancelled").exists());
    one.cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(
        until_terminal(&one, &id).await.status(),
        TaskStatus::Cancelled
    );
    assert_eq!(
        file_appears(&served.path("mine.cancelled")).await,
        "cancelled"
    );
    serving.abort();
}
