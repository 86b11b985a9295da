use std::time::Duration;

use agent_core::RetryPolicy;
use agent_llm::{
    AnthropicProvider, ChatRequest, HttpOptions, LlmProvider, Message, ProviderError, StreamEvent,
};
use serde_json::json;

use crate::server::{End, Reply, Server, fixture};
use crate::{done, drain, retries};

fn quick_retries(server: &Server) -> AnthropicProvider {
    AnthropicProvider::new("k", "m")
        .with_base_url(&server.url)
        .with_retry(RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(10),
            backoff: 2.0,
            // Above the `retry-after`s the tests ask for, which are waited up to it.
            max_delay: Duration::from_secs(1),
        })
}

fn ok_stream() -> Reply {
    Reply::sse(&fixture(
        "anthropic_stream_text_then_single_tool_use_partial_json.sse",
    ))
}

fn api_error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_once_after_the_requested_wait() {
    let server = Server::start([
        api_error(429, "rate_limit_error", "slow down").with_header("retry-after", "1"),
        ok_stream(),
    ])
    .await;
    let transcript = [Message::user("hi")];
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(retries(&events), [(1, Duration::from_secs(1))]);
    assert_eq!(server.received().len(), 2);
    assert_eq!(done(&events).message.tool_calls.len(), 1);
}

#[tokio::test]
async fn a_529_twice_then_success_is_retried_twice() {
    let server = Server::start([
        api_error(529, "overloaded_error", "Overloaded"),
        api_error(529, "overloaded_error", "Overloaded"),
        ok_stream(),
    ])
    .await;
    let transcript = [Message::user("hi")];
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let attempts: Vec<u32> = retries(&events).iter().map(|r| r.0).collect();
    assert_eq!(attempts, [1, 2]);
    assert!(events.iter().any(
        |e| matches!(e, StreamEvent::Retry { error, .. } if error.contains("overloaded_error"))
    ));
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn a_400_is_not_retried_and_keeps_the_providers_words() {
    let server = Server::start([
        api_error(400, "invalid_request_error", "max_tokens: must be positive"),
        ok_stream(),
    ])
    .await;
    let transcript = [Message::user("hi")];
    let error = quick_retries(&server)
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "anthropic API error 400 (invalid_request_error): max_tokens: must be positive"
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_spending_cap_429_without_retry_after_is_final() {
    let server = Server::start([
        Reply::json(429, &json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}})),
        ok_stream(),
    ])
    .await;
    let transcript = [Message::user("hi")];
    let (_, error) = drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(
        matches!(error, Some(ProviderError::Api { status: 429, .. })),
        "{error:?}"
    );
    assert_eq!(server.received().len(), 1);
    assert_eq!(
        server.remaining(),
        1,
        "the success after it was never asked for"
    );
}

#[tokio::test]
async fn a_connection_closed_before_any_answer_is_retried() {
    let server = Server::start([Reply::Hangup, ok_stream()]).await;
    let transcript = [Message::user("hi")];
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(retries(&events).len(), 1);
    assert_eq!(done(&events).stop_reason, agent_llm::StopReason::ToolUse);
}

