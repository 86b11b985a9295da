//! Secrets: every key reaches the fake upstream and none reaches the file; a cassette in which a
//! secret still appears (echoed by the API, or carried in a body) is refused, and nothing is
//! written, not even over an older cassette.

use agent_llm::cassette::{Cassette, CassetteError, MIN_SECRET_CHARS, REDACTED};
use agent_llm::{
    ChatRequest, GeminiProvider, LlmProvider, Message, OpenAiProvider, OpenAiResponsesProvider,
};
use serde_json::json;

use crate::{KEY, Reply, Server, anthropic, anthropic_answer, client, dir, files_in};

const OPENAI_KEY: &str = "sk-proj-openai-test-key-9876543210";
const GEMINI_KEY: &str = "AIzaSy-gemini-test-key-5555555555";
const QUERY_KEY: &str = "query-param-key-4444444444";
const COOKIE: &str = "cookie-value-3333333333";
const ORG: &str = "org-account-2222222222";

fn chat_answer() -> serde_json::Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    })
}

fn gemini_answer() -> serde_json::Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "Hi."}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7},
        "responseId": "r1"
    })
}

#[tokio::test]
async fn keys_reach_the_upstream_and_are_redacted_from_the_cassette() {
    let upstream = Server::start([
        Reply::json(200, &anthropic_answer("Hi.")),
        Reply::json(200, &chat_answer())
            .with_header("set-cookie", &format!("__cf_bm={COOKIE}; Path=/; HttpOnly"))
            .with_header("openai-organization", ORG),
        Reply::json(200, &gemini_answer()),
        Reply::json(200, &json!({"ok": true})),
    ])
    .await;
    let folder = dir();
    let path = folder.path().join("keys.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    let transcript = [Message::user("Hello.")];
    let request = ChatRequest::new(&transcript);

    anthropic(proxy.base_url(), KEY)
        .complete(&request)
        .await
        .unwrap();
    OpenAiProvider::new(OPENAI_KEY, "gpt-4o")
        .with_base_url(format!("{}/v1", proxy.base_url()))
        .complete(&request)
        .await
        .unwrap();
    GeminiProvider::new(GEMINI_KEY, "gemini-2.5-flash")
        .with_base_url(format!("{}/v1beta", proxy.base_url()))
        .complete(&request)
        .await
        .unwrap();
    let raw = client()
        .post(format!(
            "{}/v1/thing?alt=json&key={QUERY_KEY}",
            proxy.base_url()
        ))
        .header("cookie", format!("session={COOKIE}"))
        .header("x-custom-token", "custom-token-1111111111")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 200);
    proxy.finish().await.unwrap();

    // Every key arrived where the API expects it.
    let received = upstream.received();
    assert_eq!(received[0].header("x-api-key"), Some(KEY));
    assert_eq!(
        received[1].header("authorization"),
        Some(format!("Bearer {OPENAI_KEY}").as_str())
    );
    assert_eq!(received[2].header("x-goog-api-key"), Some(GEMINI_KEY));
    assert_eq!(
        received[3].path,
        format!("/v1/thing?alt=json&key={QUERY_KEY}")
    );
    assert_eq!(
        received[3].header("cookie"),
        Some(format!("session={COOKIE}").as_str())
    );

    // None is in the file, in any form.
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in [
        KEY,
        OPENAI_KEY,
        GEMINI_KEY,
        QUERY_KEY,
        COOKIE,
        ORG,
        "custom-token-1111111111",
    ] {
        assert!(
            !text.contains(secret),
            "{secret} is in the cassette:\n{text}"
        );
    }
    let cassette = Cassette::load(&path).unwrap();
    let i = cassette.interactions();
    assert_eq!(i[0].request.header("x-api-key"), Some(REDACTED));
    assert_eq!(i[1].request.header("authorization"), Some(REDACTED));
    assert_eq!(i[1].response.header("set-cookie"), Some(REDACTED));
    assert_eq!(i[1].response.header("openai-organization"), Some(REDACTED));
    assert_eq!(i[2].request.header("x-goog-api-key"), Some(REDACTED));
    assert_eq!(i[3].request.header("cookie"), Some(REDACTED));
    assert_eq!(i[3].request.header("x-custom-token"), Some(REDACTED));
    assert_eq!(
        i[3].request.uri,
        format!("{}/v1/thing?alt=json&key=%5Bredacted%5D", upstream.url)
    );
    // What is not secret is kept.
    assert_eq!(i[0].request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        i[1].response.header("content-type"),
        Some("application/json")
    );

    // The redacted cassette replays: keys are not compared, a redacted query key matches any.
    let server = Cassette::replay(&path).await.unwrap();
    let answer = anthropic(server.base_url(), "another")
        .complete(&request)
        .await
        .unwrap();
    assert_eq!(answer.message.content, "Hi.");
    OpenAiProvider::new("another", "gpt-4o")
        .with_base_url(server.url("/v1"))
        .complete(&request)
        .await
        .unwrap();
    GeminiProvider::new("another", "gemini-2.5-flash")
        .with_base_url(server.url("/v1beta"))
        .complete(&request)
        .await
        .unwrap();
    let raw = client()
        .post(server.url("/v1/thing?alt=json&key=other"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 200);
    server.assert_all_used();
}

#[tokio::test]
async fn a_key_the_api_echoes_back_refuses_the_cassette_and_nothing_is_written() {
    let echo = json!({"type": "error", "error": {
        "type": "authentication_error",
        "message": format!("invalid x-api-key: {KEY}")
    }});
    let upstream = Server::start([Reply::json(401, &echo)]).await;
    let folder = dir();
    let path = folder.path().join("echo.yaml");
    // An older cassette is there: it must stay as it was.
    std::fs::write(&path, "interactions: []\n").unwrap();
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    let transcript = [Message::user("Hello.")];
    let error = anthropic(proxy.base_url(), KEY)
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("401"), "{error}");

    let error = proxy.finish().await.unwrap_err();
    let CassetteError::Secret { what, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(
        what.starts_with(
            "the value of header `x-api-key` appears in interactions[0].response body"
        ),
        "{what}"
    );
    let shown = error.to_string();
    assert!(shown.contains("echo.yaml: not written"), "{shown}");
    assert!(
        !shown.contains(KEY),
        "the error never shows the secret: {shown}"
    );
    assert!(!format!("{error:?}").contains(KEY), "nor does its Debug");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "interactions: []\n"
    );
    assert_eq!(
        files_in(folder.path()),
        ["echo.yaml"],
        "no temporary file is left"
    );
}

