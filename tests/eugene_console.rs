//! `eugene console`: the command serves the agent on loopback with the console and prints the
//! page's address with a fresh token in its fragment; the page is served, the listing needs that
//! token, and a run started through the endpoint is answered by the configured model (the
//! scripted loopback server of the other CLI tests). The page itself is tested in a browser in
//! agent-agui/tests/console.rs.
//!
//! Needs `cargo build -p eugene-cli` first (as tests/eugene_cli.rs).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Child;

use support::{HANG_GUARD, Server, eugene, text_answer};

/// One request over a fresh connection: the status and the body.
fn request(addr: &str, method: &str, path: &str, token: Option<&str>, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(HANG_GUARD)).unwrap();
    let auth = token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\n{auth}content-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned());
    (status, body.unwrap_or_default())
}

/// The running command, killed when the test ends, passed or not.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn eugene_console_serves_the_page_and_the_agent_behind_a_fresh_token() {
    let model = Server::start([text_answer("Hello from the model.")]);
    let mut child = Killed(
        eugene()
            .args(["console", "--port", "0"])
            .env("OPENAI_BASE_URL", model.base_url())
            .env("OPENAI_API_KEY", "test-key")
            .spawn()
            .expect("eugene starts"),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim();
    let (address, token) = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split_once("/console#token="))
        .unwrap_or_else(|| panic!("not the console's address: {url:?}"));
    assert!(address.starts_with("127.0.0.1:"), "{url}");
    assert!(token.len() >= 32, "{url}");

    let (status, page) = request(address, "GET", "/console", None, "");
    assert_eq!(status, 200);
    assert!(page.contains("/console/console.js"), "{page}");
    assert_eq!(request(address, "GET", "/agui/threads", None, "").0, 401);
    let (status, listing) = request(address, "GET", "/agui/threads", Some(token), "");
    assert_eq!((status, listing.as_str()), (200, r#"{"threads":[]}"#));

    let run =
        r#"{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"Hi"}]}"#;
    let (status, events) = request(address, "POST", "/agui", Some(token), run);
    assert_eq!(status, 200);
    assert!(events.contains("Hello from the model."), "{events}");
    assert!(events.contains(r#""type":"RUN_FINISHED""#), "{events}");
    let (_, listing) = request(address, "GET", "/agui/threads", Some(token), "");
    assert!(listing.contains(r#""id":"t1","state":"idle""#), "{listing}");
}
