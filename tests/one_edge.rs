//! One network edge: an MCP endpoint, an A2A agent, an AG-UI endpoint and an application's own
//! route, merged into one axum router and served by one `agent_serve::Edge` on one port, with
//! one options value. The protocols answer their clients there, and the edge's attacks (no token, a wrong
//! token, a foreign page, two `Host` headers, a large or dripped body, a flood of silent
//! connections) are refused the same way on every route. A guarded router served any other way
//! runs nothing.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_a2a::{A2aServer, RemoteAgent};
use agent_core::{Registry, SkillError, skill};
use agent_llm::{MockProvider, MockReply};
use agent_mcp::{McpServer, McpSkills};
use agent_runtime::AgentRuntime;
use agent_serve::{Edge, Guard};
use axum::Router;
use axum::routing::post;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "one-edge-token-0123456789abcdef";
/// How long anything here may take before the test fails: a bound on liveness, not a timing.
const PATIENCE: Duration = Duration::from_secs(30);
/// How long a client with the token may wait while silent connections flood the edge: under
/// the 30 s those connections could hold their places by the first-head timer alone.
const FLOODED: Duration = Duration::from_secs(20);

/// Greets someone.
///
/// # Arguments
/// * `name` - Who to greet.
#[skill(read_only, register = false)]
async fn hello(name: String) -> Result<String, SkillError> {
    Ok(format!("hello, {name}"))
}

struct Served {
    addr: SocketAddr,
    jobs: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// MCP at `/mcp`, A2A at `/` and its card, the application's `/jobs`: one router, one edge.
fn app(jobs: Arc<AtomicUsize>) -> Router {
    let mut registry = Registry::new();
    registry.add(HelloSkill);
    let mcp = McpServer::new(registry).into_router().expect("MCP router");
    let runtime = AgentRuntime::new(
        MockProvider::new([MockReply::text("hi from the agent")]),
        Registry::new(),
    );
    let a2a = A2aServer::new(runtime)
        .name("edge-agent")
        .into_router()
        .expect("A2A router");
    let own = Router::new()
        .route(
            "/jobs",
            post(move || {
                jobs.fetch_add(1, Ordering::SeqCst);
                async { "queued" }
            }),
        )
        // An endless stream, for a client that asks for it and never reads.
        .route(
            "/firehose",
            axum::routing::get(|| async {
                let chunk = axum::body::Bytes::from(vec![b'x'; 64 * 1024]);
                let endless = futures::stream::repeat_with(move || {
                    Ok::<_, std::convert::Infallible>(chunk.clone())
                });
                axum::body::Body::from_stream(endless)
            }),
        )
        .route_layer(Guard::new("jobs"));
    let agui = agent_agui::AguiServer::new(AgentRuntime::new(
        MockProvider::new([MockReply::text("hi over AG-UI")]),
        Registry::new(),
    ))
    .into_router()
    .expect("AG-UI router");
    Router::new().merge(mcp).merge(a2a).merge(agui).merge(own)
}

async fn serve(edge: Edge) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let jobs = Arc::new(AtomicUsize::new(0));
    let router = app(jobs.clone());
    let task = tokio::spawn(async move {
        edge.serve_on(listener, router).await.expect("serves");
    });
    Served { addr, jobs, task }
}

fn edge() -> Edge {
    Edge::new()
        .bearer_token(TOKEN)
        .max_pending_connections(16)
        .max_body_bytes(4096)
        .body_read_timeout(Duration::from_millis(800))
}