#[tokio::test]
async fn a_bearer_token_alone_in_a_body_is_found_too() {
    // The API echoes only the token after `Bearer `, inside a stream.
    let stream = format!("data: {{\"note\": \"you sent {OPENAI_KEY}\"}}\n\ndata: [DONE]\n\n");
    let upstream = Server::start([Reply::sse(&stream)]).await;
    let folder = dir();
    let path = folder.path().join("bearer.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    let raw = client()
        .post(format!("{}/v1/chat/completions", proxy.base_url()))
        .header("authorization", format!("Bearer {OPENAI_KEY}"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(
        raw.text().await.unwrap(),
        stream,
        "the client gets the answer unchanged"
    );
    let error = proxy.finish().await.unwrap_err();
    assert!(
        error.to_string().contains(
            "the value of header `authorization` appears in interactions[0].response body"
        ),
        "{error}"
    );
    assert!(!path.exists());
}

#[tokio::test]
async fn a_secret_given_to_the_recording_is_searched_for_in_requests_too() {
    let upstream = Server::start([Reply::json(200, &json!({"ok": true}))]).await;
    let folder = dir();
    let path = folder.path().join("given.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    proxy.secret("customer-password-hunter2-xyz");
    // `{"ok": true}` is no Responses answer: only the request matters here.
    let _ = OpenAiResponsesProvider::new("", "gpt-4o")
        .with_base_url(format!("{}/v1", proxy.base_url()))
        .complete(&ChatRequest::new(&[Message::user(
            "My password is customer-password-hunter2-xyz",
        )]))
        .await;
    let error = proxy.finish().await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("a secret given to the recording appears in interactions[0].request body"),
        "{error}"
    );
    assert!(!path.exists());
}

#[tokio::test]
async fn values_shorter_than_the_minimum_are_redacted_but_not_searched_for() {
    let short = "k".repeat(MIN_SECRET_CHARS - 1);
    let upstream =
        Server::start([Reply::json(200, &json!({"note": format!("got {short}")}))]).await;
    let folder = dir();
    let path = folder.path().join("short.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    client()
        .post(format!("{}/v1/x", proxy.base_url()))
        .header("x-api-key", &short)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    proxy.finish().await.unwrap();
    let cassette = Cassette::load(&path).unwrap();
    assert_eq!(
        cassette.interactions()[0].request.header("x-api-key"),
        Some(REDACTED)
    );
}

#[tokio::test]
async fn credentials_under_any_header_name_a_query_code_or_a_body_field_never_reach_the_file() {
    const BEARER: &str = "bearer-under-another-name-7777777777";
    const SESSION: &str = "session-id-value-6666666666";
    const COOKIE2: &str = "cookie2-value-5555555555";
    const CODE: &str = "oauth-code-value-4444444444";
    const PWD: &str = "query-password-3333333333";
    const BODY_SECRET: &str = "body-client-secret-2222222222";
    const BODY_PASSWORD: &str = "body-password-value-1111111111";
    const CAMEL: &str = "camel-case-access-token-0000000000";
    const LISTED: &str = "a-key-inside-a-list-1212121212";
    let upstream = Server::start([
        Reply::json(200, &json!({"ok": true})),
        Reply::json(200, &json!({"ok": true})),
    ])
    .await;
    let folder = dir();
    let path = folder.path().join("names.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    let body = json!({
        "model": "m", "max_tokens": 5, "prompt_cache_key": "conversation-1",
        "auth": {"client_secret": BODY_SECRET, "nested": [{"password": BODY_PASSWORD}]},
        "login": {"accessToken": CAMEL}, "api_key": [LISTED],
    });
    let sent = client()
        .post(format!(
            "{}/v1/login?code={CODE}&pwd={PWD}&alt=json",
            proxy.base_url()
        ))
        .header("x-access-tok", format!("Bearer {BEARER}"))
        .header("x-session-id", SESSION)
        .header("cookie2", COOKIE2)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    proxy.finish().await.unwrap();
    // The upstream got everything as sent.
    let received = upstream.received();
    assert_eq!(received[0].header("x-session-id"), Some(SESSION));
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in [
        BEARER,
        SESSION,
        COOKIE2,
        CODE,
        PWD,
        BODY_SECRET,
        BODY_PASSWORD,
        CAMEL,
        LISTED,
    ] {
        assert!(
            !text.contains(secret),
            "{secret} is in the cassette:\n{text}"
        );
    }
    let cassette = Cassette::load(&path).unwrap();
    let request = &cassette.interactions()[0].request;
    for name in ["x-access-tok", "x-session-id", "cookie2"] {
        assert_eq!(request.header(name), Some(REDACTED), "{name}");
    }
    // What names no one is kept: the content type, ordinary fields and parameters.
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert!(request.uri.contains("alt=json"), "{}", request.uri);
    assert!(text.contains("conversation-1"), "{text}");

    // It replays: a redacted body field matches any value.
    let server = Cassette::replay(&path).await.unwrap();
    let mut other = body.clone();
    other["auth"]["client_secret"] = json!("another-secret-value-000000");
    other["auth"]["nested"][0]["password"] = json!("another-password-value-000");
    let replayed = client()
        .post(server.url("/v1/login?code=x&pwd=y&alt=json"))
        .header("content-type", "application/json")
        .body(other.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(replayed.status(), 200);
    server.assert_all_used();
}

#[tokio::test]
async fn a_credential_sent_under_any_name_and_echoed_back_refuses_the_cassette() {
    const TOKEN: &str = "session-token-echoed-8888888888";
    let upstream = Server::start([Reply::json(200, &json!({"you_sent": TOKEN}))]).await;
    let folder = dir();
    let path = folder.path().join("echo.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    client()
        .post(format!("{}/v1/thing", proxy.base_url()))
        .header("x-session", TOKEN)
        .body("{}")
        .send()
        .await
        .unwrap();
    let error = proxy.finish().await.unwrap_err();
    assert!(error.to_string().contains("x-session"), "{error}");
    assert!(!path.exists(), "nothing is written");
}

#[tokio::test]
async fn a_credential_in_a_form_encoded_body_never_reaches_the_file_and_it_still_replays() {
    const PASSWORD: &str = "form-password-value-9999999999";
    let upstream = Server::start([Reply::json(200, &json!({"ok": true}))]).await;
    let folder = dir();
    let path = folder.path().join("form.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    let body = format!("grant_type=password&username=ada&password={PASSWORD}");
    client()
        .post(format!("{}/oauth/token", proxy.base_url()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    proxy.finish().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(PASSWORD), "{text}");
    assert!(text.contains("username=ada"), "{text}");
    let server = Cassette::replay(&path).await.unwrap();
    let replayed = client()
        .post(server.url("/oauth/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=password&username=ada&password=another-one-entirely")
        .send()
        .await
        .unwrap();
    assert_eq!(replayed.status(), 200);
    server.assert_all_used();
}
