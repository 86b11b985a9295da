//! The endpoint's edge and bounds, attacked with raw HTTP: no token, a foreign page, a client
//! that never reads its stream (the run finishes anyway, the stream is cut at its bound), one
//! that reads late (its text joined, cut only past the bound), a flood of subscribers.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_agui::{AguiServer, BufferLimits, Threads};
use agent_llm::MockReply;
use agent_runtime::SessionStore;
use serde_json::json;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn input(thread: &str, text: &str) -> String {
    json!({
        "threadId": thread, "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": text}],
    })
    .to_string()
}

/// Sends a POST to the endpoint; the open stream.
async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> TcpStream {
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        agent_agui::AGUI_PATH,
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .await
        .unwrap();
    stream
}

async fn answer(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> String {
    let mut stream = post(addr, headers, body).await;
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("answered")
        .ok();
    String::from_utf8_lossy(&answer).into_owned()
}

const BEARER: &str = "Bearer agui-test-token-0123456789abcdef";

#[tokio::test(flavor = "multi_thread")]
async fn no_token_is_401_and_a_foreign_page_is_403_and_nothing_runs() {
    let runtime = runtime([MockReply::text("should not run")]);
    let threads = Arc::new(Threads::new(10));
    let (addr, _task) = serve(AguiServer::new(runtime).threads(threads.clone())).await;
    let body = input("t1", "hi");
    let refused = answer(addr, &[], &body).await;
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let wrong = answer(
        addr,
        &[("Authorization", "Bearer not-the-token-0123456789abcdef")],
        &body,
    )
    .await;
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    let foreign = answer(
        addr,
        &[
            ("Authorization", BEARER),
            ("Origin", "https://evil.example"),
        ],
        &body,
    )
    .await;
    assert!(foreign.starts_with("HTTP/1.1 403"), "{foreign}");
    assert!(threads.is_empty(), "a refused request ran");
    // A body that is no RunAgentInput: 400, before any stream.
    let bad = answer(addr, &[("Authorization", BEARER)], "{\"threadId\": 1}").await;
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    // The right token: a stream of events.
    let ok = answer(addr, &[("Authorization", BEARER)], &body).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(
        ok.contains("text/event-stream") && ok.contains("RUN_FINISHED"),
        "{ok}"
    );
}

/// A client that sends its request and never reads: the run goes on to its end unslowed (its
/// outcome saved in the thread) while the stream falls behind; past the buffer's bound the stream
/// is cut, so it never shows a `RUN_FINISHED`, and the server holds no more than the bound.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_reads_does_not_hold_up_the_run_and_its_stream_is_cut() {
    // 200,000 words streamed one event each: far more than the socket buffers and the bound.
    let long = "word ".repeat(200_000);
    let runtime = runtime([MockReply::text(long)]);
    let threads = Arc::new(Threads::new(10));
    let server = AguiServer::new(runtime)
        .threads(threads.clone())
        .buffer(BufferLimits {
            events: 256,
            bytes: 64 * 1024,
        });
    // The run ends while the client reads nothing (its conversation saved in the thread);
    // then what arrives is a cut stream, without the run's end.
    let got = read_late(server, threads.clone(), "slow").await;
    let saved = threads.load("slow").await.unwrap().expect("saved");
    assert_eq!(saved.data.transcript.len(), 2);
    assert_cut(&got);
    assert!(got.matches("TEXT_MESSAGE_CONTENT").count() < 200_000);
}

/// Asserts `got` is a stream that started and was cut: without the run's end.
fn assert_cut(got: &str) {
    assert!(
        got.starts_with("HTTP/1.1 200"),
        "{}",
        &got[..200.min(got.len())]
    );
    assert!(
        !got.contains("RUN_FINISHED"),
        "a cut stream showed the run's end"
    );
}

