//! Our client against our server, and what both do with bad input: malformed JSON-RPC, an
//! unknown method, an oversize body, a missing token, a wrong protocol version; a remote that
//! hangs, streams forever or answers nonsense.

mod common;

use std::time::Duration;

use agent_a2a::types::{Message, TaskState};
use agent_a2a::{A2aError, RemoteAgent, Reply};
use agent_core::{DynSkill, SkillContext, SkillError, ToolCall};
use agent_llm::MockReply;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use common::{TOKEN, serve, server};

async fn post(url: &str, token: Option<&str>, body: impl Into<reqwest::Body>) -> (u16, String) {
    let mut request = http()
        .post(format!("{url}/"))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(agent_tls::tls_config().unwrap())
        .build()
        .unwrap()
}

fn code(body: &str) -> i64 {
    let value: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    value["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_asks_our_server_and_decides_a_pause() {
    let delete = ToolCall::new("c1", "delete", json!({"path": "old.log"}));
    let replies = vec![
        MockReply::text("first answer"),
        MockReply::tool_calls([delete]),
        MockReply::text("Deleted."),
    ];
    let served = serve(server(replies)).await;
    let agent = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap();
    assert_eq!(agent.card().name, "tester");
    let started = std::time::Instant::now();
    let reply = agent.ask("hello").await.unwrap();
    eprintln!(
        "ask round trip (streamed, our client and server): {:?}",
        started.elapsed()
    );
    assert_eq!(
        (reply.state(), reply.text()),
        (TaskState::Completed, "first answer".into())
    );

    let Reply::Task(paused) = agent.ask("clean up").await.unwrap() else {
        panic!("a task");
    };
    assert_eq!(paused.status.state, TaskState::InputRequired);
    let mut decision = Message::user_text("approve");
    decision.task_id = paused.id.clone();
    let done = agent.ask_message(decision.clone()).await.unwrap();
    assert_eq!(
        (done.state(), done.text()),
        (TaskState::Completed, "Deleted.".into())
    );
    let again = agent.ask_message(decision).await.unwrap_err();
    assert!(
        matches!(again, A2aError::Rpc { code: -32004, .. }),
        "{again}"
    );
    let got = agent.get_task(&paused.id).await.unwrap();
    assert_eq!(got.status.state, TaskState::Completed);
    let missing = agent.get_task("no-such-task").await.unwrap_err();
    assert!(
        matches!(missing, A2aError::Rpc { code: -32001, .. }),
        "{missing}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_agent_that_pauses_pauses_the_run_that_called_it_and_goes_on_once_decided() {
    use agent_runtime::{AgentRuntime, Decision, FinishReason};

    let delete = ToolCall::new("c1", "delete", json!({"path": "old.log"}));
    let served = serve(server(vec![
        MockReply::tool_calls([delete]),
        MockReply::text("Deleted old.log."),
    ]))
    .await;
    let skill = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap()
        .into_skill();
    let bad = skill.parse(&json!({"text": "x"})).unwrap_err();
    assert!(matches!(bad, SkillError::BadArgs { .. }), "{bad:?}");
    let mut registry = agent_core::Registry::new();
    registry.add(skill);
    let runtime = AgentRuntime::new(
        agent_llm::MockProvider::new([
            MockReply::tool_calls([ToolCall::new(
                "p1",
                "tester",
                json!({"message": "clean up"}),
            )]),
            MockReply::text("The remote agent deleted it."),
        ]),
        registry,
    );
    let paused = runtime.run("Clean up.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("{:?}", paused.finish)
    };
    assert_eq!(pending[0].id(), "p1/c1");
    assert_eq!(pending[0].path(), "tester › delete");
    assert_eq!(pending[0].reason, "deletes a file");
    // Kept as JSON, as another process would.
    let state: agent_runtime::RunState =
        serde_json::from_str(&serde_json::to_string(&paused.state.unwrap()).unwrap()).unwrap();
    let done = runtime
        .continue_paused(state, [("p1/c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        done.final_text.as_deref(),
        Some("The remote agent deleted it.")
    );
    let result = &done.transcript[2].content;
    assert_eq!(result, "Deleted old.log.");

    // Outside a run, the suspension is an error result that names what waits.
    let served = serve(server(vec![MockReply::tool_calls([ToolCall::new(
        "c9",
        "delete",
        json!({"path": "x"}),
    )])]))
    .await;
    let skill = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap()
        .into_skill();
    let ctx = SkillContext::new(".");
    let error = skill
        .start(&json!({"message": "clean up"}), &ctx)
        .unwrap()
        .await
        .unwrap_err();
    assert!(matches!(error, SkillError::Suspended(_)), "{error:?}");
    assert!(error.to_string().contains("`delete` (c9)"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_clear_errors() {
    let served = serve(server(vec![]).max_body_bytes(4096)).await;
    let url = &served.url;
    let (status, body) = post(url, None, "{}").await;
    assert_eq!(status, 401, "{body}");
    let (status, _) = post(url, Some("wrong-token-0123456789"), "{}").await;
    assert_eq!(status, 401);
    let (status, body) = post(url, Some(TOKEN), "{not json").await;
    assert_eq!((status, code(&body)), (200, -32700), "{body}");
    let (_, body) = post(url, Some(TOKEN), r#"{"id": 1, "method": "GetTask"}"#).await;
    assert_eq!(code(&body), -32600, "{body}");
    let (_, body) = post(
        url,
        Some(TOKEN),
        r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get"}"#,
    )
    .await;
    assert_eq!(code(&body), -32601, "{body}");
    assert!(body.contains("SendMessage"), "{body}");
    let (_, body) = post(
        url,
        Some(TOKEN),
        r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"nope":1}}"#,
    )
    .await;
    assert_eq!(code(&body), -32602, "{body}");
    let lowercase = r#"{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":
        {"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
    let (_, body) = post(url, Some(TOKEN), lowercase).await;
    assert_eq!(code(&body), -32602, "a 0.3 role is refused: {body}");
    let (status, body) = post(url, Some(TOKEN), vec![b' '; 10_000]).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("at most 4096 bytes"), "{body}");
    let response = http()
        .post(format!("{url}/"))
        .bearer_auth(TOKEN)
        .header("A2A-Version", "0.3")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(code(&response.text().await.unwrap()), -32009);
}

/// A fake agent on raw TCP: it serves a card pointing at itself, and answers every POST with
/// `post_answer` (then keeps the connection open, silent).
async fn fake_agent(post_answer: &'static str) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "fake", "description": "a fake agent", "version": "1",
        "supportedInterfaces": [{"url": format!("{url}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "skills": []
    })
    .to_string();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let card = card.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let Ok(n) = stream.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    head.extend_from_slice(&buf[..n]);
                }
                if head.starts_with(b"GET") {
                    let card = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{card}",
                        card.len()
                    );
                    let _ = stream.write_all(card.as_bytes()).await;
                    return;
                }
                let _ = stream.write_all(post_answer.as_bytes()).await;
                tokio::time::sleep(Duration::from_secs(3600)).await;
            });
        }
    });
    (url, task)
}

