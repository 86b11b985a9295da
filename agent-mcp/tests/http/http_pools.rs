//! The HTTP server's two pools of connections, attacked over real TCP on 127.0.0.1: pending
//! connections (no request with the token yet), bounded, the oldest that waits on its client
//! closed to make room; admitted ones (a request with the token), bounded, kept until they
//! close. None of these tests asserts how long anything takes.

use crate::raw_http;

use std::net::SocketAddr;
use std::time::Duration;

use agent_core::{Registry, SkillError, skill};
use agent_mcp::{McpError, McpServer};
use raw_http::{HANG_GUARD, call_body, initialize_body, post, send};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

const TOKEN: &str = "test-token-0123456789abcdef";
const BEARER: (&str, &str) = ("Authorization", "Bearer test-token-0123456789abcdef");

/// Say hello.
#[skill(read_only, register = false)]
async fn hello() -> Result<String, SkillError> {
    Ok("hello".into())
}

struct Running {
    addr: SocketAddr,
    task: JoinHandle<Result<(), McpError>>,
}

async fn start(server: McpServer) -> Running {
    let listener = agent_mcp::http::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(server.serve_http_on(listener));
    Running { addr, task }
}

/// A server on which only being closed to make room ends a silent connection within the
/// tests' time: a pending connection has half an hour to send its first head.
fn server() -> McpServer {
    let mut registry = Registry::new();
    registry.add(HelloSkill);
    McpServer::new(registry).header_read_timeout(Duration::from_secs(3600))
}

/// A new session's id.
async fn session(addr: SocketAddr, headers: &[(&str, &str)]) -> String {
    let init = send(addr, &post(&addr.to_string(), headers, &initialize_body())).await;
    assert_eq!(init.status, 200, "{init:?}");
    init.session().expect("a session id")
}

/// A POST that leaves the connection open (no `Connection: close`).
fn kept_alive(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> String {
    post(&addr.to_string(), headers, body).replace("Connection: close\r\n", "")
}

/// `notifications/initialized` for `session`: answered `202` with an empty body.
fn initialized(addr: SocketAddr, session: &str, token: bool) -> String {
    let mut headers = vec![
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    if token {
        headers.push(BEARER);
    }
    let body = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    kept_alive(addr, &headers, &body)
}

/// Reads one response head (and no body) from a connection that stays open.
async fn response_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    tokio::time::timeout(HANG_GUARD, async {
        while !head.ends_with(b"\r\n\r\n") {
            let n = stream.read(&mut byte).await.expect("reads");
            assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&head));
            head.push(byte[0]);
        }
    })
    .await
    .expect("a response head");
    String::from_utf8_lossy(&head).to_ascii_lowercase()
}

/// Reads until the server closes (or resets) the connection, failing the test if it does not.
async fn closed_by_server(stream: &mut TcpStream) {
    let mut sink = Vec::new();
    let read = tokio::time::timeout(HANG_GUARD, stream.read_to_end(&mut sink)).await;
    assert!(read.is_ok(), "the server keeps the connection open");
}

#[tokio::test]
async fn a_request_without_the_token_is_answered_and_its_connection_closed() {
    let server = start(server().bearer_token(TOKEN)).await;
    let wrong = format!("Bearer {TOKEN}x");
    for headers in [vec![], vec![("Authorization", wrong.as_str())]] {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        // The client asks to keep the connection; without the token it is not offered.
        let request = kept_alive(server.addr, &headers, &initialize_body());
        stream.write_all(request.as_bytes()).await.unwrap();
        let head = response_head(&mut stream).await;
        assert!(head.starts_with("http/1.1 401"), "{head}");
        assert!(head.contains("connection: close"), "{head}");
        closed_by_server(&mut stream).await;
    }
    // So are a wrong path and a refused origin, before any token.
    for request in [
        format!("GET /elsewhere HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr),
        kept_alive(
            server.addr,
            &[BEARER, ("Origin", "http://evil.example")],
            &initialize_body(),
        ),
    ] {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let head = response_head(&mut stream).await;
        assert!(head.contains("connection: close"), "{head}");
        closed_by_server(&mut stream).await;
    }
    assert!(!server.task.is_finished());
}

#[tokio::test]
async fn silent_and_half_sent_connections_past_the_pending_cap_do_not_keep_a_client_out() {
    let server = start(
        server()
            .bearer_token(TOKEN)
            .max_pending_connections(4)
            .max_connections(4),
    )
    .await;
    // Ten times the pending cap, held open by the attacker; half start a request and stop.
    let mut flood = Vec::new();
    for i in 0..40 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        if i % 2 == 0 {
            let _ = stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                .await;
        }
        flood.push(stream);
    }
    for _ in 0..3 {
        let session = session(server.addr, &[BEARER]).await;
        assert!(!session.is_empty());
    }
    // To make room, the server closed the oldest, and keeps at most four.
    for stream in &mut flood[..36] {
        closed_by_server(stream).await;
    }
    assert!(!server.task.is_finished());
}

