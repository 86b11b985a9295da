//! Replay's matching: what must be equal, which recorded interaction answers, and the report of a
//! request that nothing matched.

use std::time::Duration;

use agent_core::retry::RetryPolicy;
use agent_llm::cassette::{Cassette, CassetteError, MAX_BODY_BYTES, Matcher, ReplayServer};
use agent_llm::{ChatRequest, LlmProvider, Message, ProviderError};
use serde_json::json;

use crate::{KEY, anthropic, anthropic_answer, anthropic_cassette, client};

async fn serve(yaml: &str, matcher: Matcher) -> ReplayServer {
    Cassette::parse("tests/cassettes/test.yaml", yaml)
        .unwrap()
        .serve(matcher)
        .await
        .unwrap()
}

async fn ask(server: &ReplayServer, request: ChatRequest<'_>) -> Result<String, ProviderError> {
    let provider = anthropic(server.base_url(), KEY);
    provider.complete(&request).await.map(|r| r.message.content)
}

/// The message of a `409 cassette_mismatch`.
fn mismatch_message(error: ProviderError) -> String {
    match error {
        ProviderError::Api {
            status: 409,
            error_type: Some(kind),
            message,
            ..
        } if kind == "cassette_mismatch" => message,
        other => panic!("not a cassette mismatch: {other:?}"),
    }
}

#[tokio::test]
async fn a_request_that_matches_nothing_fails_with_what_differs_from_the_closest_recording() {
    let yaml = anthropic_cassette(&[("Say hello.", "Hello!"), ("Count to three.", "1 2 3")]);
    let server = serve(&yaml, Matcher::new()).await;
    let transcript = [Message::user("Say hallo.")];

    let error = ask(&server, ChatRequest::new(&transcript).temperature(0.5))
        .await
        .unwrap_err();
    let message = mismatch_message(error);
    assert!(
        message.contains(
            "no recorded interaction matches POST /v1/messages (cassette \
             tests/cassettes/test.yaml: 2 interaction(s), 2 unused)"
        ),
        "{message}"
    );
    assert!(message.contains("closest: interactions[0]"), "{message}");
    assert!(message.contains("2 difference(s)"), "{message}");
    assert!(
        message.contains(
            r#"body /messages/0/content/0/text: request "Say hallo.", recorded "Say hello.""#
        ),
        "{message}"
    );
    assert!(
        message.contains("body /temperature: only in the request: 0.5"),
        "{message}"
    );

    let mismatches = server.mismatches();
    assert_eq!(mismatches.len(), 1);
    assert_eq!(mismatches[0].closest, Some(0));
    assert_eq!(mismatches[0].method, "POST");
    assert_eq!(mismatches[0].target, "/v1/messages");
    assert_eq!(server.requests()[0].answered_by, None);

    // The test's end reports it, with the interactions nothing used.
    let error = server.verify().unwrap_err();
    let CassetteError::Replay {
        message: report, ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert!(
        report.starts_with("1 request(s) matched no recorded interaction"),
        "{report}"
    );
    assert!(
        report.contains(r#"request "Say hallo.", recorded "Say hello.""#),
        "{report}"
    );
    assert!(
        report.contains("2 of 2 recorded interaction(s) were not used"),
        "{report}"
    );
    assert!(
        report.contains("interactions[1]: POST https://api.anthropic.com/v1/messages"),
        "{report}"
    );
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        server.assert_all_used();
    }))
    .expect_err("assert_all_used panics");
    let said = panicked.downcast_ref::<String>().unwrap();
    assert_eq!(*said, error.to_string());

    // The recorded questions are still answered, whatever order they come in.
    let count = [Message::user("Count to three.")];
    let hello = [Message::user("Say hello.")];
    assert_eq!(
        ask(&server, ChatRequest::new(&count)).await.unwrap(),
        "1 2 3"
    );
    assert_eq!(
        ask(&server, ChatRequest::new(&hello)).await.unwrap(),
        "Hello!"
    );
    assert_eq!(server.unused(), Vec::<usize>::new());
    // The mismatch is still reported.
    assert!(server.verify().is_err());
}

#[tokio::test]
async fn each_recorded_interaction_answers_once_in_the_recorded_order() {
    let yaml = anthropic_cassette(&[("Again?", "first"), ("Again?", "second")]);
    let server = serve(&yaml, Matcher::new()).await;
    let transcript = [Message::user("Again?")];
    assert_eq!(
        ask(&server, ChatRequest::new(&transcript)).await.unwrap(),
        "first"
    );
    assert_eq!(
        ask(&server, ChatRequest::new(&transcript)).await.unwrap(),
        "second"
    );
    server.assert_all_used();
    let message = mismatch_message(
        ask(&server, ChatRequest::new(&transcript))
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("matches, but it answered an earlier request already"),
        "{message}"
    );
    assert!(message.contains("0 unused"), "{message}");
}