/// Status, `WWW-Authenticate` and body of a request, without the client's own retries.
async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let raw = format!("{head}\r\n{body}");
    let answer = tokio::time::timeout(PATIENCE, async {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(raw.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
    .expect("answered");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    let challenge = answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("www-authenticate")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, challenge, body)
}

const BEARER: (&str, &str) = ("Authorization", "Bearer one-edge-token-0123456789abcdef");
const JSON: (&str, &str) = ("Content-Type", "application/json");
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_and_a2a_answer_their_clients_on_one_port() {
    let served = serve(edge()).await;
    let url = format!("http://{}", served.addr);
    let mcp = tokio::time::timeout(
        PATIENCE,
        McpSkills::connect_http_with_token(format!("{url}/mcp"), TOKEN),
    )
    .await
    .expect("in time")
    .expect("the MCP client connects through the edge");
    assert_eq!(mcp.names(), ["hello"]);
    let agent = RemoteAgent::connect(&format!("{url}/"), Some(TOKEN))
        .await
        .expect("the A2A client reads the card and connects");
    let reply = tokio::time::timeout(PATIENCE, agent.ask("hi"))
        .await
        .expect("in time")
        .expect("answered");
    assert_eq!(reply.text(), "hi from the agent");
    // The card names the edge's address, and anyone may read it.
    let (status, _, card) =
        request(served.addr, "GET", "/.well-known/agent-card.json", &[], "").await;
    assert_eq!(status, 200, "{card}");
    assert!(card.contains(&format!("http://{}/", served.addr)), "{card}");
    assert!(card.contains("edge-agent"), "{card}");
    let (status, _, body) = request(served.addr, "POST", "/jobs", &[BEARER], "").await;
    assert_eq!((status, body.as_str()), (200, "queued"));
    assert_eq!(served.jobs.load(Ordering::SeqCst), 1);
    // And AG-UI on the same port: a run's events as SSE.
    let input =
        r#"{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"hi"}]}"#;
    let (status, _, events) = request(served.addr, "POST", "/agui", &[BEARER, JSON], input).await;
    assert_eq!(status, 200, "{events}");
    for event in ["RUN_STARTED", "hi over AG-UI", "RUN_FINISHED"] {
        assert!(events.contains(event), "{event} in {events}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_refuses_the_same_attacks_the_same_way() {
    let served = serve(edge()).await;
    let addr = served.addr;
    for (path, realm) in [
        ("/mcp", "mcp"),
        ("/", "a2a"),
        ("/agui", "agui"),
        ("/jobs", "jobs"),
    ] {
        let (status, challenge, _) = request(addr, "POST", path, &[JSON], PING).await;
        assert_eq!(status, 401, "{path} without a token");
        assert_eq!(challenge, format!(r#"Bearer realm="{realm}""#), "{path}");
        let wrong = ("Authorization", "Bearer one-edge-token-0123456789abcdeX");
        let (status, challenge, _) = request(addr, "POST", path, &[wrong, JSON], PING).await;
        assert_eq!(status, 401, "{path} with a wrong token");
        assert!(challenge.contains("invalid_token"), "{path}: {challenge}");
        let foreign = ("Origin", "https://evil.example");
        for method in ["POST", "OPTIONS"] {
            let (status, _, _) = request(addr, method, path, &[BEARER, foreign, JSON], PING).await;
            assert_eq!(status, 403, "{method} {path} from a foreign page");
        }
        let big = " ".repeat(5000);
        let (status, _, body) = request(addr, "POST", path, &[BEARER, JSON], &big).await;
        assert_eq!(status, 413, "{path}: {body}");
        assert!(body.contains("at most 4096 bytes"), "{body}");
    }
    let foreign = ("Origin", "null");
    for path in ["/.well-known/agent-card.json", "/nowhere"] {
        let (status, _, _) = request(addr, "GET", path, &[foreign], "").await;
        assert_eq!(status, 403, "{path} from a sandboxed page");
    }
    // Two Host headers: the edge refuses before any route sees the request.
    let (status, _, _) = request(
        addr,
        "POST",
        "/jobs",
        &[BEARER, ("Host", "evil.example")],
        "",
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        served.jobs.load(Ordering::SeqCst),
        0,
        "no refused request ran"
    );
    // The page's own origin passes, and its preflight is answered without a token.
    let own = format!("http://127.0.0.1:{}", addr.port());
    let preflight = [
        ("Origin", own.as_str()),
        ("Access-Control-Request-Method", "POST"),
    ];
    let (status, _, _) = request(addr, "OPTIONS", "/jobs", &preflight, "").await;
    assert_eq!(status, 200);
    assert_eq!(
        served.jobs.load(Ordering::SeqCst),
        0,
        "a preflight runs nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dripped_body_meets_one_deadline_for_the_whole_body() {
    let served = serve(edge()).await;
    let (mut read, mut write) = TcpStream::connect(served.addr).await.unwrap().into_split();
    let head = format!(
        "POST /jobs HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 100\r\n\r\n",
        served.addr
    );
    write.write_all(head.as_bytes()).await.unwrap();
    let started = tokio::time::Instant::now();
    // A byte every 100 ms: the body would take 10 s; the deadline is 0.8 s for all of it.
    let drip = tokio::spawn(async move {
        for _ in 0..100 {
            if write.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let mut answer = vec![0; 512];
    let n = tokio::time::timeout(PATIENCE, read.read(&mut answer))
        .await
        .expect("answered")
        .unwrap();
    drip.abort();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the drip was not cut"
    );
    assert_eq!(served.jobs.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_cannot_keep_either_protocols_clients_out() {
    // Silent connections would be closed by the first-head timer only after 30 s; the clients
    // must get in long before, because the pending pool closes the silent ones to make room.
    let served = serve(edge().header_read_timeout(Duration::from_secs(60))).await;
    // Ten times the pending pool, silent: none sends a byte.
    let mut silent = Vec::new();
    for _ in 0..160 {
        if let Ok(stream) = TcpStream::connect(served.addr).await {
            silent.push(stream);
        }
    }
    assert!(
        silent.len() > 100,
        "the flood did not run: {}",
        silent.len()
    );
    let url = format!("http://{}", served.addr);
    let mcp = tokio::time::timeout(
        FLOODED,
        McpSkills::connect_http_with_token(format!("{url}/mcp"), TOKEN),
    )
    .await
    .expect("the MCP client was kept out")
    .expect("connects");
    assert_eq!(mcp.names(), ["hello"]);
    let (status, _, body) = tokio::time::timeout(
        FLOODED,
        request(served.addr, "POST", "/", &[BEARER, JSON], PING),
    )
    .await
    .expect("the A2A client was kept out");
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("-32001") || body.contains("not found"),
        "{body}"
    );
    drop(silent);
}

#[tokio::test]
async fn a_guarded_router_served_outside_an_edge_runs_nothing() {
    use tower_service::Service;
    let jobs = Arc::new(AtomicUsize::new(0));
    let mut router = app(jobs.clone());
    for path in ["/jobs", "/mcp", "/", "/agui"] {
        let request = axum::http::Request::post(path)
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("content-type", "application/json")
            .body(axum::body::Body::from(PING))
            .unwrap();
        let response = router.call(request).await.unwrap();
        assert_eq!(response.status(), 500, "{path}");
    }
    assert_eq!(jobs.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_its_stream_loses_its_slot_after_the_write_timeout() {
    // One admitted slot, and a client that takes it by asking for an endless stream it never
    // reads: the server's writes wait on it until the write timeout, then the connection ends
    // and the slot is free. Without the timeout the second client waits for ever.
    let served = serve(
        edge()
            .max_connections(1)
            .write_timeout(Duration::from_millis(500)),
    )
    .await;
    let mut hog = TcpStream::connect(served.addr).await.unwrap();
    let head = format!(
        "GET /firehose HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n",
        served.addr
    );
    hog.write_all(head.as_bytes()).await.unwrap();
    // Let the server fill the socket's buffers, then ask on a fresh connection.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, _, body) = tokio::time::timeout(
        PATIENCE,
        request(served.addr, "POST", "/jobs", &[BEARER], ""),
    )
    .await
    .expect("the slot held by a client that never reads was never freed");
    assert_eq!((status, body.as_str()), (200, "queued"));
    // The hog's connection was ended: reading now finds its end (after what was buffered).
    let mut sink = vec![0; 1 << 20];
    let ended = tokio::time::timeout(PATIENCE, async {
        loop {
            match hog.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the endless stream still flows to the client that stalled"
    );
}