async fn skill_error(url: &str) -> String {
    let agent = RemoteAgent::connect(url, None)
        .await
        .unwrap()
        .timeout(Duration::from_secs(1));
    let skill = agent.into_skill();
    let ctx = SkillContext::new(".");
    let started = std::time::Instant::now();
    let error = skill
        .start(&json!({"message": "hi"}), &ctx)
        .unwrap()
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(error, SkillError::Tool { .. }), "{error:?}");
    error.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_that_hangs_streams_forever_or_answers_nonsense_gives_error_results() {
    let (silent, _a) = fake_agent("").await;
    let hang = skill_error(&silent).await;
    assert!(
        hang.contains("did not answer") && hang.contains("within 1s"),
        "{hang}"
    );

    let forever = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n\
        data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":\"t\",\"contextId\":\"c\",\
        \"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n";
    let (endless, _b) = fake_agent(forever).await;
    let stream = skill_error(&endless).await;
    assert!(stream.contains("did not answer"), "{stream}");

    let nonsense = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 14\r\n\r\n{\"not\":\"json\"}";
    let (odd, _c) = fake_agent(nonsense).await;
    let malformed = skill_error(&odd).await;
    assert!(malformed.contains("malformed"), "{malformed}");

    let broken = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {oops\n\n";
    let (bad_event, _d) = fake_agent(broken).await;
    let event = skill_error(&bad_event).await;
    assert!(event.contains("not JSON"), "{event}");

    // Nothing listens: a connection error, not a hang.
    let closed = RemoteAgent::connect("http://127.0.0.1:9", None)
        .await
        .unwrap_err();
    assert!(matches!(closed, A2aError::Connect { .. }), "{closed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_the_run_timeout_fails_saying_so() {
    let wait = ToolCall::new("w1", "wait", json!({"ms": 60_000}));
    let served =
        serve(server(vec![MockReply::tool_calls([wait])]).run_timeout(Duration::from_millis(500)))
            .await;
    let agent = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap();
    let reply = agent.ask("wait").await.unwrap();
    assert_eq!(reply.state(), TaskState::Failed);
    assert!(reply.text().contains("run timeout"), "{}", reply.text());
}
