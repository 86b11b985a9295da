//! Connecting with the stored tokens: a run's tool call, a refresh, and the cases where
//! nothing may be sent.

use agent_core::{Registry, ToolCall};
use agent_llm::{MockProvider, MockReply, Role};
use agent_mcp::McpSkills;
use agent_mcp::client::oauth::{FileTokenStore, OAuthError};
use agent_runtime::AgentRuntime;
use serde_json::{Value, json};

use crate::server::{PyServer, log_in, logged, token_file, tokens};

/// Runs one scripted turn that calls `tool` and returns the `result` the Python SDK wraps a
/// tool's return value in (its `structuredContent`).
async fn run_calling(skills: &McpSkills, tool: &str, args: Value) -> Value {
    let mut registry = Registry::new();
    registry.destructive_calls(agent_core::DestructiveCalls::Allow);
    skills.add_to(&mut registry).unwrap();
    let model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", tool, args)]),
        MockReply::text("done"),
    ]);
    let outcome = AgentRuntime::new(model, registry)
        .run("Use the remote tool.")
        .await
        .unwrap();
    let result = outcome
        .transcript
        .iter()
        .find(|m| m.role == Role::Tool)
        .expect("the tool ran");
    assert!(!result.is_error, "{}", result.content);
    let content: Value = serde_json::from_str(&result.content).unwrap();
    content["result"].clone()
}

#[tokio::test]
async fn a_run_calls_a_remote_tool_with_the_stored_token() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    let login = log_in(&server, store.clone()).await;
    let (access, _) = tokens(store.path());
    let after_login = server.mcp_authorizations().len();

    let skills = McpSkills::connect_http_oauth(&server.url, store.clone())
        .await
        .expect("connects with the stored token");
    let mut names = skills.names();
    names.sort();
    assert_eq!(names, ["add", "whoami"]);
    let said = run_calling(&skills, "whoami", json!({})).await;
    assert_eq!(said, json!(format!("client {}", login.client_id)));

    // Every request to /mcp since the login carried the stored token, but the one with which
    // rmcp's discovery asks /mcp for its 401 challenge (without any token).
    assert_only_token(&server, after_login, &access);

    // Reconnecting uses the same tokens.
    skills.reconnect().await.unwrap();
    assert_eq!(
        run_calling(&skills, "add", json!({"a": 2, "b": 3})).await,
        json!(5)
    );
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_before_any_request_and_the_new_tokens_stored() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    log_in(&server, store.clone()).await;
    let (old_access, old_refresh) = tokens(store.path());
    age(store.path());
    let after_login = server.mcp_authorizations().len();

    let skills = McpSkills::connect_http_oauth(&server.url, store.clone())
        .await
        .expect("connects after refreshing");
    assert_eq!(
        run_calling(&skills, "add", json!({"a": 20, "b": 22})).await,
        json!(42)
    );

    // The server rotated both tokens; the file holds the new ones.
    let refreshed = server.events("refresh");
    assert_eq!(refreshed.len(), 1, "{:?}", server.log());
    let (access, refresh) = tokens(store.path());
    assert_eq!(refreshed[0]["access"], access.as_str());
    assert_ne!(access, old_access);
    assert_ne!(refresh, old_refresh);
    let received = token_file(store.path())["credentials"]["token_received_at"]
        .as_u64()
        .unwrap();
    assert!(
        received > 1_000_000,
        "the new tokens' time is now, not the aged one"
    );
    // The expired token never reached /mcp: every request since the login carried the new one.
    assert_only_token(&server, after_login, &access);

    // Nothing rmcp or this crate logged carries a token, old or new (every event of this
    // binary, at TRACE, is captured); the capture did see the refresh.
    let logs = logged();
    assert!(logs.contains("Refreshed access token"), "the capture works");
    for secret in [&old_access, &old_refresh, &access, &refresh] {
        assert!(!logs.contains(secret.as_str()), "a token was logged");
    }
}

#[tokio::test]
async fn without_a_token_nothing_is_sent_and_the_error_says_how_to_log_in() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();

    let error = McpSkills::connect_http_oauth(&server.url, store)
        .await
        .expect_err("not logged in");
    assert!(
        matches!(error, OAuthError::LoginRequired { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("log in first"), "{message}");
    assert!(
        message.contains(&format!("eugene mcp login {}", server.url)),
        "{message}"
    );
    assert!(
        server.log().is_empty(),
        "nothing reached the server: {:?}",
        server.log()
    );
}

#[tokio::test]
async fn a_refused_refresh_token_means_logging_in_again_and_no_request_with_the_expired_token() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    log_in(&server, store.clone()).await;
    let (old_access, _) = tokens(store.path());
    age(store.path());
    // A refresh token the server does not know (revoked, say).
    let mut file = token_file(store.path());
    file["credentials"]["token_response"]["refresh_token"] = json!("rt-revoked");
    std::fs::write(store.path(), serde_json::to_vec(&file).unwrap()).unwrap();

    let error = McpSkills::connect_http_oauth(&server.url, store)
        .await
        .expect_err("the refresh is refused");
    assert!(
        matches!(error, OAuthError::LoginRequired { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("eugene mcp login"), "{error}");
    assert!(!server.events("refresh-refused").is_empty());
    let sent = server.mcp_authorizations();
    assert!(
        sent.iter()
            .all(|a| a.as_deref() != Some(&format!("Bearer {old_access}"))),
        "the expired token was sent: {sent:?}"
    );
}

/// Every request to /mcp after the first `skip` carried `token`, except one discovery probe
/// without a token; and there were some with it.
fn assert_only_token(server: &PyServer, skip: usize, token: &str) {
    let sent = server.mcp_authorizations().split_off(skip);
    let bearer = format!("Bearer {token}");
    let with_token = sent.iter().filter(|a| a.is_some()).count();
    assert!(
        with_token >= 2,
        "the handshake and the call carried it: {sent:?}"
    );
    assert!(sent.len() - with_token <= 1, "{sent:?}");
    assert!(
        sent.iter().flatten().all(|a| *a == bearer),
        "another token was sent: {sent:?}"
    );
}

/// Makes the stored access token expired by its own times: received long ago.
fn age(path: &std::path::Path) {
    let mut file = token_file(path);
    file["credentials"]["token_received_at"] = json!(1);
    std::fs::write(path, serde_json::to_vec(&file).unwrap()).unwrap();
}

#[tokio::test]
async fn a_token_the_server_no_longer_knows_and_a_refused_refresh_mean_logging_in_again() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    log_in(&server, store.clone()).await;
    // Tokens that look current but that the server does not know (it forgot or revoked them).
    let mut file = token_file(store.path());
    file["credentials"]["token_response"]["access_token"] = json!("at-forgotten");
    file["credentials"]["token_response"]["refresh_token"] = json!("rt-forgotten");
    std::fs::write(store.path(), serde_json::to_vec(&file).unwrap()).unwrap();

    let error = McpSkills::connect_http_oauth(&server.url, store)
        .await
        .expect_err("the server refuses the token");
    assert!(
        matches!(error, OAuthError::LoginRequired { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("eugene mcp login"), "{error}");
    // One try with the token, one refresh (refused), and no second try with the same token.
    let sent = server.mcp_authorizations();
    let tries = sent
        .iter()
        .filter(|a| a.as_deref() == Some("Bearer at-forgotten"))
        .count();
    assert_eq!(tries, 1, "{sent:?}");
    assert!(!server.events("refresh-refused").is_empty());
}
