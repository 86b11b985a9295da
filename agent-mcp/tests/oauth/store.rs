//! The token file: what is not one is an error that names it and is left as it is.

use agent_mcp::McpSkills;
use agent_mcp::client::oauth::{CredentialStore, FileTokenStore, MAX_TOKEN_FILE_BYTES, OAuthError};

/// Nothing listens here: a test that reached the network would fail differently.
const URL: &str = "http://127.0.0.1:9/mcp";

async fn refused(content: &[u8]) -> (String, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), URL).unwrap();
    let path = store.path().to_owned();
    std::fs::write(&path, content).unwrap();
    let error = McpSkills::connect_http_oauth(URL, store)
        .await
        .expect_err("a bad token file is refused");
    assert!(matches!(error, OAuthError::Store { .. }), "{error:?}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        content,
        "the file is left as it was"
    );
    (error.to_string(), path, dir)
}

#[tokio::test]
async fn a_file_that_is_not_json_is_an_error_naming_it() {
    let (message, path, _dir) = refused(b"access_token=abc").await;
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("is not JSON"), "{message}");
}

#[tokio::test]
async fn json_without_credentials_is_an_error_naming_it() {
    let body = format!(r#"{{"server": "{URL}", "credentials": {{"token_response": 7}}}}"#);
    let (message, path, _dir) = refused(body.as_bytes()).await;
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(
        message.contains("does not hold OAuth credentials"),
        "{message}"
    );
}

#[tokio::test]
async fn another_servers_tokens_are_not_used() {
    let body = br#"{"server": "https://elsewhere.example/mcp", "credentials": {"client_id": "c", "token_response": null}}"#;
    let (message, path, _dir) = refused(body).await;
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(
        message.contains("https://elsewhere.example/mcp"),
        "{message}"
    );
}

#[tokio::test]
async fn a_huge_file_is_not_read() {
    let mut body = br#"{"server": "x", "pad": ""#.to_vec();
    body.resize(MAX_TOKEN_FILE_BYTES as usize + 10, b'a');
    let (message, path, _dir) = refused(&body).await;
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("larger than"), "{message}");
}

#[tokio::test]
async fn a_missing_file_is_not_logged_in_and_clearing_it_twice_is_fine() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), URL).unwrap();
    assert!(store.load().await.unwrap().is_none());
    store.clear().await.unwrap();
    store.clear().await.unwrap();
    assert!(matches!(
        McpSkills::connect_http_oauth(URL, store).await,
        Err(OAuthError::LoginRequired { .. })
    ));
}

#[tokio::test]
async fn a_url_that_is_not_http_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        FileTokenStore::in_dir(dir.path(), "file:///etc/passwd"),
        Err(OAuthError::InvalidUrl { .. })
    ));
}