#[tokio::test]
async fn json_bodies_match_whatever_their_key_order_and_number_spelling() {
    // vcrpy keeps the body as text; the request sends the same JSON written differently.
    let yaml = r#"
interactions:
- request:
    method: POST
    uri: https://api.example.com/v1/items?a=1&b=2
    body: '{"a": [1, {"x": 1, "y": 2}], "b": 1}'
  response:
    status: {code: 201, message: Created}
    headers: {content-type: [application/json]}
    body: {string: '{"id": 7}'}
- request:
    method: POST
    uri: https://api.example.com/v1/items?a=1&b=2
    body: '{"a": [1, {"x": 1, "y": 2}], "b": 1}'
  response:
    status: {code: 201, message: Created}
    body: {string: 'second'}
"#;
    let server = serve(yaml, Matcher::new()).await;
    let answer = client()
        .post(server.url("/v1/items?b=2&a=1"))
        .body(r#"{"b":1.0,"a":[1,{"y":2,"x":1}]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
    assert_eq!(answer.text().await.unwrap(), r#"{"id": 7}"#);

    // A different number is a difference.
    let answer = client()
        .post(server.url("/v1/items?a=1&b=2"))
        .body(r#"{"a":[1,{"x":1,"y":2.5}],"b":1}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 409);
    let body: serde_json::Value = serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("body /a/1/y: request 2.5, recorded 2"),
        "{message}"
    );
}

#[tokio::test]
async fn the_method_path_query_and_the_headers_asked_for_are_compared() {
    let yaml = r#"
interactions:
- request:
    method: POST
    uri: https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse&key=[redacted]
    headers:
      anthropic-version: ['2023-06-01']
      x-api-key: ['[redacted]']
    body: 'hello'
  response:
    status: {code: 200, message: OK}
    body: {string: 'answered'}
"#;
    let matcher = Matcher::new()
        .header("Anthropic-Version")
        .header("x-api-key");
    let server = serve(yaml, matcher).await;
    let path = "/v1beta/models/m:streamGenerateContent";
    let send =
        |method: reqwest::Method, target: String, version: Option<&'static str>, key: bool| {
            let mut request = client().request(method, server.url(&target)).body("hello");
            if let Some(version) = version {
                request = request.header("anthropic-version", version);
            }
            if key {
                request = request.header("x-api-key", "any-key-at-all-123");
            }
            async move {
                let answer = request.send().await.unwrap();
                let status = answer.status().as_u16();
                (status, answer.text().await.unwrap())
            }
        };
    let cases = [
        (
            send(
                reqwest::Method::PUT,
                format!("{path}?alt=sse&key=k"),
                Some("2023-06-01"),
                true,
            )
            .await,
            "method: request PUT, recorded POST",
        ),
        (
            send(
                reqwest::Method::POST,
                "/v1beta/models/other:streamGenerateContent?alt=sse&key=k".into(),
                Some("2023-06-01"),
                true,
            )
            .await,
            "path: request /v1beta/models/other:streamGenerateContent, recorded /v1beta/models/m:streamGenerateContent",
        ),
        (
            send(
                reqwest::Method::POST,
                format!("{path}?alt=json&key=k"),
                Some("2023-06-01"),
                true,
            )
            .await,
            r#"query `alt`: request \"json\", recorded \"sse\""#,
        ),
        (
            send(
                reqwest::Method::POST,
                format!("{path}?alt=sse"),
                Some("2023-06-01"),
                true,
            )
            .await,
            r#"query `key`: request (none), recorded \"[redacted]\""#,
        ),
        (
            send(
                reqwest::Method::POST,
                format!("{path}?alt=sse&key=k"),
                Some("2024-01-01"),
                true,
            )
            .await,
            r#"header `anthropic-version`: request \"2024-01-01\", recorded \"2023-06-01\""#,
        ),
        (
            send(
                reqwest::Method::POST,
                format!("{path}?alt=sse&key=k"),
                Some("2023-06-01"),
                false,
            )
            .await,
            "header `x-api-key`: request (missing), recorded (a value, not shown)",
        ),
    ];
    for ((status, body), difference) in cases {
        assert_eq!(status, 409, "{body}");
        assert!(body.contains(difference), "{difference}\n{body}");
    }
    // A redacted query parameter or header matches any value.
    let (status, body) = send(
        reqwest::Method::POST,
        format!("{path}?key=whatever&alt=sse"),
        Some("2023-06-01"),
        true,
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "answered"));
    assert_eq!(server.mismatches().len(), 6);
}

