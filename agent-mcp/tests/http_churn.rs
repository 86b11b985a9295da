//! A client without the token cannot starve one with it: thousands of token-less connections,
//! reopened the moment the server closes them, while a real client with the token makes
//! requests on fresh connections. Real TCP on 127.0.0.1, the server, the attacker and the
//! client each on a runtime of their own (as they would be in their own processes).
//!
//! A test binary of its own: the attack holds thousands of sockets and both cores.

#[path = "support/raw_http.rs"]
mod raw_http;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_core::{Registry, SkillError, skill};
use agent_mcp::McpServer;
use raw_http::{call_body, initialize_body, post};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "test-token-0123456789abcdef";
const BEARER: (&str, &str) = ("Authorization", "Bearer test-token-0123456789abcdef");

/// How many connections the attacker keeps trying to hold open.
const ATTACKERS: usize = 4000;
/// How long one request of the real client may take before it counts as failed: a third of
/// the 30 s its requests timed out at, and a thousand times what one takes unattacked.
const CLIENT_DEADLINE: Duration = Duration::from_secs(10);
/// Real clients, each making `REQUESTS` requests one after the other.
const CLIENTS: usize = 3;
const REQUESTS: usize = 8;

/// Say hello.
#[skill(read_only, register = false)]
async fn hello() -> Result<String, SkillError> {
    Ok("hello".into())
}

/// Starts the server on a runtime of its own; returns its address. Its limits are the
/// defaults but for a minute to send a request head (as for clients on slow networks), so
/// that timeouts cannot be what frees room for the client: a server that gave each connection
/// a slot until its head timed out kept the client waiting about that long (10 s with the
/// default timeout, the client's own deadline).
fn start_server() -> SocketAddr {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            // As `serve_http` binds.
            let listener = agent_mcp::http::bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            let mut registry = Registry::new();
            registry.add(HelloSkill);
            let served = McpServer::new(registry)
                .bearer_token(TOKEN)
                .header_read_timeout(Duration::from_secs(60))
                .serve_http_on(listener)
                .await;
            panic!("the server stopped: {served:?}");
        });
    });
    addr_rx.recv().unwrap()
}

/// What the attacker did.
#[derive(Default)]
struct Attack {
    stop: AtomicBool,
    connections: AtomicUsize,
}

/// One attacking connection after another, each without a valid token, each reopened as soon
/// as the server closes it: some send nothing, some half a head, some a whole request without
/// a token or with a wrong one (and keep the connection, as HTTP/1.1 allows).
async fn attack(addr: SocketAddr, which: usize, attack: Arc<Attack>) {
    let host = addr.to_string();
    let wrong = ("Authorization", "Bearer wrong-token-0123456789abcdef");
    let request = match which % 4 {
        0 => String::new(),
        1 => format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Le"),
        // `post` asks for `Connection: close`; an attacker would not.
        2 => post(&host, &[], &initialize_body()).replace("Connection: close\r\n", ""),
        _ => post(&host, &[wrong], &initialize_body()).replace("Connection: close\r\n", ""),
    };
    let mut sink = vec![0u8; 4096];
    while !attack.stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = TcpStream::connect(addr).await else {
            // Out of ports or a refused connection: try again at once, as an attacker would,
            // but without spinning.
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        attack.connections.fetch_add(1, Ordering::Relaxed);
        let _ = stream.write_all(request.as_bytes()).await;
        // Hold the connection until the server closes it.
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 || attack.stop.load(Ordering::Relaxed) {
                break;
            }
        }
    }
}

/// Starts the attack on a runtime of its own; dropping the runtime ends it.
fn start_attack(addr: SocketAddr, attack: Arc<Attack>) -> tokio::runtime::Runtime {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for which in 0..ATTACKERS {
        runtime.spawn(self::attack(addr, which, attack.clone()));
    }
    runtime
}

/// One request on a fresh connection, as the real client sends it: the reply, or why none
/// came within [`CLIENT_DEADLINE`].
async fn request(addr: SocketAddr, request: &str) -> Result<raw_http::Reply, String> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw).await;
        if raw.is_empty() {
            return Err("closed without an answer".to_owned());
        }
        Ok(raw_http::parse(&raw))
    };
    tokio::time::timeout(CLIENT_DEADLINE, exchange)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {CLIENT_DEADLINE:?}")))
}

/// A real client: its own MCP session, initialized before the attack.
async fn client_session(addr: SocketAddr) -> String {
    let host = addr.to_string();
    let init = request(addr, &post(&host, &[BEARER], &initialize_body()))
        .await
        .expect("initialize");
    assert_eq!(init.status, 200, "{init:?}");
    let session = init.session().expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let ack = request(addr, &post(&host, &session_headers(&session), &initialized))
        .await
        .expect("initialized");
    assert_eq!(ack.status, 202, "{ack:?}");
    session
}

fn session_headers(session: &str) -> [(&str, &str); 3] {
    [
        BEARER,
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]
}

/// `REQUESTS` calls one after the other, each on a fresh connection: how long each took and
/// how it ended.
async fn calls(addr: SocketAddr, session: String) -> Vec<(Duration, Result<(), String>)> {
    let host = addr.to_string();
    let mut outcomes = Vec::new();
    for id in 0..REQUESTS as u64 {
        let call = post(
            &host,
            &session_headers(&session),
            &call_body(10 + id, "hello", json!({})),
        );
        let started = Instant::now();
        let outcome = match request(addr, &call).await {
            Ok(reply) if reply.status == 200 && text(&reply) == "hello" => Ok(()),
            Ok(reply) => Err(format!("answered {}: {}", reply.status, reply.body)),
            Err(failure) => Err(failure),
        };
        outcomes.push((started.elapsed(), outcome));
    }
    outcomes
}

fn text(reply: &raw_http::Reply) -> String {
    reply.message()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_less_connection_churn_does_not_starve_a_client_with_the_token() {
    let addr = start_server();
    let mut sessions = Vec::new();
    for _ in 0..CLIENTS {
        sessions.push(client_session(addr).await);
    }

    let attack = Arc::new(Attack::default());
    let attacker = start_attack(addr, attack.clone());
    // Until the attacker has opened four times as many connections as the server has slots.
    while attack.connections.load(Ordering::Relaxed) < 4 * 256 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let clients: Vec<_> = sessions
        .into_iter()
        .map(|session| tokio::spawn(calls(addr, session)))
        .collect();
    let mut outcomes = Vec::new();
    for client in clients {
        outcomes.extend(client.await.unwrap());
    }
    let attacked_with = attack.connections.load(Ordering::Relaxed);
    attack.stop.store(true, Ordering::Relaxed);
    attacker.shutdown_background();

    let mut latencies: Vec<Duration> = outcomes.iter().map(|(took, _)| *took).collect();
    latencies.sort();
    let failures: Vec<&String> = outcomes
        .iter()
        .filter_map(|(_, o)| o.as_ref().err())
        .collect();
    // The numbers, for the record (nothing is asserted on them).
    eprintln!(
        "{} requests while the attacker opened {attacked_with} connections: {} failed; \
         latency min {:?}, median {:?}, max {:?}",
        outcomes.len(),
        failures.len(),
        latencies[0],
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1],
    );
    assert!(
        failures.is_empty(),
        "{} of {} requests with the token failed under the attack: {failures:?}",
        failures.len(),
        outcomes.len()
    );
}