/// Runs `runtime` for a client that reads nothing until the run is saved in its thread, then
/// everything: what it got.
async fn read_late(server: AguiServer, threads: Arc<Threads>, thread: &str) -> String {
    let (addr, _task) = serve(server).await;
    let started = Instant::now();
    let mut late = post(addr, &[("Authorization", BEARER)], &input(thread, "talk")).await;
    while threads.load(thread).await.unwrap().is_none() {
        assert!(started.elapsed() < PATIENCE, "the run did not finish");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut got = Vec::new();
    tokio::time::timeout(PATIENCE, late.read_to_end(&mut got))
        .await
        .expect("the stream ends")
        .ok();
    String::from_utf8_lossy(&got).into_owned()
}

/// A client that falls behind a run streaming text gets the text joined into fewer, larger
/// pieces, not a cut stream: 20,000 pieces against a bound of 256 events, all of the text and
/// the run's end arrive. Pieces that cannot be joined (300 calls: their starts, ends and
/// results) are still cut at the bound.
#[tokio::test(flavor = "multi_thread")]
async fn a_reader_behind_a_fast_run_gets_its_text_joined_and_is_cut_only_past_the_bound() {
    let limits = BufferLimits {
        events: 256,
        bytes: 4 * 1024 * 1024,
    };
    let long = "word ".repeat(20_000);
    let threads = Arc::new(Threads::new(10));
    let server = AguiServer::new(runtime([MockReply::text(long.clone())]))
        .threads(threads.clone())
        .buffer(limits);
    let got = read_late(server, threads, "joined").await;
    assert!(got.contains("RUN_FINISHED"), "the stream was cut");
    let pieces: Vec<serde_json::Value> = got
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .filter(|event: &serde_json::Value| event["type"] == "TEXT_MESSAGE_CONTENT")
        .collect();
    let text: String = pieces
        .iter()
        .map(|p| p["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, long, "the text joined is the text streamed");
    assert!(
        pieces.len() < 20_000,
        "nothing was joined: {}",
        pieces.len()
    );

    let calls: Vec<agent_core::ToolCall> = (0..300)
        .map(|i| agent_core::ToolCall::new(format!("c{i}"), "lookup", json!({"name": "x"})))
        .collect();
    let threads = Arc::new(Threads::new(10));
    let server = AguiServer::new(runtime([
        MockReply::tool_calls(calls),
        MockReply::text("done"),
    ]))
    .threads(threads.clone())
    .buffer(limits);
    let got = read_late(server, threads, "calls").await;
    assert_cut(&got);
}

/// A flood of subscribers: 48 clients each start a run of 2,000 events and never read its
/// stream, against a server of 8 admitted connections. Every run still ends (saved in its
/// thread), each flood connection gives up its slot once its answer is written out or its
/// writes wait past the edge's write timeout, and a client that reads, behind the flood, gets
/// its whole run, start to end.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_subscribers_that_never_read_neither_stops_the_runs_nor_keeps_a_reader_out() {
    const FLOOD: usize = 48;
    let long = "word ".repeat(2_000);
    // As many answers as runs; which run gets which depends on the order they are admitted in.
    let replies: Vec<MockReply> = (0..=FLOOD).map(|_| MockReply::text(long.clone())).collect();
    let threads = Arc::new(Threads::new(100));
    let server = AguiServer::new(runtime(replies))
        .threads(threads.clone())
        .edge(
            agent_serve::Edge::new()
                .max_connections(8)
                .write_timeout(Duration::from_millis(300)),
        );
    let (addr, _task) = serve(server).await;
    let started = Instant::now();
    let mut flood = Vec::new();
    for i in 0..FLOOD {
        flood.push(
            post(
                addr,
                &[("Authorization", BEARER)],
                &input(&format!("f{i}"), "talk"),
            )
            .await,
        );
    }
    // A reader, behind the flood: its whole run arrives.
    let answer = tokio::time::timeout(
        PATIENCE,
        answer(addr, &[("Authorization", BEARER)], &input("reader", "hi")),
    )
    .await
    .expect("the reader was kept out");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("RUN_FINISHED"), "{answer}");
    // Every admitted flood run ended and was saved, though no one read it.
    let mut saved = 0;
    while started.elapsed() < PATIENCE {
        saved = 0;
        for i in 0..FLOOD {
            if threads.load(&format!("f{i}")).await.unwrap().is_some() {
                saved += 1;
            }
        }
        if saved == FLOOD {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        saved, FLOOD,
        "runs whose subscribers never read were held up"
    );
    drop(flood);
}
