//! A [`Failover`] over providers of different wire formats, each a real HTTP server on loopback
//! with scripted faults in that API's own error shapes: what each error class does (move on at
//! once, after the provider's retries, to a larger context window, or stop), a stream that
//! already began, circuit breakers that skip a failing provider, and which provider answered.

use std::time::Duration;

use agent_core::RetryPolicy;
use agent_llm::{
    AnthropicProvider, BreakerPolicy, BreakerState, ChatRequest, ErrorClass, Failover,
    GeminiProvider, LlmProvider, Message, OpenAiProvider, ProviderError, StreamEvent,
};
use serde_json::json;

use crate::server::{End, Reply, Server, fixture};
use crate::{done, drain};

fn quick(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_delay: Duration::from_millis(5),
        backoff: 2.0,
        max_delay: Duration::from_secs(1),
    }
}

fn anthropic(server: &Server) -> AnthropicProvider {
    AnthropicProvider::new("k", "claude-sonnet-4-5")
        .with_base_url(&server.url)
        .with_retry(quick(3))
}

fn openai(server: &Server) -> OpenAiProvider {
    OpenAiProvider::new("k", "gpt-4.1")
        .with_base_url(format!("{}/v1", server.url))
        .with_retry(quick(3))
}

fn gemini(server: &Server) -> GeminiProvider {
    GeminiProvider::new("k", "gemini-2.5-pro")
        .with_base_url(&server.url)
        .with_retry(quick(3))
}

/// An error in Anthropic's shape.
fn anthropic_error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

/// An error in OpenAI's shape.
fn openai_error(status: u16, code: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"error": {"message": message, "type": "invalid_request_error", "param": "messages", "code": code}}),
    )
}

/// A whole OpenAI answer, without the model's name (the failover names it).
fn openai_text(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        }),
    )
}

/// A whole Gemini answer.
fn gemini_text(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 4, "totalTokenCount": 24},
            "modelVersion": "gemini-2.5-pro", "responseId": "r1",
        }),
    )
}

/// Anthropic's recorded stream of a text and a tool call.
fn anthropic_stream() -> Reply {
    Reply::sse(&fixture(
        "anthropic_stream_text_then_single_tool_use_partial_json.sse",
    ))
}

/// The moves to another provider a stream announced: each one's error text.
fn moves(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retry { error, delay, .. } if error.contains(" instead") => {
                assert_eq!(*delay, Duration::ZERO);
                Some(error.clone())
            }
            _ => None,
        })
        .collect()
}

fn hi() -> [Message; 1] {
    [Message::user("hi")]
}

#[tokio::test]
async fn a_rate_limit_moves_on_at_once_and_the_answer_names_who_gave_it() {
    let first = Server::start([anthropic_error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
    )
    .with_header("retry-after", "20")])
    .await;
    let second = Server::start([Reply::sse(&fixture(
        "openai_chat_stream_two_parallel_tool_calls_finish_and_usage.sse",
    ))])
    .await;
    let failover = Failover::new(anthropic(&first)).then(openai(&second));
    let transcript = hi();
    let (events, error) = drain(failover.stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        first.received().len(),
        1,
        "not retried: another could answer"
    );
    let moved = moves(&events);
    assert_eq!(moved.len(), 1, "{events:?}");
    assert!(
        moved[0].contains("429 (rate_limit_error)") && moved[0].contains("asking openai (gpt-4.1)"),
        "{moved:?}"
    );
    assert_eq!(second.received()[0].json()["stream"], json!(true));
    let answer = done(&events);
    assert_eq!(answer.message.tool_calls.len(), 2);
    assert_eq!(answer.provider.as_deref(), Some("openai"));
}

#[tokio::test]
async fn an_overload_moves_on_at_once_whole_answers_too() {
    let first = Server::start([anthropic_error(529, "overloaded_error", "Overloaded")]).await;
    let second = Server::start([
        Reply::json(
            503,
            &json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
        ),
    ])
    .await;
    let third = Server::start([openai_text("Fine.")]).await;
    let failover = Failover::new(anthropic(&first))
        .then(gemini(&second))
        .then(openai(&third));
    let transcript = hi();
    let answer = failover
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    assert_eq!(answer.message.content, "Fine.");
    assert_eq!(answer.provider.as_deref(), Some("openai"));
    assert_eq!((first.received().len(), second.received().len()), (1, 1));
}

