//! The HTTP server attacked the way an outside attacker would: real TCP on 127.0.0.1, requests
//! written by hand. Each test names the defence it checks; none asserts how long anything
//! takes (a generous time limit only turns a hang into a failure).

use crate::raw_http;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{Registry, SkillError, skill};
use agent_mcp::{McpError, McpServer, McpSkills};
use raw_http::{HANG_GUARD, call_body, call_tool, initialize_body, post, send, until_closed};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

const TOKEN: &str = "test-token-0123456789abcdef";
const BEARER: (&str, &str) = ("Authorization", "Bearer test-token-0123456789abcdef");

static MARKS: AtomicUsize = AtomicUsize::new(0);
static HOLD_STARTED: Notify = Notify::const_new();
static HOLD_RELEASE: Notify = Notify::const_new();

/// Leave a mark: stands in for `run_shell`, a tool nobody unauthenticated may run.
#[skill(destructive, register = false)]
async fn mark() -> Result<String, SkillError> {
    MARKS.fetch_add(1, Ordering::SeqCst);
    Ok("marked".into())
}

/// Say hello.
#[skill(read_only, register = false)]
async fn hello() -> Result<String, SkillError> {
    Ok("hello".into())
}

/// Hold until released.
#[skill(read_only, register = false)]
async fn hold() -> Result<String, SkillError> {
    HOLD_STARTED.notify_one();
    HOLD_RELEASE.notified().await;
    Ok("released".into())
}

/// The served skills. `mark` runs when an authorized client calls it, as in a server whose
/// clients ask their user before destructive tools: what is tested here is who may call at all.
fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .add(MarkSkill)
        .add(HelloSkill)
        .add(HoldSkill)
        .destructive_calls(agent_core::DestructiveCalls::Allow);
    registry
}

struct Running {
    addr: SocketAddr,
    task: JoinHandle<Result<(), McpError>>,
}

impl Running {
    fn host(&self) -> String {
        self.addr.to_string()
    }

    fn assert_running(&self) {
        assert!(!self.task.is_finished(), "the server stopped");
    }
}

async fn start(server: McpServer) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(server.serve_http_on(listener));
    Running { addr, task }
}

fn with_token() -> McpServer {
    McpServer::new(registry()).bearer_token(TOKEN)
}

