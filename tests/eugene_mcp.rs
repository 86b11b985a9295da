//! `eugene mcp login URL` and `eugene --mcp URL` against an OAuth-protected MCP server written
//! with the official Python MCP SDK (agent-mcp's `tests/programs/oauth_server.py`), on loopback:
//! the test plays the browser, then a run calls the server's tool with the kept token. The model
//! is the scripted loopback server of the other CLI tests.
//!
//! Needs `cargo build -p eugene-cli` first (as tests/eugene_cli.rs).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};
use support::{HANG_GUARD, Server, eugene, run, text_answer, tool_answer};
use test_support::python_server::PythonServer;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/agent-mcp/tests/programs/oauth_server.py"
);

/// The Python server (oauth_server.py), killed when dropped.
fn start_server() -> PythonServer {
    PythonServer::start(Path::new(SCRIPT), env!("CARGO_TARGET_TMPDIR"))
}

/// GETs an `http://` `url` over a plain socket, without following redirects: the status and
/// the `location`, if any.
fn get(url: &str) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(HANG_GUARD)).unwrap();
    let path = if path.is_empty() { "/" } else { path };
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    let location = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    (status, location)
}

/// Runs `eugene mcp login URL --token-dir DIR`, playing the browser with the URL it prints.
fn log_in(server: &PythonServer, tokens: &Path) -> (i32, String) {
    let mut child = eugene()
        .args(["mcp", "login", &server.url, "--token-dir"])
        .arg(tokens)
        .spawn()
        .expect("eugene starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut auth_url = String::new();
    stdout.read_line(&mut auth_url).unwrap();
    let auth_url = auth_url.trim();
    assert!(auth_url.contains("/authorize?"), "{auth_url:?}");

    // The authorization server approves at once and sends the browser to eugene's listener.
    let (status, redirect) = get(auth_url);
    assert_eq!(status, 302);
    let redirect = redirect.unwrap();
    assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
    assert_eq!(get(&redirect).0, 200);

    let deadline = Instant::now() + HANG_GUARD;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "eugene mcp login did not exit");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code().unwrap_or(-1), stderr)
}

#[test]
fn login_keeps_the_tokens_and_a_run_with_mcp_calls_the_servers_tool() {
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");

    let (code, stderr) = log_in(&server, &tokens);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("Logged in to"), "{stderr}");
    let files: Vec<_> = std::fs::read_dir(&tokens)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one file for the one server");
    assert!(stderr.contains(&files[0].display().to_string()), "{stderr}");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let access = kept["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!stderr.contains(&access), "the token is not printed");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let model = Server::start([
        tool_answer("c1", "whoami", json!({})),
        text_answer("The server knows me."),
    ]);
    let workspace = tempfile::tempdir().unwrap();
    let done = run(eugene()
        .env("OPENAI_BASE_URL", model.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args(["--yes", "--mcp", &server.url, "--token-dir"])
        .arg(&tokens)
        .arg("Who am I to the server?"));
    assert_eq!(done.code(), Some(0), "{}", done.stderr);
    assert!(
        done.stdout.contains("The server knows me."),
        "{}",
        done.stdout
    );

    // The model was offered the server's tools, and got the tool's answer back.
    let requests = model.received();
    let offered: Vec<String> = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"whoami".to_owned()), "{offered:?}");
    let client_id = kept["credentials"]["client_id"].as_str().unwrap();
    let second = requests[1].json().to_string();
    assert!(second.contains(&format!("client {client_id}")), "{second}");
    // The server saw the kept token on its MCP endpoint.
    let bearer = format!("Bearer {access}");
    assert!(
        server
            .log()
            .iter()
            .any(|e| e["path"] == "/mcp" && e["authorization"] == bearer.as_str())
    );
}

#[test]
fn mcp_without_a_login_says_how_to_log_in_and_asks_nobody_anything() {
    let server = start_server();
    let model = Server::start([text_answer("unused")]);
    let dir = tempfile::tempdir().unwrap();
    let done = run(eugene()
        .env("OPENAI_BASE_URL", model.base_url())
        .args(["--mcp", &server.url, "--token-dir"])
        .arg(dir.path())
        .arg("hi"));
    assert_eq!(done.code(), Some(2), "{}", done.stderr);
    assert!(
        done.stderr
            .contains(&format!("eugene mcp login {}", server.url)),
        "{}",
        done.stderr
    );
    assert!(
        done.stderr.contains(&dir.path().display().to_string()),
        "{}",
        done.stderr
    );
    assert!(server.log().is_empty(), "{:?}", server.log());
    assert!(model.received().is_empty());
}

#[test]
fn login_with_a_url_that_is_not_http_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let done = run(eugene()
        .args(["mcp", "login", "file:///etc/passwd", "--token-dir"])
        .arg(dir.path()));
    assert_eq!(done.code(), Some(2), "{}", done.stderr);
    assert!(
        done.stderr.contains("not an MCP server URL"),
        "{}",
        done.stderr
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