#[tokio::test]
async fn a_server_error_is_retried_by_the_provider_then_moves_on() {
    let first = Server::start([
        anthropic_error(500, "api_error", "Internal server error"),
        anthropic_error(500, "api_error", "Internal server error"),
        anthropic_error(500, "api_error", "Internal server error"),
    ])
    .await;
    let second = Server::start([openai_text("Recovered.")]).await;
    let failover = Failover::new(anthropic(&first)).then(openai(&second));
    let transcript = hi();
    let request = ChatRequest::new(&transcript);
    let (events, error) = drain(failover.complete_events(&request)).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        first.received().len(),
        3,
        "the provider's own three attempts"
    );
    let retried = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Retry { error, .. } if !error.contains(" instead")))
        .count();
    assert_eq!(retried, 2, "the provider's retries reach the caller too");
    assert_eq!(moves(&events).len(), 1);
    let answer = done(&events);
    assert_eq!(answer.message.content, "Recovered.");
    assert_eq!(answer.provider.as_deref(), Some("openai"));
    assert_eq!(
        answer.model.as_deref(),
        Some("gpt-4.1"),
        "the answer named none"
    );
}

#[tokio::test]
async fn the_last_provider_left_waits_out_a_rate_limit_itself() {
    let first = Server::start([anthropic_error(529, "overloaded_error", "Overloaded")]).await;
    let second = Server::start([
        openai_error(429, "rate_limit_exceeded", "Rate limit reached for gpt-4.1")
            .with_header("retry-after-ms", "20"),
        openai_text("Patience."),
    ])
    .await;
    let failover = Failover::new(anthropic(&first)).then(openai(&second));
    let transcript = hi();
    let request = ChatRequest::new(&transcript);
    let (events, error) = drain(failover.complete_events(&request)).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        second.received().len(),
        2,
        "no other left: it waited and asked again"
    );
    assert!(events.iter().any(
        |e| matches!(e, StreamEvent::Retry { delay, .. } if *delay == Duration::from_millis(20))
    ));
    assert_eq!(done(&events).message.content, "Patience.");
}

#[tokio::test]
async fn a_context_too_long_goes_to_a_larger_window_and_skips_smaller_ones() {
    let first = Server::start([anthropic_error(
        400,
        "invalid_request_error",
        "prompt is too long: 208310 tokens > 200000 maximum",
    )])
    .await;
    let smaller = Server::start([openai_text("never asked")]).await;
    let larger = Server::start([gemini_text("A long read.")]).await;
    let failover = Failover::new(anthropic(&first))
        .context_window(200_000)
        .then(openai(&smaller))
        .context_window(128_000)
        .then(gemini(&larger))
        .context_window(1_048_576);
    let transcript = hi();
    let request = ChatRequest::new(&transcript);
    let (events, error) = drain(failover.complete_events(&request)).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(first.received().len(), 1, "a 400 is not retried");
    assert_eq!(smaller.received().len(), 0, "its window is smaller");
    assert_eq!(larger.received().len(), 1);
    assert_eq!(done(&events).provider.as_deref(), Some("gemini"));
    assert!(moves(&events)[0].contains("prompt is too long"));
}

#[tokio::test]
async fn a_context_too_long_with_no_larger_window_is_returned() {
    let first = Server::start([openai_error(
        400,
        "context_length_exceeded",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
    )])
    .await;
    let undeclared = Server::start([gemini_text("never asked")]).await;
    let failover = Failover::new(openai(&first))
        .context_window(128_000)
        .then(gemini(&undeclared));
    let transcript = hi();
    let error = failover
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err();
    assert_eq!(
        ErrorClass::of(&error),
        ErrorClass::ContextTooLong,
        "{error}"
    );
    assert!(error.to_string().contains("maximum context length"));
    assert_eq!(
        undeclared.received().len(),
        0,
        "no declared window is larger"
    );
    // And the breaker did not count it: the provider answered.
    assert_eq!(failover.states()[0].2, BreakerState::Closed);
}

#[tokio::test]
async fn a_refused_key_or_a_bad_request_stops_as_it_is() {
    for (reply, class) in [
        (
            anthropic_error(401, "authentication_error", "invalid x-api-key"),
            ErrorClass::Auth,
        ),
        (
            anthropic_error(
                403,
                "permission_error",
                "Your API key does not have permission",
            ),
            ErrorClass::Auth,
        ),
        (
            anthropic_error(400, "invalid_request_error", "max_tokens: must be positive"),
            ErrorClass::BadRequest,
        ),
    ] {
        let first = Server::start([reply]).await;
        let second = Server::start([openai_text("never asked")]).await;
        let failover = Failover::new(anthropic(&first)).then(openai(&second));
        let transcript = hi();
        let (events, error) = drain(failover.stream(&ChatRequest::new(&transcript))).await;
        let error = error.expect("it stops");
        assert_eq!(ErrorClass::of(&error), class, "{error}");
        assert!(
            matches!(&error, ProviderError::Api { provider, .. } if provider == "anthropic"),
            "returned as it is: {error:?}"
        );
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(second.received().len(), 0);
    }
}

