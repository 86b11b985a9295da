//! The Responses API provider against a failing server on loopback: what is retried (429 with
//! `retry-after`, 5xx), what is not (a 400, recorded), and streams that break off.

use std::time::Duration;

use agent_core::RetryPolicy;
use agent_llm::{
    ChatRequest, LlmProvider, Message, OpenAiResponsesProvider, ProviderError, StopReason,
    StreamEvent,
};
use serde_json::json;

use crate::responses::{answer, cassette};
use crate::server::{End, Reply, Server};
use crate::{done, drain, retries};

const TEXT_STREAM: &str = "openai_responses_vcr_stream_tool_call_then_text_roundtrip.yaml";

fn quick_retries(server: &Server) -> OpenAiResponsesProvider {
    OpenAiResponsesProvider::new("k", "m")
        .with_base_url(format!("{}/v1", server.url))
        .with_retry(RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(10),
            backoff: 2.0,
            // Above the `retry-after`s the tests ask for, which are waited up to it.
            max_delay: Duration::from_secs(1),
        })
}

/// The recorded stream of a text answer.
fn ok_stream() -> Reply {
    answer(&cassette(TEXT_STREAM), 1)
}

fn api_error(status: u16, code: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"error": {"message": message, "type": "server_error", "param": null, "code": code}}),
    )
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_once_after_the_requested_wait() {
    let server = Server::start([
        api_error(429, "rate_limit_exceeded", "Rate limit reached").with_header("retry-after", "1"),
        ok_stream(),
    ])
    .await;
    let transcript = [Message::user("hi")];
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(retries(&events), [(1, Duration::from_secs(1))]);
    assert_eq!(server.received().len(), 2);
    assert_eq!(
        done(&events).message.content,
        "The capital of France is Paris."
    );
}

#[tokio::test]
async fn server_errors_are_retried_until_one_answers() {
    let server = Server::start([
        api_error(500, "server_error", "The server had an error"),
        api_error(503, "server_error", "Service unavailable"),
        ok_stream(),
    ])
    .await;
    let transcript = [Message::user("hi")];
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let attempts: Vec<u32> = retries(&events).iter().map(|r| r.0).collect();
    assert_eq!(attempts, [1, 2]);
    assert_eq!(server.received().len(), 3);
    assert_eq!(done(&events).stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn a_recorded_400_is_not_retried_and_keeps_the_apis_words() {
    let recorded = cassette("openai_responses_vcr_http_400_invalid_temperature.yaml");
    let response = &recorded["interactions"][0]["response"];
    let status = response["status"]["code"].as_u64().unwrap() as u16;
    let server = Server::start([Reply::json(status, &response["parsed_body"]), ok_stream()]).await;
    let transcript = [Message::user("hello")];
    let error = quick_retries(&server)
        .complete(&ChatRequest::new(&transcript).temperature(-1.0))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "openai-responses API error 400 (decimal_below_min_value): Invalid 'temperature': \
         decimal below minimum value. Expected a value >= 0, but got -1 instead."
    );
    assert_eq!(server.received().len(), 1);
    assert_eq!(
        server.remaining(),
        1,
        "the success after it was never asked for"
    );
    let sent = server.received()[0].json()["temperature"].as_f64();
    let then = recorded["interactions"][0]["request"]["parsed_body"]["temperature"].as_f64();
    assert_eq!(sent, then, "the value the recorded client sent");
}

/// The recorded text stream's first events: the message has begun, nothing has ended.
fn first_events() -> Vec<Vec<u8>> {
    let cassette = cassette(TEXT_STREAM);
    cassette["interactions"][1]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .split_inclusive("\n\n")
        .take(5)
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_an_error_and_is_not_replayed() {
    let server = Server::start([Reply::sse_chunks(first_events(), End::Drop), ok_stream()]).await;
    let transcript = [Message::user("hi")];
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(
        matches!(error, Some(ProviderError::Stream { .. })),
        "{error:?}"
    );
    assert_eq!(
        events,
        [StreamEvent::TextDelta("The".into())],
        "what came before the break was delivered"
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_stream_that_ends_before_response_completed_is_an_error() {
    let server = Server::start([
        Reply::sse_chunks(first_events(), End::Finish),
        Reply::sse_chunks(Vec::new(), End::Finish),
    ])
    .await;
    let transcript = [Message::user("hi")];
    for expected in ["before `response.completed`", "before any data"] {
        let (_, error) = drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
        match error {
            Some(ProviderError::Stream { message, .. }) => {
                assert!(message.contains(expected), "{message}")
            }
            other => panic!("expected a stream error, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_404_without_the_apis_own_error_says_where_the_requests_went() {
    let server = Server::start([
        Reply::Full {
            status: 404,
            headers: Vec::new(),
            body: b"404 page not found".to_vec(),
        },
        Reply::json(
            404,
            &json!({"error": {"message": "The model `m` does not exist", "type": "invalid_request_error", "code": "model_not_found"}}),
        ),
    ])
    .await;
    let transcript = [Message::user("hi")];
    let request = ChatRequest::new(&transcript);
    let missing = quick_retries(&server).complete(&request).await.unwrap_err();
    assert!(
        missing.to_string().contains(&format!(
            "no Responses API at `{}/v1/responses`",
            server.url
        )),
        "{missing}"
    );
    let model = quick_retries(&server).complete(&request).await.unwrap_err();
    assert!(!model.to_string().contains("no Responses API"), "{model}");
}
