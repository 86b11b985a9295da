//! The server's connections and the `Origin` check, attacked over real TCP on 127.0.0.1 with
//! HTTP/1.1 written by hand: token-less connections (silent, half a head, whole requests
//! without the token) far beyond both pools do not keep a client with the token waiting; the
//! card is answered without taking an admitted slot; a foreign `Origin` is refused before
//! anything runs. The heads have an hour, so no timeout can be what serves the client: a server
//! that gave every connection a slot until its head arrived (as this one did, with a semaphore)
//! keeps it waiting that hour.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use agent_a2a::A2aServer;
use agent_a2a::types::Message;
use agent_llm::MockReply;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::{Served, serve, server};

/// How long an answer may take before the test counts it as not served: far more than one
/// takes (milliseconds), far less than the hour a head may take.
const DEADLINE: Duration = Duration::from_secs(20);
/// The header with `common::TOKEN`.
const BEARER: (&str, &str) = ("Authorization", "Bearer test-token-0123456789abcdef");

/// A response as read off the wire.
#[derive(Debug)]
struct Reply {
    status: u16,
    /// The header lines, names lowercased.
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }

    /// Whether this is a `SendMessage` answer whose task completed with `text` in it.
    fn completed_with(&self, text: &str) -> bool {
        let task = &self.json()["result"]["task"];
        task["status"]["state"] == "TASK_STATE_COMPLETED" && task.to_string().contains(text)
    }
}

fn addr(served: &Served) -> SocketAddr {
    served.url.trim_start_matches("http://").parse().unwrap()
}

/// A server whose heads have an hour, with these pools.
fn patient(max_connections: usize, max_pending: usize) -> A2aServer {
    server(Vec::new())
        .max_connections(max_connections)
        .max_pending_connections(max_pending)
        .header_read_timeout(Duration::from_secs(3600))
}

/// A JSON-RPC POST to `/` with these headers, kept alive unless `close`.
fn post(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    method: &str,
    params: Value,
    close: bool,
) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if close {
        request.push_str("Connection: close\r\n");
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request + "\r\n" + &body
}

fn list_tasks(addr: SocketAddr, headers: &[(&str, &str)], close: bool) -> String {
    post(addr, headers, "ListTasks", json!({}), close)
}

fn send_message(addr: SocketAddr, headers: &[(&str, &str)]) -> String {
    post(
        addr,
        headers,
        "SendMessage",
        json!({"message": Message::user_text("hi")}),
        true,
    )
}

fn get_card(addr: SocketAddr, headers: &[(&str, &str)]) -> String {
    let mut request = format!("GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {addr}\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request + "\r\n"
}

/// Reads one response (its head, then a body of its `Content-Length`).
async fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).await.expect("reads");
        assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&raw));
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).into_owned();
    let mut lines = head.trim_end().split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("a status line in {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.expect("the whole body");
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// `request` on a fresh connection: the reply, or `None` when none came within [`DEADLINE`]
/// (connecting included: a server that accepts nothing leaves the kernel's queue full).
async fn exchange(addr: SocketAddr, request: &str) -> Option<Reply> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.ok()?;
        stream.write_all(request.as_bytes()).await.ok()?;
        Some(read_reply(&mut stream).await)
    };
    tokio::time::timeout(DEADLINE, exchange)
        .await
        .ok()
        .flatten()
}