#[tokio::test]
async fn an_admitted_connection_is_kept_alive_and_never_closed_to_make_room() {
    let server = start(server().bearer_token(TOKEN).max_pending_connections(2)).await;
    let session = session(server.addr, &[BEARER]).await;
    let mut admitted = TcpStream::connect(server.addr).await.unwrap();
    let request = initialized(server.addr, &session, true);
    admitted.write_all(request.as_bytes()).await.unwrap();
    let head = response_head(&mut admitted).await;
    assert!(head.starts_with("http/1.1 202"), "{head}");
    assert!(!head.contains("connection: close"), "{head}");

    // Silent connections fill the pending pool many times over.
    let mut flood = Vec::new();
    for _ in 0..20 {
        flood.push(TcpStream::connect(server.addr).await.unwrap());
    }
    closed_by_server(&mut flood[0]).await;

    // The admitted connection still serves, on the same socket.
    let call = post(
        &server.addr.to_string(),
        &[
            BEARER,
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &call_body(2, "hello", json!({})),
    );
    admitted.write_all(call.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(HANG_GUARD, admitted.read_to_end(&mut raw))
        .await
        .expect("answered")
        .unwrap();
    let reply = raw_http::parse(&raw);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("hello"), "{reply:?}");
}

#[tokio::test]
async fn a_request_with_the_token_past_the_admitted_cap_waits_for_a_slot() {
    let server = start(server().bearer_token(TOKEN).max_connections(1)).await;
    let session = session(server.addr, &[BEARER]).await;
    // The only admitted slot, held by a kept-alive connection.
    let mut holder = TcpStream::connect(server.addr).await.unwrap();
    let request = initialized(server.addr, &session, true);
    holder.write_all(request.as_bytes()).await.unwrap();
    assert!(response_head(&mut holder).await.starts_with("http/1.1 202"));

    let addr = server.addr;
    let waiting = tokio::spawn(async move {
        send(
            addr,
            &post(&addr.to_string(), &[BEARER], &initialize_body()),
        )
        .await
    });
    // Connections without the token come and go meanwhile; they take no admitted slot, and
    // cannot make room by closing the waiting one.
    for _ in 0..5 {
        let refused = send(addr, &post(&addr.to_string(), &[], &initialize_body())).await;
        assert_eq!(refused.status, 401);
    }
    drop(holder);
    let reply = waiting.await.unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
}

#[tokio::test]
async fn without_a_token_silent_connections_still_cannot_keep_a_local_client_out() {
    let server = start(server().without_auth().max_pending_connections(2)).await;
    let mut flood = Vec::new();
    for _ in 0..20 {
        flood.push(TcpStream::connect(server.addr).await.unwrap());
    }
    let session = session(server.addr, &[]).await;
    // Any request that passes the checks admits its connection: kept alive, no token needed.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let request = initialized(server.addr, &session, false);
    stream.write_all(request.as_bytes()).await.unwrap();
    let head = response_head(&mut stream).await;
    assert!(head.starts_with("http/1.1 202"), "{head}");
    assert!(!head.contains("connection: close"), "{head}");
    closed_by_server(&mut flood[0]).await;
}
