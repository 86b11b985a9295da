//! `web_fetch` through `Registry::run_many` against a real HTTP server on loopback (which the
//! tests allow explicitly), and the address checks that refuse everything non-public.
#![cfg(feature = "web")]

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::SkillContext;
use agent_std_tools::WebConfig;
use common::call;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A small HTTP/1.1 server with a few routes; counts the requests it received.
struct Server {
    addr: SocketAddr,
    requests: Arc<AtomicUsize>,
}

impl Server {
    async fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    let request = String::from_utf8_lossy(&request);
                    let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let (status, headers, body): (&str, String, Vec<u8>) = match path.as_str() {
                        "/page" => (
                            "200 OK",
                            "Content-Type: text/html; charset=utf-8\r\n".into(),
                            b"<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>\
                              <body><h1>Hello</h1><p>World of <b>text</b> and <a href=\"/x\">a link</a>.</p>\
                              <ul><li>first</li><li>second</li></ul></body></html>"
                                .to_vec(),
                        ),
                        "/plain" => ("200 OK", "Content-Type: text/plain\r\n".into(), b"just text\n".to_vec()),
                        "/json" => (
                            "200 OK",
                            "Content-Type: application/json\r\n".into(),
                            br#"{"answer": 42}"#.to_vec(),
                        ),
                        "/redirect-local" => ("302 Found", "Location: /plain\r\n".into(), Vec::new()),
                        "/redirect-metadata" => (
                            "302 Found",
                            "Location: http://169.254.169.254/latest/meta-data/\r\n".into(),
                            Vec::new(),
                        ),
                        "/redirect-loop" => ("302 Found", "Location: /redirect-loop\r\n".into(), Vec::new()),
                        "/big" => ("200 OK", "Content-Type: text/plain\r\n".into(), vec![b'a'; 5 * 1024 * 1024]),
                        "/bin" => (
                            "200 OK",
                            "Content-Type: application/octet-stream\r\n".into(),
                            vec![0, 159, 146, 150, 0, 1, 2],
                        ),
                        "/slow" => {
                            tokio::time::sleep(Duration::from_secs(60)).await;
                            return;
                        }
                        _ => ("404 Not Found", "Content-Type: text/plain\r\n".into(), b"not here".to_vec()),
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
        Server { addr, requests }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

fn allowing_loopback() -> SkillContext {
    SkillContext::new(".").with_extension(WebConfig {
        allow_loopback: true,
        ..WebConfig::default()
    })
}

#[tokio::test]
async fn html_becomes_readable_text() {
    let server = Server::start().await;
    let answer = call(
        &allowing_loopback(),
        "web_fetch",
        json!({"url": server.url("/page")}),
    )
    .await;
    let text = answer.expect_ok();
    assert!(
        text.starts_with(&format!(
            "URL: {}\nContent-Type: text/html; charset=utf-8\n\n",
            server.url("/page")
        )),
        "{text}"
    );
    assert!(text.contains("Hello"), "{text}");
    assert!(text.contains("World of"), "{text}");
    assert!(text.contains("first") && text.contains("second"), "{text}");
    assert!(
        !text.contains("<h1>") && !text.contains("<p>"),
        "tags are gone: {text}"
    );
    assert!(!text.contains("color:red"), "styles are gone: {text}");
}

#[tokio::test]
async fn text_and_json_come_back_as_they_are() {
    let server = Server::start().await;
    let ctx = allowing_loopback();
    let answer = call(&ctx, "web_fetch", json!({"url": server.url("/plain")})).await;
    assert!(
        answer.expect_ok().ends_with("\n\njust text"),
        "{}",
        answer.text
    );
    let answer = call(&ctx, "web_fetch", json!({"url": server.url("/json")})).await;
    assert!(
        answer.expect_ok().ends_with(r#"{"answer": 42}"#),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn loopback_is_refused_unless_allowed_and_nothing_is_sent() {
    let server = Server::start().await;
    let ctx = SkillContext::new(".");
    for url in [
        server.url("/plain"),
        format!("http://localhost:{}/plain", server.addr.port()),
        format!("http://[::1]:{}/plain", server.addr.port()),
        format!("http://127.1.2.3:{}/plain", server.addr.port()),
    ] {
        let answer = call(&ctx, "web_fetch", json!({ "url": url })).await;
        answer.assert_safety(&url);
        assert!(answer.text.contains("loopback"), "{}", answer.text);
    }
    assert_eq!(server.requests(), 0, "a refused URL must not be requested");
}

#[tokio::test]
async fn private_link_local_and_metadata_addresses_are_refused_even_with_loopback_allowed() {
    let ctx = allowing_loopback();
    // (url, the address the refusal names, its kind)
    for (url, address, kind) in [
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            "link-local",
        ),
        ("http://10.0.0.1/", "10.0.0.1", "private"),
        ("http://192.168.1.1/admin", "192.168.1.1", "private"),
        ("http://172.16.5.4:8080/", "172.16.5.4", "private"),
        ("http://[fd00::1]/", "fd00::1", "private"),
        ("http://[fe80::1]/", "fe80::1", "link-local"),
        ("http://0.0.0.0/", "0.0.0.0", "unspecified"),
        ("http://100.64.0.1/", "100.64.0.1", "carrier-grade NAT"),
        // Parsed, this URL reads `http://[::ffff:a9fe:a9fe]/`; the address is named as resolved.
        (
            "http://[::ffff:169.254.169.254]/",
            "::ffff:169.254.169.254",
            "link-local",
        ),
    ] {
        let answer = call(&ctx, "web_fetch", json!({ "url": url })).await;
        answer.assert_safety(&format!("leads to {address} ({kind})"));
    }
}

#[tokio::test]
async fn only_http_and_https_are_fetched() {
    let ctx = allowing_loopback();
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com/",
    ] {
        let answer = call(&ctx, "web_fetch", json!({ "url": url })).await;
        answer.assert_safety(url);
    }
    let answer = call(&ctx, "web_fetch", json!({"url": "not a url"})).await;
    assert!(
        answer.err().starts_with("invalid arguments: `url`"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn redirects_are_followed_and_each_hop_is_checked() {
    let server = Server::start().await;
    let ctx = allowing_loopback();
    let answer = call(
        &ctx,
        "web_fetch",
        json!({"url": server.url("/redirect-local")}),
    )
    .await;
    let text = answer.expect_ok();
    assert!(
        text.starts_with(&format!("URL: {}", server.url("/plain"))),
        "{text}"
    );
    assert!(text.ends_with("just text"), "{text}");

    let answer = call(
        &ctx,
        "web_fetch",
        json!({"url": server.url("/redirect-metadata")}),
    )
    .await;
    answer.assert_safety("http://169.254.169.254/latest/meta-data/");

    let answer = call(
        &ctx,
        "web_fetch",
        json!({"url": server.url("/redirect-loop")}),
    )
    .await;
    assert!(
        answer.err().contains("redirected more than 5 times"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn the_body_and_the_text_are_limited_with_notices() {
    let server = Server::start().await;
    let ctx = SkillContext::new(".").with_extension(WebConfig {
        allow_loopback: true,
        max_bytes: 1000,
        max_chars: 100,
        ..WebConfig::default()
    });
    let answer = call(&ctx, "web_fetch", json!({"url": server.url("/big")})).await;
    let text = answer.expect_ok();
    assert!(
        text.ends_with(&format!(
            "{}\n\n[only the first 1000 bytes of the body were read; showing 100 of 1000 characters of text]",
            "a".repeat(100)
        )),
        "{text}"
    );
}

#[tokio::test]
async fn a_slow_server_hits_the_time_limit() {
    let server = Server::start().await;
    let ctx = SkillContext::new(".").with_extension(WebConfig {
        allow_loopback: true,
        timeout: Duration::from_millis(300),
        ..WebConfig::default()
    });
    let answer = call(&ctx, "web_fetch", json!({"url": server.url("/slow")})).await;
    assert!(
        answer.err().starts_with("timed out after 300ms"),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn binary_content_and_error_statuses_are_errors() {
    let server = Server::start().await;
    let ctx = allowing_loopback();
    let answer = call(&ctx, "web_fetch", json!({"url": server.url("/bin")})).await;
    assert!(
        answer
            .err()
            .contains("`application/octet-stream` (7 bytes), not text"),
        "{}",
        answer.text
    );
    let answer = call(&ctx, "web_fetch", json!({"url": server.url("/missing")})).await;
    let text = answer.err();
    assert!(text.contains("answered HTTP 404 Not Found"), "{text}");
    assert!(text.contains("not here"), "{text}");
}
