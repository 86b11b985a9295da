//! The wire as `tracing` events of target `agent_llm::wire`: what a request and its answer were,
//! with the key never shown (at any level), bodies clipped, and retries as warnings.
//!
//! A binary of its own with one test: the capturing subscriber is the process's global default,
//! so no other test's thread can make tracing cache "nobody listens" for these call sites first.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::RetryPolicy;
use agent_llm::{ChatRequest, LlmProvider, Message, OpenAiProvider, WIRE};
use serde_json::json;
use test_support::traced::TextFields;
use tracing_subscriber::layer::{Context, SubscriberExt};

use agent_llm::all_events as drain;
use test_support::server::{Reply, Server};

/// One captured event: its target, level and every field as text.
#[derive(Debug, Clone)]
struct Captured {
    target: String,
    level: tracing::Level,
    fields: Vec<(String, String)>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A layer that keeps every event.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut fields = Vec::new();
        event.record(&mut TextFields(&mut fields));
        self.0.lock().unwrap().push(Captured {
            target: event.metadata().target().to_owned(),
            level: *event.metadata().level(),
            fields,
        });
    }
}

const KEY: &str = "sk-test-4f1c9d2e7a";

fn answer(text: &str) -> serde_json::Value {
    json!({"id": "c", "model": "m", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1}})
}

#[tokio::test]
async fn requests_and_answers_are_traced_with_the_key_redacted_and_bodies_clipped() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(capture.clone()))
        .expect("the only subscriber of this process");
    let server = Server::start([
        Reply::json(503, &json!({"error": {"message": "try later", "type": "server_error"}})),
        Reply::json(200, &answer("hello")),
        Reply::sse(&format!(
            "data: {}\n\ndata: [DONE]\n\n",
            json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "streamed"}, "finish_reason": "stop"}]})
        )),
    ])
    .await;
    let provider = OpenAiProvider::new(KEY, "m")
        .with_base_url(format!("{}/v1", server.url))
        .with_retry(RetryPolicy {
            max_attempts: 3,
            initial_delay: Duration::from_millis(5),
            backoff: 1.0,
            max_delay: Duration::from_millis(5),
        });
    let long = "x".repeat(10_000);
    let transcript = [Message::user(&long)];
    let request = ChatRequest::new(&transcript);
    let whole = provider.complete(&request).await.unwrap();
    assert_eq!(whole.message.content, "hello");
    let (_, error) = drain(provider.stream(&request)).await;
    assert!(error.is_none(), "{error:?}");

    let events = capture.0.lock().unwrap().clone();
    let wire: Vec<&Captured> = events.iter().filter(|e| e.target == WIRE).collect();
    let named = |message: &str| -> Vec<&Captured> {
        wire.iter()
            .copied()
            .filter(|e| e.field("message") == Some(message))
            .collect()
    };
    // Three requests: the failed attempt, its retry, the streamed one.
    let requests = named("request");
    assert_eq!(requests.len(), 3, "{wire:#?}");
    assert!(requests.iter().all(|e| e.level == tracing::Level::DEBUG));
    assert!(
        requests[0]
            .field("url")
            .unwrap()
            .ends_with("/v1/chat/completions")
    );
    let statuses: Vec<&str> = named("response")
        .iter()
        .filter_map(|e| e.field("status"))
        .collect();
    assert_eq!(statuses, ["503", "200", "200"]);
    let error_body = named("error body");
    assert!(error_body[0].field("body").unwrap().contains("try later"));

    // Bodies at trace level, clipped: the 10,000 characters of the question are not all there.
    let bodies = named("request body");
    assert_eq!(bodies.len(), 3);
    let body = bodies[0].field("body").unwrap();
    assert!(body.contains("more characters"), "{}", &body[..200]);
    assert!(body.chars().count() < 4_100, "{}", body.len());
    assert!(
        bodies[0]
            .field("headers")
            .unwrap()
            .contains("authorization: [redacted]")
    );
    assert!(
        named("response body")[0]
            .field("body")
            .unwrap()
            .contains("hello")
    );
    let sse = named("server-sent event");
    assert!(
        sse.iter()
            .any(|e| e.field("data").is_some_and(|d| d.contains("streamed"))),
        "{sse:#?} {wire:#?}"
    );

    // The retry is a warning of the crate's own target, saying what failed.
    let warning = events
        .iter()
        .find(|e| e.level == tracing::Level::WARN)
        .expect("the retry is a warning");
    assert!(
        warning.field("error").unwrap().contains("try later"),
        "{warning:?}"
    );

    // The key appears in no event, at any level.
    for event in &events {
        for (name, value) in &event.fields {
            assert!(!value.contains(KEY), "`{name}` of {event:?} shows the key");
        }
    }
    // It was sent, though: redaction is in the log, not on the wire.
    assert_eq!(
        server.received()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}
