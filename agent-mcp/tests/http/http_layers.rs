//! What the HTTP server's layers promise, attacked over real TCP on 127.0.0.1 with requests
//! written by hand: the body's deadline counts the whole body (a client dripping bytes does not
//! restart it), the size limit holds for a chunked body without `Content-Length`, a body refused
//! for its size is never read as a next request, a preflight is answered only for an allowed
//! origin, and a path other than the endpoint's admits nothing. None asserts how
//! long anything takes (a generous time limit only turns a hang into a failure).

use crate::raw_http;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{Registry, SkillError, skill};
use agent_mcp::McpServer;
use raw_http::{ACCEPT, HANG_GUARD, call_body, initialize_body, post, send, until_closed};
use rmcp::transport::StreamableHttpServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "layer-token-0123456789abcdef";
const BEARER: (&str, &str) = ("Authorization", "Bearer layer-token-0123456789abcdef");

static SMUGGLED: AtomicUsize = AtomicUsize::new(0);

/// Counts its calls: a request that reaches it ran.
#[skill(read_only, register = false)]
async fn smuggled() -> Result<String, SkillError> {
    SMUGGLED.fetch_add(1, Ordering::SeqCst);
    Ok("ran".into())
}

async fn start(server: McpServer) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    addr
}

fn server() -> McpServer {
    let mut registry = Registry::new();
    registry.add(SmuggledSkill);
    McpServer::new(registry).bearer_token(TOKEN)
}

#[tokio::test]
async fn a_body_dripped_a_byte_at_a_time_still_meets_the_deadline_for_the_whole_body() {
    let addr = start(server().body_read_timeout(Duration::from_millis(300))).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let answered = Arc::new(AtomicBool::new(false));
    let reader = tokio::spawn({
        let answered = answered.clone();
        async move {
            let mut raw = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = read.read(&mut buf).await {
                answered.store(true, Ordering::SeqCst);
                raw.extend_from_slice(&buf[..n]);
            }
            raw
        }
    });
    // A byte every 20 ms, until the server answers: each well inside the deadline, so a timer
    // that started again with each piece of the body would wait for all 100,000 of them (half
    // an hour).
    let drip = async {
        while !answered.load(Ordering::SeqCst) {
            if write.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(HANG_GUARD, drip)
        .await
        .expect("the server answers while the body still drips");
    let raw = tokio::time::timeout(HANG_GUARD, reader)
        .await
        .expect("the server closes the connection")
        .unwrap();
    let reply = raw_http::parse(&raw);
    assert_eq!(reply.status, 408, "{reply:?}");
    assert_eq!(reply.header("connection"), Some("close"), "{reply:?}");
}

/// `server()` with a body limit of 1 KiB.
fn small_bodies() -> McpServer {
    server().http_config(StreamableHttpServerConfig::default().with_max_request_body_bytes(1024))
}

#[tokio::test]
async fn a_chunked_body_without_content_length_past_the_limit_is_refused() {
    let addr = start(small_bodies()).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // Two 600-byte chunks and no end: the server must answer once it has more than 1 KiB,
    // without waiting for a last chunk.
    let chunk = format!("258\r\n{}\r\n", "x".repeat(600));
    stream.write_all(chunk.repeat(2).as_bytes()).await.unwrap();
    let reply = raw_http::parse(until_closed(&mut stream).await.as_bytes());
    assert_eq!(reply.status, 413, "{reply:?}");

    // Under the limit, chunked is served.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let body = initialize_body();
    let request = format!("{head}{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    stream.write_all(request.as_bytes()).await.unwrap();
    let reply = raw_http::parse(until_closed(&mut stream).await.as_bytes());
    assert_eq!(reply.status, 200, "{reply:?}");
}

#[tokio::test]
async fn a_body_refused_for_its_size_is_never_read_as_the_next_request() {
    let addr = start(small_bodies().header_read_timeout(Duration::from_millis(500))).await;
    let initialized = send(addr, &post("127.0.0.1", &[BEARER], &initialize_body())).await;
    let session = initialized.session().expect("a session");
    let with_session = [
        BEARER,
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let ack = post(
        "127.0.0.1",
        &with_session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(send(addr, &ack).await.status, 202);

    // A request the server would run, kept alive, hidden as the body of one too large: a
    // server that answered 413 and then read on would take it for the next request.
    let hidden = post(
        "127.0.0.1",
        &with_session,
        &call_body(2, "smuggled", serde_json::json!({})),
    )
    .replace("Connection: close\r\n", "");
    let padding = 2048 - hidden.len();
    let outer = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\nMcp-Session-Id: {session}\r\nContent-Length: 2048\r\n\r\n{hidden}{}",
        " ".repeat(padding)
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(outer.as_bytes()).await.unwrap();
    let seen = until_closed(&mut stream).await;
    assert!(seen.starts_with("HTTP/1.1 413"), "{seen}");
    assert_eq!(
        seen.matches("HTTP/1.1 ").count(),
        1,
        "one answer only: {seen}"
    );
    assert_eq!(
        SMUGGLED.load(Ordering::SeqCst),
        0,
        "the hidden call never ran"
    );
}

#[tokio::test]
async fn a_preflight_from_an_allowed_origin_is_answered_and_runs_nothing_other_origins_get_403() {
    let addr = start(server().allowed_origins(["https://app.example"])).await;
    let preflight = |origin: &str| {
        format!(
            "OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, content-type, mcp-session-id\r\n\r\n"
        )
    };
    let allowed = send(addr, &preflight("https://app.example")).await;
    assert_eq!(allowed.status, 200, "{allowed:?}");
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    let headers = allowed
        .header("access-control-allow-headers")
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(
        headers.contains("authorization") && headers.contains("mcp-session-id"),
        "{allowed:?}"
    );
    let methods = allowed
        .header("access-control-allow-methods")
        .unwrap_or_default();
    assert!(methods.contains("POST"), "{allowed:?}");
    // No token: the preflight admits nothing, so its connection is not kept.
    assert_eq!(allowed.header("connection"), Some("close"));
    let other = send(addr, &preflight("https://evil.example")).await;
    assert_eq!(other.status, 403, "{other:?}");
    assert!(other.header("access-control-allow-origin").is_none());
    // The allowed origin's real request still needs the token; and with it the answer is
    // readable by the page.
    let without = send(
        addr,
        &post(
            "127.0.0.1",
            &[("Origin", "https://app.example")],
            &initialize_body(),
        ),
    )
    .await;
    assert_eq!(without.status, 401, "{without:?}");
    let with = send(
        addr,
        &post(
            "127.0.0.1",
            &[("Origin", "https://app.example"), BEARER],
            &initialize_body(),
        ),
    )
    .await;
    assert_eq!(with.status, 200, "{with:?}");
    assert_eq!(
        with.header("access-control-allow-origin"),
        Some("https://app.example")
    );
}

#[tokio::test]
async fn another_path_is_answered_404_and_admits_nothing_even_with_the_token() {
    let addr = start(server()).await;
    for path in ["/", "/mcp/", "/MCP", "/mcp/x", "/mcpx"] {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
        );
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        // Not kept alive: the connection was not admitted.
        let reply = raw_http::parse(until_closed(&mut stream).await.as_bytes());
        assert_eq!(reply.status, 404, "{path}: {reply:?}");
        assert_eq!(reply.header("connection"), Some("close"), "{path}");
    }
}
