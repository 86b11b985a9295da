//! `web_fetch` within bounds: hostile HTML (deep nesting) is flattened and converted off the async
//! thread under the time limit; credentials in a URL never appear in a message.
//!
//! No test asserts a duration. A generous `tokio::time::timeout` guards each call that once ran
//! for minutes, so that the old behaviour fails the test instead of hanging it.
#![cfg(feature = "web")]

use crate::common;

use std::time::Duration;

use std::net::SocketAddr;

use agent_core::SkillContext;
use agent_std_tools::WebConfig;
use common::{Answer, call};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How long a call may take before the test calls it hung: far longer than any of them needs.
const HANG_GUARD: Duration = Duration::from_secs(60);

async fn guarded(ctx: &SkillContext, name: &str, args: serde_json::Value) -> Answer {
    tokio::time::timeout(HANG_GUARD, call(ctx, name, args))
        .await
        .unwrap_or_else(|_| panic!("`{name}` did not finish within {HANG_GUARD:?}"))
}

/// `<div><b>` nested this many times: 512 KiB of HTML that took the converter minutes.
const NESTING: usize = 64 * 1024;

/// A loopback HTTP/1.1 server with the routes these tests need.
async fn serve() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let request = String::from_utf8_lossy(&request);
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let (status, headers, body): (&str, &str, Vec<u8>) = match path.as_str() {
                    "/nested" => (
                        "200 OK",
                        "Content-Type: text/html\r\n",
                        format!(
                            "<!doctype html><html><body><h1>Top</h1>{}deep text{}<p>after</p></body></html>",
                            "<div><b>".repeat(NESTING),
                            "</b></div>".repeat(NESTING)
                        )
                        .into_bytes(),
                    ),
                    "/unclosed" => (
                        "200 OK",
                        "Content-Type: text/html\r\n",
                        format!("<p>start</p>{}end", "<div><span>".repeat(NESTING))
                            .into_bytes(),
                    ),
                    "/plain" => ("200 OK", "Content-Type: text/plain\r\n", b"plain".to_vec()),
                    "/redirect-bad" => (
                        "302 Found",
                        "Location: http://user:secret@[::1/\r\n",
                        Vec::new(),
                    ),
                    _ => (
                        "404 Not Found",
                        "Content-Type: text/plain\r\n",
                        b"not here".to_vec(),
                    ),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&body).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    addr
}

fn loopback() -> SkillContext {
    SkillContext::new(".").with_extension(WebConfig {
        allow_loopback: true,
        ..WebConfig::default()
    })
}

#[tokio::test]
async fn deeply_nested_html_is_flattened_and_converted() {
    let addr = serve().await;
    let answer = guarded(
        &loopback(),
        "web_fetch",
        json!({"url": format!("http://{addr}/nested")}),
    )
    .await;
    let text = answer.expect_ok();
    assert!(text.contains("Top"), "{text}");
    assert!(
        text.contains("deep text"),
        "the text inside is kept: {text}"
    );
    assert!(text.contains("after"), "{text}");
    assert!(
        text.contains("nested more than 128 elements deep; the deeper tags were dropped"),
        "the flattening is announced: {text}"
    );
}

#[tokio::test]
async fn unclosed_nesting_is_flattened_too() {
    let addr = serve().await;
    let answer = guarded(
        &loopback(),
        "web_fetch",
        json!({"url": format!("http://{addr}/unclosed")}),
    )
    .await;
    let text = answer.expect_ok();
    assert!(text.contains("start") && text.contains("end"), "{text}");
    assert!(text.contains("nested more than 128"), "{text}");
}

#[tokio::test]
async fn the_time_limit_covers_the_conversion() {
    // However the race between the conversion and the limit goes, the call ends with the
    // page's text or with the limit's error, never later than the guard.
    let addr = serve().await;
    let ctx = SkillContext::new(".").with_extension(WebConfig {
        allow_loopback: true,
        timeout: Duration::from_millis(50),
        ..WebConfig::default()
    });
    let answer = guarded(
        &ctx,
        "web_fetch",
        json!({"url": format!("http://{addr}/nested")}),
    )
    .await;
    if answer.is_error {
        assert!(
            answer.text.starts_with("timed out after 50ms"),
            "{}",
            answer.text
        );
    } else {
        assert!(answer.text.contains("deep text"), "{}", answer.text);
    }
}

fn assert_no_credentials(answer: &Answer) {
    assert!(
        !answer.text.contains("secret") && !answer.text.contains("user:"),
        "the URL's credentials leaked: {}",
        answer.text
    );
}

#[tokio::test]
async fn credentials_in_the_url_never_appear_in_messages() {
    let addr = serve().await;
    let port = addr.port();
    let ctx = loopback();
    // An error status.
    let answer = guarded(
        &ctx,
        "web_fetch",
        json!({"url": format!("http://user:secret@{addr}/missing")}),
    )
    .await;
    assert!(
        answer.err().contains("answered HTTP 404"),
        "{}",
        answer.text
    );
    assert!(
        answer.text.contains(&format!("http://{addr}/missing")),
        "the rest of the URL is still named: {}",
        answer.text
    );
    assert_no_credentials(&answer);
    // A success names the URL too.
    let answer = guarded(
        &ctx,
        "web_fetch",
        json!({"url": format!("http://user:secret@{addr}/plain")}),
    )
    .await;
    assert!(answer.expect_ok().ends_with("plain"), "{}", answer.text);
    assert_no_credentials(&answer);
    // A redirect to a bad URL that carries credentials of its own.
    let answer = guarded(
        &ctx,
        "web_fetch",
        json!({"url": format!("http://user:secret@{addr}/redirect-bad")}),
    )
    .await;
    assert!(
        answer.err().contains("redirected to a bad URL"),
        "{}",
        answer.text
    );
    assert_no_credentials(&answer);
    // A refused address, a URL that does not parse, a closed port.
    for url in [
        "http://user:secret@10.0.0.1/".to_owned(),
        "http://user:secret@exa mple.com/".to_owned(),
        format!("http://user:secret@127.0.0.1:{}/", closed_port().await),
        format!("ftp://user:secret@127.0.0.1:{port}/"),
    ] {
        let answer = guarded(&ctx, "web_fetch", json!({ "url": url })).await;
        answer.err();
        assert_no_credentials(&answer);
    }
}

/// A loopback port nothing listens on.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}