/// Whether the server closed `stream` within `within`: `Some` with what it sent before.
async fn closed(mut stream: TcpStream, within: Duration) -> Option<Vec<u8>> {
    let mut raw = Vec::new();
    let read = async {
        let mut buf = [0u8; 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(within, read).await.ok()?;
    Some(raw)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Attacker {
    /// Connects and sends nothing.
    Silent,
    /// Sends half a head.
    Half,
    /// Sends a whole request without the token, and would keep the connection.
    NoToken,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_less_connections_beyond_both_pools_do_not_keep_a_client_with_the_token_waiting() {
    const MAX_CONNECTIONS: usize = 2;
    const MAX_PENDING: usize = 8;
    const ATTACKERS: usize = 320;
    let served = serve(patient(MAX_CONNECTIONS, MAX_PENDING)).await;
    let addr = addr(&served);

    // Forty times the pending pool, a hundred and sixty times the admitted one.
    let (mut attackers, mut unconnected) = (Vec::new(), 0);
    for i in 0..ATTACKERS {
        let kind = match i {
            _ if i % 8 == 7 => Attacker::NoToken,
            _ if i % 2 == 0 => Attacker::Silent,
            _ => Attacker::Half,
        };
        let connect = tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr));
        let Ok(Ok(mut stream)) = connect.await else {
            unconnected += 1;
            continue;
        };
        let sent = match kind {
            Attacker::Silent => String::new(),
            Attacker::Half => format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Le"),
            Attacker::NoToken => list_tasks(addr, &[], false),
        };
        stream.write_all(sent.as_bytes()).await.expect("sends");
        attackers.push((kind, stream));
    }

    // The client with the token, on fresh connections, one request after the other.
    for _ in 0..3 {
        let reply = exchange(addr, &list_tasks(addr, &[BEARER], true))
            .await
            .expect("the client with the token is answered while the attackers hold on");
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(reply.json()["result"]["totalSize"], 0, "{reply:?}");
    }

    assert_eq!(unconnected, 0, "attacking connections were not accepted");

    // What became of the attackers: every whole request without the token was answered 401 and
    // its connection closed; the others were closed without an answer to make room, but for at
    // most a pending pool of them.
    let outcomes =
        futures::future::join_all(attackers.into_iter().map(|(kind, stream)| async move {
            (kind, closed(stream, Duration::from_secs(5)).await)
        }))
        .await;
    let mut still_open = 0;
    let mut closed_unanswered = 0;
    for (kind, outcome) in outcomes {
        match (kind, outcome) {
            (Attacker::NoToken, Some(raw)) => {
                let text = String::from_utf8_lossy(&raw).to_ascii_lowercase();
                assert!(text.starts_with("http/1.1 401"), "{text}");
                assert!(text.contains("connection: close"), "{text}");
            }
            (Attacker::NoToken, None) => panic!("a request without the token kept its connection"),
            (_, Some(raw)) => {
                assert!(raw.is_empty(), "{:?}", String::from_utf8_lossy(&raw));
                closed_unanswered += 1;
            }
            (_, None) => still_open += 1,
        }
    }
    eprintln!("silent and half-head connections: {closed_unanswered} closed, {still_open} open");
    assert!(
        still_open <= MAX_PENDING,
        "{still_open} token-less connections held open"
    );
    assert!(closed_unanswered >= ATTACKERS - ATTACKERS / 8 - MAX_PENDING);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_the_card_takes_no_admitted_slot_and_the_slots_are_bounded() {
    let served = serve(patient(1, 8)).await;
    let addr = addr(&served);

    // A client with the token keeps its connection: the one admitted slot is taken.
    let mut holder = TcpStream::connect(addr).await.unwrap();
    holder
        .write_all(list_tasks(addr, &[BEARER], false).as_bytes())
        .await
        .unwrap();
    let reply = tokio::time::timeout(DEADLINE, read_reply(&mut holder))
        .await
        .expect("answered");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        !reply.closes(),
        "an admitted connection is kept alive: {reply:?}"
    );

    // The card is still read, and its connection closed after it: it was never admitted.
    let mut reader = TcpStream::connect(addr).await.unwrap();
    reader
        .write_all(get_card(addr, &[]).as_bytes())
        .await
        .unwrap();
    let card = tokio::time::timeout(DEADLINE, read_reply(&mut reader))
        .await
        .expect("the card is answered while the only slot is taken");
    assert_eq!(card.status, 200, "{card:?}");
    assert_eq!(card.json()["name"], "tester");
    assert!(card.closes(), "{card:?}");
    assert_eq!(
        closed(reader, DEADLINE).await,
        Some(Vec::new()),
        "closed after the card"
    );

    // So is a refusal.
    let refused = exchange(addr, &list_tasks(addr, &[], false))
        .await
        .expect("a request without the token is answered");
    assert_eq!(
        (refused.status, refused.closes()),
        (401, true),
        "{refused:?}"
    );

    // A second client with the token waits for the slot, and gets it when the first closes.
    let mut waiter = TcpStream::connect(addr).await.unwrap();
    waiter
        .write_all(list_tasks(addr, &[BEARER], true).as_bytes())
        .await
        .unwrap();
    let mut waiting = Box::pin(read_reply(&mut waiter));
    assert!(
        tokio::time::timeout(Duration::from_millis(500), &mut waiting)
            .await
            .is_err(),
        "answered while the only admitted slot was taken"
    );
    drop(holder);
    let reply = tokio::time::timeout(DEADLINE, waiting)
        .await
        .expect("answered once the slot is free");
    assert_eq!(reply.status, 200, "{reply:?}");
}

/// How many tasks the server has (read without an `Origin`).
async fn tasks(addr: SocketAddr) -> Value {
    let reply = exchange(addr, &list_tasks(addr, &[BEARER], true))
        .await
        .expect("answered");
    reply.json()["result"]["totalSize"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_is_refused_and_runs_nothing() {
    let served = serve(server(vec![MockReply::text("the model answered")])).await;
    let addr = addr(&served);
    let other_port = format!("http://localhost:{}", addr.port() + 1);
    for origin in [
        "http://evil.example",
        "null",
        "https://127.0.0.1",
        other_port.as_str(),
        "not an origin",
    ] {
        let headers = [BEARER, ("Origin", origin)];
        let reply = exchange(addr, &send_message(addr, &headers))
            .await
            .expect("answered");
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
        let card = exchange(addr, &get_card(addr, &[("Origin", origin)]))
            .await
            .expect("answered");
        assert_eq!(card.status, 403, "{origin}: {card:?}");
    }
    let twice = send_message(addr, &[BEARER]).replace(
        "\r\n\r\n",
        "\r\nOrigin: http://evil.example\r\nOrigin: http://evil.example\r\n\r\n",
    );
    assert_eq!(exchange(addr, &twice).await.expect("answered").status, 403);
    assert_eq!(tasks(addr).await, 0, "a refused message made a task");

    // The model's one reply is still there: nothing refused ran.
    let reply = exchange(addr, &send_message(addr, &[BEARER]))
        .await
        .expect("answered");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.completed_with("the model answered"), "{reply:?}");
    assert_eq!(tasks(addr).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_origins_and_the_servers_own_on_loopback_pass() {
    let replies = vec![
        MockReply::text("first answer"),
        MockReply::text("second answer"),
    ];
    let served = serve(server(replies).allowed_origins(["https://app.example"])).await;
    let addr = addr(&served);
    let own = format!("http://127.0.0.1:{}", addr.port());
    for (origin, answer) in [
        ("https://APP.example:443", "first answer"),
        (own.as_str(), "second answer"),
    ] {
        let reply = exchange(addr, &send_message(addr, &[BEARER, ("Origin", origin)]))
            .await
            .expect("answered");
        assert_eq!(reply.status, 200, "{origin}: {reply:?}");
        assert!(reply.completed_with(answer), "{origin}: {reply:?}");
    }
    let card = exchange(addr, &get_card(addr, &[("Origin", "https://app.example")]))
        .await
        .expect("answered");
    assert_eq!(card.status, 200, "{card:?}");
    assert_eq!(tasks(addr).await, 2);
}

#[tokio::test]
async fn a_malformed_origin_or_a_zero_pending_pool_is_refused_before_serving() {
    for refused in [
        server(Vec::new()).allowed_origins(["app.example"]),
        server(Vec::new()).max_pending_connections(0),
    ] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let error = tokio::time::timeout(DEADLINE, refused.serve(listener))
            .await
            .expect("refused at once")
            .expect_err("refused");
        assert!(matches!(error, agent_a2a::A2aError::Edge(_)), "{error}");
    }
}
