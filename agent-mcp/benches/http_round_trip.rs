//! One MCP request's round trip through the HTTP server on loopback (a `ping` in a session, on a
//! kept-alive connection with the token: the connection pools, the checks, the body limit and
//! deadline, the JSON-RPC check and rmcp), against an honest floor: a bare hyper service that
//! echoes the same body, on the same loopback, with the same client.
//!
//! `cargo bench -p agent-mcp --bench http_round_trip`

use std::net::SocketAddr;

use agent_core::Registry;
use agent_mcp::McpServer;
use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

const TOKEN: &str = "bench-token-0123456789abcdef";
const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

/// A kept-alive HTTP/1 client connection to `addr`.
async fn connect(addr: SocketAddr) -> SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.expect("connects");
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(connection);
    sender
}

fn post(session: Option<&str>, body: &'static str) -> Request<Full<Bytes>> {
    let mut request = Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18");
    }
    request
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .expect("a request")
}

/// Sends `request` and reads the whole answer; panics unless it is a success.
async fn round_trip(
    sender: &mut SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Response<Bytes> {
    sender.ready().await.expect("the connection is open");
    let response = sender.send_request(request).await.expect("an answer");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("the whole body").to_bytes();
    assert!(parts.status.is_success(), "{:?}: {body:?}", parts.status);
    Response::from_parts(parts, body)
}

/// The MCP server with the token, and a client in an initialized session.
async fn mcp() -> (SendRequest<Full<Bytes>>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(
        McpServer::new(Registry::new())
            .bearer_token(TOKEN)
            .serve_http_on(listener),
    );
    let mut sender = connect(addr).await;
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
    let response = round_trip(&mut sender, post(None, initialize)).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .expect("a session id")
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    round_trip(&mut sender, post(Some(&session), initialized)).await;
    (sender, session)
}

/// The floor: hyper answering every request with its own body, nothing else.
async fn echo() -> SendRequest<Full<Bytes>> {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let service = hyper::service::service_fn(|request: Request<Incoming>| async move {
                let body = request.into_body().collect().await?.to_bytes();
                Ok::<_, hyper::Error>(Response::new(Full::new(body)))
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });
    connect(addr).await
}

fn http_round_trip(c: &mut Criterion) {
    let runtime: Runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("http_round_trip");
    let mut floor = runtime.block_on(echo());
    group.bench_function("hyper_echo_floor", |b| {
        b.iter(|| runtime.block_on(round_trip(&mut floor, post(None, PING))))
    });
    // Connected now, not before the floor's run: the server closes a kept-alive connection
    // idle for its header timeout.
    let (mut mcp, session) = runtime.block_on(mcp());
    group.bench_function("mcp_ping", |b| {
        b.iter(|| {
            let response = runtime.block_on(round_trip(&mut mcp, post(Some(&session), PING)));
            assert!(
                std::str::from_utf8(response.body()).is_ok_and(|body| body.contains("\"id\":7"))
            );
        })
    });
    group.finish();
}

criterion_group!(benches, http_round_trip);
criterion_main!(benches);