fn first_events() -> Vec<Vec<u8>> {
    fixture("anthropic_stream_text_then_single_tool_use_partial_json.sse")
        .split_inclusive("\n\n")
        .take(5)
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_an_error_not_a_hang_and_is_not_replayed() {
    let server = Server::start([Reply::sse_chunks(first_events(), End::Drop), ok_stream()]).await;
    let transcript = [Message::user("hi")];
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(
        matches!(error, Some(ProviderError::Stream { .. })),
        "{error:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::TextDelta(_))),
        "events before the break were delivered"
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_stream_that_ends_without_message_stop_is_an_error() {
    let server = Server::start([Reply::sse_chunks(first_events(), End::Finish)]).await;
    let transcript = [Message::user("hi")];
    let (_, error) = drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    match error {
        Some(ProviderError::Stream { message, .. }) => assert!(
            message.contains("before the message was complete"),
            "{message}"
        ),
        other => panic!("expected a stream error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out_with_a_clear_error() {
    let server = Server::start([Reply::sse_chunks(first_events(), End::Stall)]).await;
    let options = HttpOptions {
        idle_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    };
    let provider = AnthropicProvider::new("k", "m")
        .with_base_url(&server.url)
        .with_http_options(options);
    let transcript = [Message::user("hi")];
    let (_, error) = drain(provider.stream(&ChatRequest::new(&transcript))).await;
    match error {
        Some(ProviderError::Stream { message, .. }) => {
            assert!(message.contains("stalled"), "{message}")
        }
        other => panic!("expected a stall error, got {other:?}"),
    }
}

#[tokio::test]
async fn retries_stop_at_the_limit_with_the_last_error() {
    let server = Server::start((0..5).map(|_| api_error(503, "api_error", "unavailable"))).await;
    let transcript = [Message::user("hi")];
    let (events, error) =
        drain(quick_retries(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(
        matches!(error, Some(ProviderError::Api { status: 503, .. })),
        "{error:?}"
    );
    assert_eq!(retries(&events).len(), 3);
    assert_eq!(server.received().len(), 4);
}

#[tokio::test]
async fn a_whole_answer_that_stalls_mid_body_is_an_error_not_a_hang() {
    let server = Server::start([Reply::Chunked {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        chunks: vec![b"{\"id\": \"msg_1\", \"type\": \"message\", \"content\": [".to_vec()],
        end: End::Stall,
    }])
    .await;
    let options = HttpOptions {
        idle_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    };
    let provider = AnthropicProvider::new("k", "m")
        .with_base_url(&server.url)
        .with_http_options(options);
    let transcript = [Message::user("hi")];
    // The outer limit only turns a hang into a failure; it is not what is tested.
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        provider.complete(&ChatRequest::new(&transcript)),
    )
    .await
    .expect("complete() hung on a stalled body");
    match result {
        Err(ProviderError::Stream { message, .. }) => {
            assert!(message.contains("stalled"), "{message}")
        }
        other => panic!("expected a stall error, got {other:?}"),
    }
}

#[tokio::test]
async fn every_retry_of_a_whole_answer_is_announced_as_it_happens() {
    let server = Server::start([
        api_error(529, "overloaded_error", "busy"),
        api_error(503, "api_error", "unavailable"),
        Reply::json(
            200,
            &json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                    "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 3, "output_tokens": 1}}),
        ),
    ])
    .await;
    let provider = quick_retries(&server);
    let transcript = [Message::user("hi")];
    let request = ChatRequest::new(&transcript);
    let (events, error) = drain(provider.complete_events(&request)).await;
    assert!(error.is_none(), "{error:?}");
    let announced: Vec<u32> = retries(&events)
        .iter()
        .map(|(attempt, _)| *attempt)
        .collect();
    assert_eq!(announced, [1, 2], "{events:?}");
    let errors: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retry { error, .. } => Some(error),
            _ => None,
        })
        .collect();
    assert!(
        errors[0].contains("529") && errors[0].contains("busy"),
        "{errors:?}"
    );
    assert_eq!(done(&events).message.content, "hello");
    assert_eq!(events.len(), 3, "retries then Done, no deltas: {events:?}");
    assert_eq!(server.received().len(), 3);
    for request in server.received() {
        assert_ne!(
            request.json()["stream"],
            json!(true),
            "a whole answer is asked for"
        );
    }
}

#[tokio::test]
async fn an_error_whose_message_is_empty_says_what_the_server_sent() {
    let server = Server::start([
        Reply::json(
            400,
            &json!({"error": {"message": "", "type": "invalid_request_error"}}),
        ),
        Reply::Chunked {
            status: 400,
            headers: Vec::new(),
            chunks: Vec::new(),
            end: End::Finish,
        },
    ])
    .await;
    let provider = quick_retries(&server);
    let transcript = [Message::user("hi")];
    let request = ChatRequest::new(&transcript);
    let empty_message = provider.complete(&request).await.unwrap_err().to_string();
    assert!(
        empty_message.contains("invalid_request_error")
            && empty_message.contains("the server sent no message; its body was: {"),
        "{empty_message}"
    );
    assert!(!empty_message.trim_end().ends_with(':'), "{empty_message}");
    let empty_body = provider.complete(&request).await.unwrap_err().to_string();
    assert!(
        empty_body.ends_with("400: the server sent an empty body"),
        "{empty_body}"
    );
}
