//! HTTP/1.1 spoken by hand over a TCP socket, the way an attacker (or a careless client) would:
//! any `Host`, any `Origin`, any body, half a request. Every read is guarded by a generous
//! time limit that fails the test instead of hanging it.

#![allow(dead_code)] // each test crate uses some of them

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long any one exchange may take before the test fails as hung.
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// The `Accept` header MCP's streamable HTTP transport requires on a POST.
pub const ACCEPT: &str = "application/json, text/event-stream";

/// A response as read off the wire.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The header lines, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: String,
}

impl Reply {
    /// The first header called `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message in the body: the body itself when it is JSON, else the last SSE
    /// `data:` line that is.
    pub fn message(&self) -> Value {
        if let Ok(value) = serde_json::from_str(&self.body) {
            return value;
        }
        self.body
            .lines()
            .rev()
            .filter_map(|line| line.strip_prefix("data:"))
            .find_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .unwrap_or_else(|| panic!("no JSON-RPC message in {self:?}"))
    }

    /// The session id the server gave.
    pub fn session(&self) -> Option<String> {
        self.header("mcp-session-id").map(str::to_owned)
    }
}

/// A POST of `body` to `/mcp` with `Connection: close` and the given extra headers; `Host` is
/// whatever the caller says it is.
pub fn post(host: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

/// Sends `request` on a new connection and reads the response to the end of the connection.
pub async fn send(addr: SocketAddr, request: &str) -> Reply {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.expect("connects");
        // A server that refuses a request before reading all of it may reset the connection
        // while it is being written; what it answered first is still read below.
        let _ = stream.write_all(request.as_bytes()).await;
        let mut raw = Vec::new();
        // A reset after the response was read is still a response.
        let _ = stream.read_to_end(&mut raw).await;
        raw
    };
    let raw = tokio::time::timeout(HANG_GUARD, exchange)
        .await
        .expect("the server answers and closes the connection");
    parse(&raw)
}

/// Everything the server sends until it closes the connection; fails the test if it does not.
pub async fn until_closed(stream: &mut TcpStream) -> String {
    let mut raw = Vec::new();
    tokio::time::timeout(HANG_GUARD, stream.read_to_end(&mut raw))
        .await
        .expect("the server closes the connection")
        .ok();
    String::from_utf8_lossy(&raw).into_owned()
}

/// Parses a whole HTTP/1.1 response.
pub fn parse(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("a complete response head in {text:?}"));
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            body.push_str(&after[..size.min(after.len())]);
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    body
}

/// An `initialize` request with id 1.
pub fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}
        }
    })
    .to_string()
}

/// A `tools/call` request with id `id`.
pub fn call_body(id: u64, name: &str, arguments: Value) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments}
    })
    .to_string()
}

/// The whole handshake and one `tools/call`, each with `headers` (e.g. a token), all with
/// `Host: host`. Returns the reply to the call, or the first reply that was not a success.
pub async fn call_tool(
    addr: SocketAddr,
    host: &str,
    headers: &[(&str, &str)],
    name: &str,
    arguments: Value,
) -> Reply {
    let init = send(addr, &post(host, headers, &initialize_body())).await;
    let Some(session) = init.session().filter(|_| init.status == 200) else {
        return init;
    };
    let mut with_session = headers.to_vec();
    with_session.push(("Mcp-Session-Id", &session));
    with_session.push(("MCP-Protocol-Version", "2025-06-18"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let ack = send(addr, &post(host, &with_session, &initialized)).await;
    if ack.status != 202 {
        return ack;
    }
    send(
        addr,
        &post(host, &with_session, &call_body(2, name, arguments)),
    )
    .await
}
