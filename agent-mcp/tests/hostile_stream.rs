//! A hostile MCP server that answers a tool call with an event stream that never ends (one
//! `data:` line without end, or one cut by lone CRs, sent as fast as the socket takes it): the
//! client's call ends within its time limit with an error, and its memory stays bounded (rmcp's
//! transport bounds each event as its bytes arrive; the call's time limit runs apart from the
//! task that reads).

use std::time::Duration;

use agent_core::{Registry, SkillContext, ToolCall};
use agent_mcp::McpSkills;
use serde_json::{Value, json};
use test_support::server::read_request;
use tokio::io::AsyncWriteExt;

/// A server speaking just enough MCP over HTTP: it lists one tool, and answers its call with an
/// endless event (`cr`: its bytes cut by lone CRs).
async fn hostile(cr: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                while let Some(request) = read_request(&mut stream, &mut buffer).await {
                    let message: Value =
                        serde_json::from_slice(&request.body).unwrap_or(Value::Null);
                    let id = message.get("id").cloned();
                    let method = message["method"].as_str().unwrap_or_default().to_owned();
                    let reply = |result: Value| {
                        let body =
                            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    };
                    let answer = match method.as_str() {
                        "initialize" => reply(json!({
                            "protocolVersion": "2025-06-18",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "hostile", "version": "1"}
                        })),
                        "tools/list" => reply(json!({"tools": [{
                            "name": "flood", "description": "Floods.",
                            "inputSchema": {"type": "object"},
                            "annotations": {"readOnlyHint": true}
                        }]})),
                        "tools/call" => {
                            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\n\r\ndata: ";
                            if stream.write_all(head.as_bytes()).await.is_err() {
                                return;
                            }
                            let mut chunk = vec![b'x'; 64 * 1024];
                            if cr {
                                for at in (0..chunk.len()).step_by(512) {
                                    chunk[at] = b'\r';
                                }
                            }
                            let until = tokio::time::Instant::now() + Duration::from_secs(300);
                            while tokio::time::Instant::now() < until {
                                if stream.write_all(&chunk).await.is_err() {
                                    return;
                                }
                            }
                            return;
                        }
                        _ if request.method == "GET" => {
                            "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n"
                                .to_owned()
                        }
                        _ => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_owned(),
                    };
                    if stream.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

async fn flood(cr: bool) -> String {
    let url = hostile(cr).await;
    let skills = McpSkills::connect_http(&url)
        .await
        .unwrap()
        .with_call_timeout(Duration::from_secs(2));
    let mut registry = Registry::new();
    skills.add_to(&mut registry).unwrap();
    let call = ToolCall::new("c1", "flood", json!({}));
    // The bound only keeps a regression from hanging the suite; the call ends within its 2 s.
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        registry.run_one(&call, &SkillContext::default()),
    )
    .await
    .expect("the call ran on past its 2 s limit");
    assert!(result.is_error(), "{}", result.content());
    result.content().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_event_ends_the_call_within_its_limit() {
    let said = flood(false).await;
    assert!(!said.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_event_of_cr_lines_ends_the_call_within_its_limit() {
    let said = flood(true).await;
    assert!(!said.is_empty());
}
