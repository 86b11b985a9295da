//! Gemini's errors and faults over loopback, as the other providers have them: 429 with
//! `retry-after` (or Google's `RetryInfo`), 5xx retried, 400 (a recorded one) and 404 not,
//! streams cut mid-way or ended early, errors and garbage inside a stream.

use std::time::Duration;

use agent_core::RetryPolicy;
use agent_llm::{ChatRequest, GeminiProvider, LlmProvider, Message, ProviderError, StreamEvent};
use serde_json::json;

use crate::gemini::{cassette, recorded_stream, stream_reply};
use crate::server::{End, Reply, Server};
use crate::{done, drain};

fn quick_retries(server: &Server) -> GeminiProvider {
    GeminiProvider::new("k", "gemini-2.0-flash-exp")
        .with_base_url(format!("{}/v1beta", server.url))
        .with_retry(RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(10),
            backoff: 2.0,
            // Above the `retry-after`s the tests ask for, which are waited up to it.
            max_delay: Duration::from_secs(1),
        })
}

/// The recorded stream of a text answer in three events.
fn ok_stream_body() -> String {
    recorded_stream(
        &cassette("gemini_vcr_stream_text_system_instruction.yaml"),
        0,
    )
}

fn ok_stream() -> Reply {
    stream_reply(&ok_stream_body())
}

/// An error in Google's shape.
fn google_error(status: u16, name: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"error": {"code": status, "message": message, "status": name}}),
    )
}

fn retries(events: &[StreamEvent]) -> Vec<(u32, Duration, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retry {
                attempt,
                delay,
                error,
            } => Some((*attempt, *delay, error.clone())),
            _ => None,
        })
        .collect()
}

fn hi() -> [Message; 1] {
    [Message::user("hi")]
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_once_after_the_requested_wait() {
    let server = Server::start([
        google_error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted")
            .with_header("retry-after", "1"),
        ok_stream(),
    ])
    .await;
    let transcript = hi();
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let retried = retries(&events);
    assert_eq!(retried.len(), 1);
    assert_eq!((retried[0].0, retried[0].1), (1, Duration::from_secs(1)));
    assert!(
        retried[0].2.contains("429 (RESOURCE_EXHAUSTED)"),
        "{}",
        retried[0].2
    );
    assert_eq!(
        done(&events).message.content,
        "The capital of France is Paris.\n"
    );
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn a_429_whose_body_says_when_to_retry_waits_that_long() {
    let body = json!({"error": {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generate_content_free_tier_requests"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.25s"},
        ],
    }});
    let server = Server::start([Reply::json(429, &body), ok_stream()]).await;
    let transcript = hi();
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let retried = retries(&events);
    assert_eq!(retried.len(), 1);
    assert_eq!(retried[0].1, Duration::from_millis(250));
}

/// Google's `RetryInfo` may ask for more than the retry policy's longest wait (34.4 s, where
/// the default policy waits at most 30 s): the policy's maximum wins. The delay is announced
/// before the wait, so the test reads it and goes no further.
#[tokio::test]
async fn a_retry_delay_above_the_policys_maximum_is_cut_to_it() {
    let body = json!({"error": {
        "code": 429,
        "message": "Resource has been exhausted (e.g. check quota).",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"},
        ],
    }});
    let server = Server::start([Reply::json(429, &body), ok_stream()]).await;
    let gemini = GeminiProvider::new("k", "m").with_base_url(format!("{}/v1beta", server.url));
    let transcript = hi();
    let mut stream = gemini.stream(&ChatRequest::new(&transcript));
    let first = futures::StreamExt::next(&mut stream)
        .await
        .unwrap()
        .unwrap();
    let StreamEvent::Retry { delay, error, .. } = first else {
        panic!("a retry first: {first:?}");
    };
    assert_eq!(delay, Duration::from_secs(30), "{error}");
    assert_eq!(
        agent_llm::HttpOptions::default().retry.max_delay,
        Duration::from_secs(30)
    );
}