#[tokio::test]
async fn a_stream_that_began_is_not_asked_again_elsewhere() {
    let text = fixture("anthropic_stream_text_then_single_tool_use_partial_json.sse");
    let chunks: Vec<Vec<u8>> = text
        .split_inclusive("\n\n")
        .take(4)
        .map(|c| c.as_bytes().to_vec())
        .collect();
    let first = Server::start([Reply::sse_chunks(chunks, End::Drop)]).await;
    let second = Server::start([openai_text("never asked")]).await;
    let failover = Failover::new(anthropic(&first)).then(openai(&second));
    let transcript = hi();
    let (events, error) = drain(failover.stream(&ChatRequest::new(&transcript))).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::TextDelta(_))),
        "{events:?}"
    );
    assert!(error.is_some(), "the break ends the answer");
    assert_eq!(second.received().len(), 0);
    assert!(moves(&events).is_empty());
}

#[tokio::test]
async fn a_failing_provider_is_skipped_once_its_breaker_opens() {
    let overloaded = || anthropic_error(529, "overloaded_error", "Overloaded");
    let first = Server::start([overloaded(), overloaded()]).await;
    let second =
        Server::start([openai_text("one"), openai_text("two"), openai_text("three")]).await;
    let failover = Failover::new(anthropic(&first))
        .then(openai(&second))
        .breaker(BreakerPolicy {
            failures: 2,
            cool_down: Duration::from_secs(3600),
        });
    let transcript = hi();
    for expected in ["one", "two", "three"] {
        let answer = failover
            .complete(&ChatRequest::new(&transcript))
            .await
            .unwrap();
        assert_eq!(answer.message.content, expected);
    }
    assert_eq!(
        first.received().len(),
        2,
        "skipped after its second failure"
    );
    let states = failover.states();
    assert!(
        matches!(states[0].2, BreakerState::Open { remaining } if remaining > Duration::from_secs(3500)),
        "{states:?}"
    );
    assert_eq!(states[1].2, BreakerState::Closed);
}

#[tokio::test]
async fn when_every_breaker_is_open_the_answer_says_when_to_come_back() {
    let first = Server::start([anthropic_error(529, "overloaded_error", "Overloaded")]).await;
    let second =
        Server::start([openai_error(500, "server_error", "The server had an error")]).await;
    let failover = Failover::new(anthropic(&first).with_retry(quick(1)))
        .then(openai(&second).with_retry(quick(1)))
        .breaker(BreakerPolicy {
            failures: 1,
            cool_down: Duration::from_secs(600),
        });
    let transcript = hi();
    let last = failover
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err();
    assert!(
        last.to_string().contains("openai API error 500"),
        "the last failure: {last}"
    );
    let error = failover
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err();
    let ProviderError::Api {
        provider,
        status,
        error_type,
        retry_after,
        message,
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!((provider.as_str(), *status), ("failover", 503));
    assert_eq!(error_type.as_deref(), Some("circuit_open"));
    assert!(
        retry_after.is_some_and(|r| r <= Duration::from_secs(600) && r > Duration::from_secs(590))
    );
    assert!(
        message.contains("anthropic (claude-sonnet-4-5)"),
        "{message}"
    );
    assert_eq!(
        ErrorClass::of(&error),
        ErrorClass::Overloaded,
        "a failover in a failover moves on"
    );
    assert_eq!((first.received().len(), second.received().len()), (1, 1));
}

#[tokio::test]
async fn an_answer_through_a_stream_that_began_with_the_primary_is_its_own() {
    let first = Server::start([anthropic_stream()]).await;
    let second = Server::start([openai_text("never asked")]).await;
    let failover = Failover::new(anthropic(&first)).then(openai(&second));
    let transcript = hi();
    let (events, error) = drain(failover.stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let answer = done(&events);
    assert_eq!(answer.provider.as_deref(), Some("anthropic"));
    assert_eq!(answer.message.tool_calls.len(), 1);
    assert!(moves(&events).is_empty());
}