fn text(reply: &raw_http::Reply) -> String {
    reply.message()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn initialize(server: &Running) -> raw_http::Reply {
    send(
        server.addr,
        &post(&server.host(), &[BEARER], &initialize_body()),
    )
    .await
}

// --- Authentication ---------------------------------------------------------------------------

#[tokio::test]
async fn a_forged_loopback_host_without_the_token_is_refused_and_runs_nothing() {
    let server = start(with_token()).await;
    let wrong = format!("Bearer {}x", TOKEN);
    let attempts: [&[(&str, &str)]; 4] = [
        &[],
        &[("Authorization", &wrong)],
        &[("Authorization", "Basic dGVzdDp0ZXN0")],
        &[("Authorization", TOKEN)],
    ];
    for headers in attempts {
        let reply = call_tool(server.addr, "127.0.0.1", headers, "mark", json!({})).await;
        assert_eq!(reply.status, 401, "{headers:?}: {reply:?}");
        let challenge = reply.header("www-authenticate").unwrap_or_default();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        assert!(reply.session().is_none(), "no session is made");
    }
    for method in ["GET", "DELETE"] {
        let request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: x\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(send(server.addr, &request).await.status, 401, "{method}");
    }
    assert_eq!(MARKS.load(Ordering::SeqCst), 0, "the tool never ran");

    let reply = call_tool(server.addr, "127.0.0.1", &[BEARER], "mark", json!({})).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(text(&reply), "marked");
    assert_eq!(MARKS.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_server_given_no_token_generates_one_and_requires_it() {
    let server = start(McpServer::new(registry())).await;
    let reply = send(server.addr, &post(&server.host(), &[], &initialize_body())).await;
    assert_eq!(reply.status, 401, "{reply:?}");
    server.assert_running();
}

#[tokio::test]
async fn without_auth_a_loopback_server_needs_no_token() {
    let server = start(McpServer::new(registry()).without_auth()).await;
    let reply = call_tool(server.addr, &server.host(), &[], "hello", json!({})).await;
    assert_eq!((reply.status, text(&reply)), (200, "hello".to_owned()));
}

#[tokio::test]
async fn rmcp_clients_with_the_token_are_served_and_without_it_are_not() {
    // reqwest is built without a crypto provider; McpSkills::connect_http installs this one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = start(with_token()).await;
    let url = format!("http://{}/mcp", server.addr);
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header(TOKEN),
    );
    let remote = McpSkills::connect_transport("authorized", transport)
        .await
        .expect("connects with the token");
    let mut registry = Registry::new();
    remote.add_to(&mut registry).unwrap();
    let result = registry
        .run_one(
            &agent_core::ToolCall::new("c", "hello", json!({})),
            &agent_core::SkillContext::default(),
        )
        .await;
    assert_eq!(result.content(), "hello");

    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
    let refused = McpSkills::connect_transport("anonymous", transport).await;
    assert!(refused.is_err(), "connected without the token");
}

// --- Host ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_foreign_host_cannot_hide_behind_a_second_host_header_or_an_absolute_target() {
    let server = start(with_token()).await;
    let own = server.host();
    // Our own name first, then a foreign one: refused, whichever a layer would read.
    for second in ["evil.example", own.as_str()] {
        let request = post(&own, &[BEARER, ("Host", second)], &initialize_body());
        let reply = send(server.addr, &request).await;
        assert_eq!(reply.status, 400, "Host: {own} and {second}: {reply:?}");
        assert!(reply.session().is_none());
    }
    // An absolute-form target names the host the request is checked under (RFC 9112): a
    // foreign one is refused like a foreign `Host`, whatever `Host` says.
    let absolute = |target: &str| {
        post(&own, &[BEARER], &initialize_body()).replacen(
            "POST /mcp",
            &format!("POST {target}"),
            1,
        )
    };
    let reply = send(server.addr, &absolute("http://evil.example/mcp")).await;
    assert!(
        reply.status >= 400 && reply.session().is_none(),
        "a foreign absolute target was served: {reply:?}"
    );
    // The server's own name in absolute form is served as the origin-form request is.
    let reply = send(server.addr, &absolute(&format!("http://{own}/mcp"))).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    server.assert_running();
}

// --- Origin -------------------------------------------------------------------------------------

#[tokio::test]
async fn cross_origin_requests_are_forbidden_unless_allowed() {
    let server = start(with_token().allowed_origins(["https://app.example"])).await;
    let own = format!("http://127.0.0.1:{}", server.addr.port());
    let other_local_port = format!("http://localhost:{}", server.addr.port() ^ 1);
    for origin in [
        "http://evil.example",
        "null",
        other_local_port.as_str(),
        "https://app.example.evil.example",
    ] {
        let headers = [BEARER, ("Origin", origin)];
        let reply = send(
            server.addr,
            &post(&server.host(), &headers, &initialize_body()),
        )
        .await;
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
        assert!(reply.session().is_none());
    }
    // Refused before the token is looked at.
    let reply = send(
        server.addr,
        &post(
            &server.host(),
            &[("Origin", "http://evil.example")],
            &initialize_body(),
        ),
    )
    .await;
    assert_eq!(reply.status, 403);

    for headers in [
        vec![BEARER],
        vec![BEARER, ("Origin", own.as_str())],
        vec![BEARER, ("Origin", "https://app.example")],
    ] {
        let reply = send(
            server.addr,
            &post(&server.host(), &headers, &initialize_body()),
        )
        .await;
        assert_eq!(reply.status, 200, "{headers:?}: {reply:?}");
    }
}

// --- Slow and idle connections ------------------------------------------------------------------

#[tokio::test]
async fn a_half_sent_request_head_is_closed_by_the_server() {
    let server = start(with_token().header_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        .await
        .unwrap();
    until_closed(&mut stream).await;

    // A connection that never sends a byte is closed too.
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    until_closed(&mut silent).await;
    server.assert_running();
}

#[tokio::test]
async fn an_oversized_request_head_is_refused() {
    let server = start(with_token()).await;
    let padding = "x".repeat(100 * 1024);
    let headers = [("X-Padding", padding.as_str())];
    let reply = send(
        server.addr,
        &post(&server.host(), &headers, &initialize_body()),
    )
    .await;
    assert_eq!(reply.status, 431, "{}", reply.status);
}

#[tokio::test]
async fn a_kept_alive_connection_that_goes_idle_is_closed() {
    let server = start(with_token().header_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    // A request with the token, so that the connection is kept alive (without it, the answer
    // closes the connection at once).
    let request =
        post(&server.host(), &[BEARER], &initialize_body()).replace("Connection: close\r\n", "");
    stream.write_all(request.as_bytes()).await.unwrap();
    let seen = until_closed(&mut stream).await;
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    assert!(
        !seen.to_ascii_lowercase().contains("connection: close"),
        "{seen}"
    );
}

#[tokio::test]
async fn a_half_sent_body_is_answered_408_and_closed() {
    let server = start(with_token().body_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nAccept: {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\":",
        raw_http::ACCEPT
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let reply = raw_http::parse(until_closed(&mut stream).await.as_bytes());
    assert_eq!(reply.status, 408, "{reply:?}");
}

// --- Sessions -----------------------------------------------------------------------------------

#[tokio::test]
async fn initializes_past_the_session_cap_are_refused_with_a_clear_error() {
    let server = start(with_token().max_sessions(3)).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let reply = initialize(&server).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        sessions.push(reply.session().expect("a session id"));
    }
    for _ in 0..5 {
        let refused = initialize(&server).await;
        assert_eq!(refused.status, 503, "{refused:?}");
        assert!(refused.session().is_none());
        let error = &refused.message()["error"];
        assert_eq!(error["code"], -32000);
        assert_eq!(refused.message()["id"], 1);
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("session limit (3 live sessions)"),
            "{message}"
        );
    }

    // Ending a session frees its place.
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nMcp-Session-Id: {}\r\nConnection: close\r\n\r\n",
        server.host(),
        sessions[0]
    );
    let deleted = send(server.addr, &delete).await;
    assert!(deleted.status < 300, "{deleted:?}");
    assert_eq!(initialize(&server).await.status, 200);
    server.assert_running();
}

#[tokio::test]
async fn idle_sessions_expire_and_free_their_place() {
    let server = start(
        with_token()
            .max_sessions(1)
            .session_idle_timeout(Duration::from_millis(100)),
    )
    .await;
    let first = initialize(&server).await;
    assert_eq!(first.status, 200);
    let replaced = tokio::time::timeout(HANG_GUARD, async {
        loop {
            let reply = initialize(&server).await;
            if reply.status == 200 {
                return reply;
            }
            assert_eq!(reply.status, 503, "{reply:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the idle session expires");
    assert_ne!(replaced.session(), first.session());

    // The expired session is gone: the spec's 404, on which clients initialize again.
    let session = first.session().unwrap();
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}).to_string();
    let headers = [BEARER, ("Mcp-Session-Id", session.as_str())];
    let reply = send(server.addr, &post(&server.host(), &headers, &ping)).await;
    assert_eq!(reply.status, 404, "{reply:?}");
}

#[tokio::test]
async fn a_session_with_a_call_running_does_not_expire() {
    let server = start(
        with_token()
            .max_sessions(1)
            .session_idle_timeout(Duration::from_millis(50)),
    )
    .await;
    let addr = server.addr;
    let call =
        tokio::spawn(
            async move { call_tool(addr, "127.0.0.1", &[BEARER], "hold", json!({})).await },
        );
    tokio::time::timeout(HANG_GUARD, HOLD_STARTED.notified())
        .await
        .expect("the call started");
    // Several idle timeouts pass while the call runs (the pause is the opportunity to expire
    // the session wrongly; nothing depends on its length).
    tokio::time::sleep(Duration::from_millis(400)).await;
    let refused = initialize(&server).await;
    assert_eq!(
        refused.status, 503,
        "the running session still holds its place"
    );
    HOLD_RELEASE.notify_one();
    let reply = tokio::time::timeout(HANG_GUARD, call)
        .await
        .expect("the call finishes")
        .unwrap();
    assert_eq!((reply.status, text(&reply)), (200, "released".to_owned()));
}

// --- JSON-RPC error codes -----------------------------------------------------------------------

async fn post_body(server: &Running, body: &str) -> (u16, Value) {
    let reply = send(server.addr, &post(&server.host(), &[BEARER], body)).await;
    let status = reply.status;
    (status, reply.message())
}

#[tokio::test]
async fn malformed_json_is_a_parse_error() {
    let server = start(with_token()).await;
    for body in [
        "{not json",
        "",
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"",
    ] {
        let (status, message) = post_body(&server, body).await;
        assert_eq!(status, 400, "{body:?}");
        assert_eq!(message["error"]["code"], -32700, "{body:?}: {message}");
        assert_eq!(message["id"], Value::Null);
        assert_eq!(message["jsonrpc"], "2.0");
    }
}

#[tokio::test]
async fn non_object_arguments_are_invalid_params() {
    let server = start(with_token()).await;
    for arguments in [json!([1, 2]), json!("rm -rf /"), json!(7)] {
        let reply = call_tool(
            server.addr,
            &server.host(),
            &[BEARER],
            "mark",
            arguments.clone(),
        )
        .await;
        assert_eq!(reply.status, 400, "{arguments}: {reply:?}");
        let message = reply.message();
        assert_eq!(message["error"]["code"], -32602, "{arguments}: {message}");
        assert_eq!(message["id"], 2, "the request's id is echoed");
        let text = message["error"]["message"].as_str().unwrap_or_default();
        assert!(text.contains("`arguments` must be an object"), "{text}");
    }
    let (status, message) = post_body(
        &server,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": 5}).to_string(),
    )
    .await;
    assert_eq!(
        (status, message["error"]["code"].clone()),
        (400, json!(-32602))
    );
}

#[tokio::test]
async fn what_is_no_single_json_rpc_message_is_an_invalid_request() {
    let server = start(with_token()).await;
    let batch = format!("[{}]", call_body(1, "hello", json!({})));
    for body in [
        batch.as_str(),
        "42",
        r#"{"jsonrpc": "2.0", "id": 1}"#,
        r#"{"jsonrpc": "1.0", "id": 1, "method": "ping"}"#,
    ] {
        let (status, message) = post_body(&server, body).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(message["error"]["code"], -32600, "{body}: {message}");
    }
}

#[tokio::test]
async fn an_oversized_body_is_refused_unread() {
    let server = start(
        with_token()
            .http_config(StreamableHttpServerConfig::default().with_max_request_body_bytes(1024)),
    )
    .await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4096)
    );
    let reply = send(server.addr, &post(&server.host(), &[BEARER], &body)).await;
    assert_eq!(reply.status, 413, "{reply:?}");
}
