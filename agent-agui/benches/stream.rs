//! A watched run's events streamed to a reader over the AG-UI endpoint, measured.
//!
//! - `agui/run alone`: the floor, a run whose model streams 2,000 pieces of text, with a sink
//!   that does nothing (the runtime's own cost of the events).
//! - `agui/run watched over HTTP`: the same run started by a `POST /agui` on loopback through the
//!   edge (token, admission), every AG-UI event written as SSE and read to the end by the client.
//!
//! Pieces a second = the 2,000 pieces of text delivered (checked whole) divided by the watched
//! run's time; the ratio to the floor is what watching costs. The events read are printed: pieces
//! a reader fell behind on arrive joined, so there are fewer events than pieces when the reader
//! is slower than the run. (That a reader that never reads does not hold the run up is a test:
//! `tests/edge_attacks.rs`.)
//!
//! `cargo bench -p agent-agui --bench stream` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_agui::AguiServer;
use agent_core::Registry;
use agent_llm::llm::{EventStream, LlmProvider, ProviderError, StreamEvent};
use agent_llm::{ChatRequest, ChatResponse, Message, StopReason, Usage};
use agent_runtime::AgentRuntime;
use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "agui-bench-token-0123456789abcdef";
const PIECES: usize = 2_000;

/// A model that answers every request with the same text, streamed in `PIECES` pieces.
struct Chatty;

fn answer() -> ChatResponse {
    ChatResponse {
        message: Message::assistant("word ".repeat(PIECES)),
        stop_reason: StopReason::EndTurn,
        provider_stop_reason: None,
        usage: Usage::default(),
        truncated_tool_calls: Vec::new(),
        model: Some("chatty".into()),
        provider: None,
        id: None,
    }
}

#[async_trait]
impl LlmProvider for Chatty {
    fn name(&self) -> &str {
        "chatty"
    }

    async fn complete(&self, _request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        Ok(answer())
    }

    fn stream(&self, _request: &ChatRequest<'_>) -> EventStream {
        let mut events: Vec<Result<StreamEvent, ProviderError>> = (0..PIECES)
            .map(|_| Ok(StreamEvent::TextDelta("word ".into())))
            .collect();
        events.push(Ok(StreamEvent::Done(answer())));
        Box::pin(futures::stream::iter(events))
    }
}

fn runtime() -> AgentRuntime {
    AgentRuntime::new(Chatty, Registry::new()).streaming(true)
}

/// Starts a run on a new thread and reads its whole event stream; the events read (pieces the
/// reader fell behind on arrive joined: fewer events, the same text, checked whole).
async fn watched(addr: SocketAddr, thread: usize) -> usize {
    let body = format!(
        r#"{{"threadId":"t{thread}","runId":"r{thread}","messages":[{{"id":"u","role":"user","content":"Talk."}}]}}"#
    );
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        agent_agui::AGUI_PATH,
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut read = Vec::new();
    stream.read_to_end(&mut read).await.unwrap();
    let text = String::from_utf8_lossy(&read);
    assert!(text.contains("RUN_FINISHED"), "the run ends on the stream");
    let words: usize = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| data.contains("TEXT_MESSAGE_CONTENT"))
        .map(|data| data.matches("word ").count())
        .sum();
    assert_eq!(words, PIECES, "the whole text arrives");
    text.matches("\ndata: ").count() + usize::from(text.starts_with("data: "))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let addr = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            AguiServer::new(runtime())
                .bearer_token(TOKEN)
                .serve(listener)
                .await
                .expect("serves");
        });
        addr
    });
    let thread = AtomicUsize::new(0);
    let events = rt.block_on(watched(addr, thread.fetch_add(1, Ordering::Relaxed)));

    let mut group = c.benchmark_group("agui");
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(3))
            .sample_size(10);
    }
    let alone = runtime().event_sink(|_: &agent_runtime::AgentEvent| {});
    group.bench_function("run alone", |b| {
        b.iter(|| rt.block_on(async { black_box(alone.run("Talk.").await.unwrap()) }))
    });
    group.bench_function("run watched over HTTP", |b| {
        b.iter(|| rt.block_on(watched(addr, thread.fetch_add(1, Ordering::Relaxed))))
    });
    group.finish();
    let samples: Vec<usize> = (0..20)
        .map(|_| rt.block_on(watched(addr, thread.fetch_add(1, Ordering::Relaxed))))
        .collect();
    eprintln!(
        "events read per watched run: first {events}, then {:?}",
        samples
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