#[tokio::test]
async fn a_matcher_can_leave_out_the_query_the_body_or_all_but_some_fields() {
    let yaml = r#"
interactions:
- request:
    method: POST
    uri: https://api.example.com/v1/run?beta=true
    parsed_body: {model: m, metadata: {user_id: u-1}, messages: [{role: user, content: hi}]}
  response:
    status: {code: 200, message: OK}
    body: {string: answered}
"#;
    let post = |server: &ReplayServer, target: &str, body: serde_json::Value| {
        client()
            .post(server.url(target))
            .body(body.to_string())
            .send()
    };
    let sent = json!({"model": "m", "metadata": {"user_id": "u-2"}, "messages": [{"role": "user", "content": "hi"}]});

    let server = serve(yaml, Matcher::new().ignore_body_field("metadata/user_id")).await;
    assert_eq!(
        post(&server, "/v1/run?beta=true", sent.clone())
            .await
            .unwrap()
            .status(),
        200
    );

    let server = serve(yaml, Matcher::new()).await;
    let answer = post(&server, "/v1/run?beta=true", sent.clone())
        .await
        .unwrap();
    assert_eq!(answer.status(), 409);
    let text = answer.text().await.unwrap();
    assert!(
        text.contains(r#"body /metadata/user_id: request \"u-2\", recorded \"u-1\""#),
        "{text}"
    );

    let fields = Matcher::new()
        .ignore_query()
        .body_fields(["/messages", "/tools"]);
    let server = serve(yaml, fields).await;
    let other_model = json!({"model": "n", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(
        post(&server, "/v1/run", other_model)
            .await
            .unwrap()
            .status(),
        200
    );

    let fields = Matcher::new().body_fields(["/messages"]);
    let server = serve(yaml, fields).await;
    let other_question = json!({"model": "m", "messages": [{"role": "user", "content": "ho"}]});
    let answer = post(&server, "/v1/run?beta=true", other_question)
        .await
        .unwrap();
    assert_eq!(answer.status(), 409);
    let text = answer.text().await.unwrap();
    assert!(
        text.contains(r#"body /messages/0/content: request \"ho\", recorded \"hi\""#),
        "{text}"
    );
    assert!(
        !text.contains("model"),
        "only the fields asked for are compared: {text}"
    );

    let server = serve(yaml, Matcher::new().ignore_body().ignore_query()).await;
    let answer = client()
        .post(server.url("/v1/run"))
        .body("not even JSON")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    server.assert_all_used();
}

#[tokio::test]
async fn an_empty_cassette_says_so() {
    let server = serve("interactions: []\n", Matcher::new()).await;
    let transcript = [Message::user("Anyone?")];
    let message = mismatch_message(
        ask(&server, ChatRequest::new(&transcript))
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("the cassette has no interactions"),
        "{message}"
    );
}

#[tokio::test]
async fn recorded_errors_replay_and_a_retry_gets_the_next_recorded_answer() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let transcript = [Message::user("Busy?")];
    let body = crate::anthropic_request("Busy?");
    let interaction = |status: u16, answer: &serde_json::Value| {
        json!({
            "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages", "parsed_body": body},
            "response": {"status": {"code": status}, "headers": {"content-type": ["application/json"]}, "parsed_body": answer},
        })
    };
    let yaml = serde_yaml_ng::to_string(&json!({"interactions": [
        interaction(529, &overloaded),
        interaction(200, &anthropic_answer("Not any more.")),
    ]}))
    .unwrap();
    let server = serve(&yaml, Matcher::new()).await;
    let provider = anthropic(server.base_url(), KEY).with_retry(RetryPolicy {
        max_attempts: 2,
        initial_delay: Duration::from_millis(1),
        backoff: 1.0,
        max_delay: Duration::from_millis(1),
    });
    let answer = provider
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    assert_eq!(answer.message.content, "Not any more.");
    server.assert_all_used();

    let server = serve(&yaml, Matcher::new()).await;
    let once = anthropic(server.base_url(), KEY).with_retry(RetryPolicy {
        max_attempts: 1,
        ..RetryPolicy::default()
    });
    let error = once
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ProviderError::Api { status: 529, error_type: Some(t), .. } if t == "overloaded_error"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_request_body_past_the_limit_is_refused_with_413() {
    let server = serve("interactions: []\n", Matcher::new()).await;
    let answer = client()
        .post(server.url("/v1/messages"))
        .body(vec![b'x'; MAX_BODY_BYTES + 1])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 413);
    let body: serde_json::Value = serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap();
    assert_eq!(body["error"]["type"], "cassette_request_too_large");
    assert!(server.requests().is_empty());
}
