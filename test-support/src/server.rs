//! A real HTTP/1.1 server on loopback that answers each request with the next scripted reply and
//! records what it received. Replies can stream chunk by chunk, break the connection, or stall.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How a streamed reply ends.
#[derive(Clone, Copy, Debug)]
pub enum End {
    /// The terminating chunk: a complete response.
    Finish,
    /// The connection is closed mid-body.
    Drop,
    /// Nothing more is sent; the connection stays open.
    Stall,
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A whole body with `content-length`.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A chunked body sent piece by piece, ending as `end` says.
    Chunked {
        status: u16,
        headers: Vec<(String, String)>,
        chunks: Vec<Vec<u8>>,
        end: End,
    },
    /// The connection is closed without any answer.
    Hangup,
}

impl Reply {
    pub fn json(status: u16, body: &serde_json::Value) -> Reply {
        Reply::Full {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Full {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Full {
                    status,
                    headers,
                    body,
                }
            }
            Reply::Chunked {
                status,
                mut headers,
                chunks,
                end,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Chunked {
                    status,
                    headers,
                    chunks,
                    end,
                }
            }
            Reply::Hangup => Reply::Hangup,
        }
    }

    /// An SSE body, one chunk per event (split on blank lines), as a server streams it.
    pub fn sse(text: &str) -> Reply {
        let mut chunks = Vec::new();
        for (i, part) in text.split_inclusive("\n\n").enumerate() {
            let _ = i;
            chunks.push(part.as_bytes().to_vec());
        }
        Reply::sse_chunks(chunks, End::Finish)
    }

    pub fn sse_chunks(chunks: Vec<Vec<u8>>, end: End) -> Reply {
        Reply::Chunked {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            end,
        }
    }
}

/// What the server received.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

pub struct Server {
    pub url: String,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let replies = Arc::new(Mutex::new(replies.into_iter().collect::<VecDeque<_>>()));
        let received = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn({
            let (replies, received) = (replies.clone(), received.clone());
            async move {
                loop {
                    let Ok((socket, _)) = listener.accept().await else {
                        return;
                    };
                    tokio::spawn(serve(socket, replies.clone(), received.clone()));
                }
            }
        });
        Server {
            url,
            replies,
            received,
            task,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// How many scripted replies were not used.
    pub fn remaining(&self) -> usize {
        self.replies.lock().unwrap().len()
    }
}

async fn serve(
    mut socket: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    received: Arc<Mutex<Vec<Received>>>,
) {
    let mut buffer = Vec::new();
    loop {
        let Some(request) = read_request(&mut socket, &mut buffer).await else {
            return;
        };
        received.lock().unwrap().push(request);
        let reply = replies.lock().unwrap().pop_front().unwrap_or(Reply::Full {
            status: 500,
            headers: vec![],
            body: b"{\"error\":{\"type\":\"test_error\",\"message\":\"no scripted reply left\"}}"
                .to_vec(),
        });
        match reply {
            Reply::Hangup => return,
            Reply::Full {
                status,
                headers,
                body,
            } => {
                let mut head = status_line(status, &headers);
                head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
                if socket.write_all(head.as_bytes()).await.is_err()
                    || socket.write_all(&body).await.is_err()
                {
                    return;
                }
            }
            Reply::Chunked {
                status,
                headers,
                chunks,
                end,
            } => {
                let mut head = status_line(status, &headers);
                head.push_str("transfer-encoding: chunked\r\n\r\n");
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for chunk in chunks {
                    let frame = [
                        format!("{:x}\r\n", chunk.len()).into_bytes(),
                        chunk,
                        b"\r\n".to_vec(),
                    ]
                    .concat();
                    if socket.write_all(&frame).await.is_err() {
                        return;
                    }
                    let _ = socket.flush().await;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                match end {
                    End::Finish => {
                        if socket.write_all(b"0\r\n\r\n").await.is_err() {
                            return;
                        }
                    }
                    End::Drop => return,
                    End::Stall => {
                        std::future::pending::<()>().await;
                    }
                }
            }
        }
    }
}

fn status_line(status: u16, headers: &[(String, String)]) -> String {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    };
    let mut head = format!("HTTP/1.1 {status} {reason}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head
}

/// Reads one request (head and `content-length` body) from `socket`, whose bytes not yet read
/// as a request are kept in `buffer`; `None` when the client closed. Public for tests that
/// serve raw HTTP of their own (a hostile peer).
pub async fn read_request(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Received> {
    let head_end = loop {
        if let Some(pos) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let mut chunk = [0u8; 8192];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        })
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buffer.len() < body_start + length {
        let mut chunk = [0u8; 8192];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = buffer[body_start..body_start + length].to_vec();
    buffer.drain(..body_start + length);
    Some(Received {
        method,
        path,
        headers,
        body,
    })
}

/// A recording from the repository's `fixtures/recordings` (see its README for provenance).
pub fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/recordings")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
