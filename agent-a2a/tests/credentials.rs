//! The client's token goes only to the origin the application configured: a card that names an
//! endpoint elsewhere is refused (unless that origin is allowed), and a redirect to another
//! origin is not followed, so neither the token nor the request's body reaches it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_a2a::{A2aError, RemoteAgent};
use serde_json::json;
use test_support::server::read_request;
use tokio::io::AsyncWriteExt;

const TOKEN: &str = "a-token-that-must-not-travel-0123456789";

/// A server that must never be reached with anything: counts the requests it gets.
async fn thief() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                if read_request(&mut stream, &mut Vec::new()).await.is_some() {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
                let _ = stream
                    .write_all(b"HTTP/1.1 500 Nope\r\ncontent-length: 0\r\n\r\n")
                    .await;
            });
        }
    });
    (url, seen)
}

/// An agent whose card names `endpoint` (itself when `None`), and whose endpoint answers every
/// POST with a 307 to `redirect` when given.
async fn agent(endpoint: Option<String>, redirect: Option<String>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let endpoint = endpoint.unwrap_or_else(|| format!("{url}/"));
    let card = json!({
        "name": "agent", "description": "an agent", "version": "1",
        "supportedInterfaces": [{"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false}, "skills": []
    })
    .to_string();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (card, redirect) = (card.clone(), redirect.clone());
            tokio::spawn(async move {
                let Some(request) = read_request(&mut stream, &mut Vec::new()).await else {
                    return;
                };
                let answer = if request.method == "GET" {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{card}",
                        card.len()
                    )
                } else {
                    let to = redirect.unwrap_or_default();
                    format!(
                        "HTTP/1.1 307 Temporary Redirect\r\nlocation: {to}/\r\ncontent-length: 0\r\n\r\n"
                    )
                };
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    url
}

async fn connect(url: &str, token: Option<&str>, also: &[&str]) -> Result<RemoteAgent, A2aError> {
    RemoteAgent::connect_allowing(
        url,
        token,
        Duration::from_secs(5),
        Duration::from_secs(10),
        also,
    )
    .await
}

#[tokio::test]
async fn a_card_naming_another_origin_does_not_get_the_token() {
    let (elsewhere, reached) = thief().await;
    let url = agent(Some(format!("{elsewhere}/")), None).await;
    let error = connect(&url, Some(TOKEN), &[]).await.unwrap_err();
    assert!(matches!(error, A2aError::Config(_)), "{error}");
    assert!(error.to_string().contains("another origin"), "{error}");
    assert_eq!(reached.load(Ordering::SeqCst), 0);
    // Without a token there is nothing to leak; allowed by name, the origin is the agent's.
    assert!(connect(&url, None, &[]).await.is_ok());
    assert!(connect(&url, Some(TOKEN), &[&elsewhere]).await.is_ok());
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "connecting sends nothing there"
    );
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_with_the_body_or_the_token() {
    let (elsewhere, reached) = thief().await;
    let url = agent(None, Some(elsewhere)).await;
    let agent = connect(&url, Some(TOKEN), &[]).await.unwrap();
    let error = agent.ask("the secret plan").await.unwrap_err();
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the other origin got a request ({error})"
    );
}