#[tokio::test]
async fn a_503_twice_then_success_is_retried_twice_and_a_500_too() {
    let server = Server::start([
        google_error(
            503,
            "UNAVAILABLE",
            "The model is overloaded. Please try again later.",
        ),
        google_error(500, "INTERNAL", "An internal error has occurred."),
        ok_stream(),
    ])
    .await;
    let transcript = hi();
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let attempts: Vec<u32> = retries(&events).iter().map(|r| r.0).collect();
    assert_eq!(attempts, [1, 2]);
    assert!(retries(&events)[0].2.contains("UNAVAILABLE"));
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn a_recorded_400_is_not_retried_and_keeps_googles_words() {
    let cassette = cassette("gemini_vcr_vertex_http_400_invalid_argument.yaml");
    let recorded = &cassette["interactions"][2]["response"];
    assert_eq!(recorded["status"]["code"], 400);
    let server = Server::start([Reply::json(400, &recorded["parsed_body"]), ok_stream()]).await;
    let transcript = hi();
    let error = quick_retries(&server)
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with(
            "gemini API error 400 (INVALID_ARGUMENT): Cannot fetch content from the provided URL."
        ),
        "{text}"
    );
    assert_eq!(server.received().len(), 1);
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn a_404_says_the_base_url_likely_lacks_the_api_version() {
    let server = Server::start([google_error(404, "NOT_FOUND", "Not Found")]).await;
    let gemini = GeminiProvider::new("k", "m").with_base_url(&server.url);
    let error = gemini.complete(&ChatRequest::new(&hi())).await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("404 (NOT_FOUND): Not Found"), "{text}");
    assert!(text.contains(&format!("`{}/v1beta`", server.url)), "{text}");
}

fn first_events(n: usize) -> Vec<Vec<u8>> {
    ok_stream_body()
        .split_inclusive("\r\n\r\n")
        .take(n)
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_an_error_and_is_not_replayed() {
    let server = Server::start([Reply::sse_chunks(first_events(2), End::Drop), ok_stream()]).await;
    let transcript = hi();
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(
        matches!(error, Some(ProviderError::Stream { .. })),
        "{error:?}"
    );
    let texts: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .collect();
    assert_eq!(texts.len(), 2, "the events before the break were delivered");
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_stream_that_ends_without_a_finish_reason_is_an_error() {
    let server = Server::start([Reply::sse_chunks(first_events(2), End::Finish)]).await;
    let (_, error) = drain(quick_retries(&server).stream(&ChatRequest::new(&hi()))).await;
    match error {
        Some(ProviderError::Stream { message, .. }) => {
            assert!(message.contains("no `finishReason`"), "{message}")
        }
        other => panic!("expected a stream error, got {other:?}"),
    }
    let server = Server::start([Reply::sse_chunks(Vec::new(), End::Finish)]).await;
    let (_, error) = drain(quick_retries(&server).stream(&ChatRequest::new(&hi()))).await;
    match error {
        Some(ProviderError::Stream { message, .. }) => {
            assert!(message.contains("before any data"), "{message}")
        }
        other => panic!("expected a stream error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_error_inside_a_stream_after_http_200_is_a_stream_error_in_googles_words() {
    let mut chunks = first_events(1);
    chunks.push(
        b"data: {\"error\": {\"code\": 500, \"message\": \"An internal error has occurred.\", \"status\": \"INTERNAL\"}}\r\n\r\n".to_vec(),
    );
    let server = Server::start([Reply::sse_chunks(chunks, End::Finish)]).await;
    let (events, error) = drain(quick_retries(&server).stream(&ChatRequest::new(&hi()))).await;
    match error {
        Some(ProviderError::Stream {
            error_type,
            message,
            ..
        }) => assert_eq!(
            (error_type.as_deref(), message.as_str()),
            (Some("INTERNAL"), "An internal error has occurred.")
        ),
        other => panic!("expected a stream error, got {other:?}"),
    }
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count(),
        1
    );
    assert_eq!(server.received().len(), 1, "not replayed");
}

#[tokio::test]
async fn garbage_in_a_stream_or_a_whole_answer_is_a_decode_error() {
    let mut chunks = first_events(1);
    chunks.push(b"data: {\"candidates\": [\r\n\r\n".to_vec());
    let server = Server::start([
        Reply::sse_chunks(chunks, End::Finish),
        Reply::Full {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: b"<html>proxy error</html>".to_vec(),
        },
        Reply::json(200, &json!({"usageMetadata": {"promptTokenCount": 1}})),
        Reply::json(200, &json!(["not", "an", "answer"])),
    ])
    .await;
    let gemini = quick_retries(&server);
    let transcript = hi();
    let request = ChatRequest::new(&transcript);
    let (_, error) = drain(gemini.stream(&request)).await;
    match error {
        Some(ProviderError::Decode { provider, message }) => {
            assert_eq!(provider, "gemini");
            assert!(message.starts_with("a chunk is not JSON"), "{message}");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    for expected in [
        "the answer is not JSON",
        "no `candidates` in the answer",
        "not a JSON object",
    ] {
        match gemini.complete(&request).await {
            Err(ProviderError::Decode { message, .. }) => {
                assert!(message.contains(expected), "{message}")
            }
            other => panic!("expected a decode error, got {other:?}"),
        }
    }
}
