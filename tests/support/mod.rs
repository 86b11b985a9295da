//! What the tests of the `eugene` command line share: a loopback HTTP server that replays scripted
//! OpenAI-compatible answers and records each request, and a way to run the example binary as a
//! child process with a hang guard.
//!
//! The server is plain threads and blocking sockets: one thread accepts, one thread per
//! connection reads one request and writes its reply, with `connection: close`.

#![allow(dead_code)] // each test file uses its own part of this

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any wait in these tests may take before the test fails as hung.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A JSON body with this status.
    Json(u16, Value),
    /// A `text/event-stream` body, sent whole.
    Sse(String),
    /// The request is read and never answered; the connection stays open until the client
    /// leaves.
    Silent,
}

/// A streamed answer: each chunk as a `data:` event, then `data: [DONE]`.
pub fn sse(chunks: &[Value]) -> Reply {
    let mut text: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    Reply::Sse(text)
}

/// One streamed chunk with this `delta` and `finish_reason`.
pub fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "c", "model": "scripted", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// A streamed text answer.
pub fn text_answer(text: &str) -> Reply {
    sse(&[
        chunk(json!({"role": "assistant", "content": text}), None),
        chunk(json!({}), Some("stop")),
    ])
}

/// A streamed answer that calls one tool.
pub fn tool_answer(id: &str, name: &str, arguments: Value) -> Reply {
    sse(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ])
}

/// One request as the server read it.
#[derive(Clone, Debug)]
pub struct Request {
    /// `POST /v1/chat/completions`.
    pub line: String,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

#[derive(Default)]
struct Inner {
    replies: VecDeque<Reply>,
    received: Vec<Request>,
}

/// A loopback server answering each request with the next scripted reply.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    state: Arc<(Mutex<Inner>, Condvar)>,
}

impl Server {
    /// Starts a server with these replies, in order. When they run out, requests get a 400.
    pub fn start(replies: impl IntoIterator<Item = Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new((
            Mutex::new(Inner {
                replies: replies.into_iter().collect(),
                received: Vec::new(),
            }),
            Condvar::new(),
        ));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let shared = shared.clone();
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Server { url, state }
    }

    /// The base URL eugene is given: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Request> {
        self.state.0.lock().unwrap().received.clone()
    }

    /// Waits until `n` requests arrived (failing the test after [`HANG_GUARD`]).
    pub fn wait_for_requests(&self, n: usize) -> Vec<Request> {
        let (lock, arrived) = &*self.state;
        let guard = lock.lock().unwrap();
        let (guard, timeout) = arrived
            .wait_timeout_while(guard, HANG_GUARD, |inner| inner.received.len() < n)
            .unwrap();
        assert!(
            !timeout.timed_out(),
            "waited for {n} requests, {} arrived",
            guard.received.len()
        );
        guard.received.clone()
    }
}

fn serve(stream: TcpStream, state: &(Mutex<Inner>, Condvar)) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut length = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 {
            return;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let reply = {
        let (lock, arrived) = state;
        let mut inner = lock.lock().unwrap();
        inner.received.push(Request {
            line: line.trim_end().to_owned(),
            body,
        });
        arrived.notify_all();
        inner.replies.pop_front()
    };
    let (status, content_type, body) = match reply {
        Some(Reply::Json(status, body)) => (status, "application/json", body.to_string()),
        Some(Reply::Sse(text)) => (200, "text/event-stream", text),
        Some(Reply::Silent) => {
            // Hold the connection until the client gives up on it.
            let _ = reader.read_to_end(&mut Vec::new());
            return;
        }
        None => (
            400,
            "application/json",
            json!({"error": {"message": "the test server has no more scripted replies", "type": "test"}})
                .to_string(),
        ),
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} Scripted\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

/// The `eugene` command (package `eugene-cli`) as `cargo test --workspace` built it, or
/// `EUGENE_CLI_BIN` to check these tests against another build (e.g. an older one, to see them
/// fail).
pub fn eugene_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("EUGENE_CLI_BIN") {
        return path.into();
    }
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let path = deps.parent().unwrap().join("eugene");
    assert!(
        path.exists(),
        "{} is not built; run through `cargo test --workspace` (`cargo test --test NAME` builds \
         no other package: `cargo build -p eugene-cli` first)",
        path.display()
    );
    // `cargo test --test NAME` does not rebuild another package: refuse to test an old build.
    let built = std::fs::metadata(&path).unwrap().modified().unwrap();
    let sources = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eugene-cli/src");
    for source in std::fs::read_dir(&sources).unwrap() {
        let source = source.unwrap().path();
        let changed = std::fs::metadata(&source).unwrap().modified().unwrap();
        assert!(
            changed <= built,
            "{} is older than {}: run `cargo build -p eugene-cli` first",
            path.display(),
            source.display()
        );
    }
    path
}

/// `eugene` with no provider configuration, colour setting or terminal from the machine it runs
/// on; stdin empty.
pub fn eugene() -> Command {
    let mut cmd = Command::new(eugene_binary());
    for key in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_BASE_URL",
        "AGENT_MODEL",
        "NO_COLOR",
    ] {
        cmd.env_remove(key);
    }
    // Nothing listens on port 9 of loopback: no Ollama is found by accident. Sessions go to a
    // folder of this test process's, never the machine's own state folder.
    cmd.env("OLLAMA_HOST", "127.0.0.1:9")
        .env("EUGENE_STATE_DIR", state_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// The `EUGENE_STATE_DIR` of every `eugene` this test process starts (sessions are kept per
/// workspace inside it).
pub fn state_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// The session files in [`state_dir`] whose name starts with `workspace`'s folder name.
pub fn session_files(workspace: &Path) -> Vec<PathBuf> {
    let name = workspace.canonicalize().unwrap();
    let name = name.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(state_dir().join("sessions"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|f| f.to_string_lossy().starts_with(&format!("{name}-")))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What a finished `eugene` printed.
#[derive(Debug)]
pub struct Finished {
    /// How it exited.
    pub status: ExitStatus,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

impl Finished {
    /// The exit status's number (`None` when killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// stdout's lines as JSON values.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
            })
            .collect()
    }
}

/// A running `eugene` whose output is collected as it comes.
pub struct Running {
    /// The process.
    pub child: Child,
    stdout: Arc<(Mutex<String>, Condvar)>,
    stderr: Arc<(Mutex<String>, Condvar)>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn collect(
    mut from: impl Read + Send + 'static,
) -> (Arc<(Mutex<String>, Condvar)>, std::thread::JoinHandle<()>) {
    let text = Arc::new((Mutex::new(String::new()), Condvar::new()));
    let shared = text.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let (lock, grew) = &*shared;
            lock.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
            grew.notify_all();
        }
    });
    (text, reader)
}

impl Running {
    /// Starts `cmd` (whose stdout and stderr must be piped).
    pub fn start(cmd: &mut Command) -> Running {
        let mut child = cmd.spawn().expect("eugene starts");
        let (stdout, out_reader) = collect(child.stdout.take().unwrap());
        let (stderr, err_reader) = collect(child.stderr.take().unwrap());
        Running {
            child,
            stdout,
            stderr,
            readers: vec![out_reader, err_reader],
        }
    }

    /// Writes a line to eugene's stdin.
    pub fn say(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("stdin is piped");
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Closes eugene's stdin (the end of input).
    pub fn close_stdin(&mut self) {
        drop(self.child.stdin.take());
    }

    /// Sends SIGINT, as Ctrl-C on a terminal does.
    pub fn ctrl_c(&self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) with the pid of our own child, which has not been reaped yet.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    }

    /// Waits until stderr holds `text` at least `times` times (failing after [`HANG_GUARD`]).
    pub fn wait_for_stderr(&mut self, text: &str, times: usize) {
        self.wait_for(true, text, times)
    }

    /// Waits until stdout holds `text` at least `times` times (failing after [`HANG_GUARD`]).
    pub fn wait_for_stdout(&mut self, text: &str, times: usize) {
        self.wait_for(false, text, times)
    }

    fn wait_for(&mut self, stderr: bool, text: &str, times: usize) {
        let shared = if stderr { &self.stderr } else { &self.stdout };
        let (lock, grew) = &**shared;
        let guard = lock.lock().unwrap();
        let (guard, timeout) = grew
            .wait_timeout_while(guard, HANG_GUARD, |seen| seen.matches(text).count() < times)
            .unwrap();
        if timeout.timed_out() {
            let seen = guard.clone();
            drop(guard);
            let _ = self.child.kill();
            panic!(
                "waited for {text:?} ×{times} on {}; it printed:\n{seen}\n(the other stream: {})",
                if stderr { "stderr" } else { "stdout" },
                if stderr { &self.stdout } else { &self.stderr }
                    .0
                    .lock()
                    .unwrap()
            );
        }
    }

    /// Waits for the process to exit (killing it and failing the test after [`HANG_GUARD`]).
    pub fn finish(self) -> Finished {
        self.finish_within(HANG_GUARD)
    }

    /// Waits for the process to exit (killing it and failing the test after `guard`).
    pub fn finish_within(mut self, guard: Duration) -> Finished {
        let deadline = Instant::now() + guard;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "eugene did not exit within {guard:?}\nstdout: {}\nstderr: {}",
                    self.stdout.0.lock().unwrap(),
                    self.stderr.0.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        for reader in self.readers.drain(..) {
            reader.join().unwrap();
        }
        let stdout = self.stdout.0.lock().unwrap().clone();
        let stderr = self.stderr.0.lock().unwrap().clone();
        Finished {
            status,
            stdout,
            stderr,
        }
    }
}

/// Runs `cmd` to its end (with the hang guard).
pub fn run(cmd: &mut Command) -> Finished {
    Running::start(cmd).finish()
}

/// `eugene` on a new pseudo-terminal: its stdout and stderr (and stdin, when asked) are the
/// terminal; what it shows is collected as it comes.
pub struct Terminal {
    child: Child,
    /// The terminal's other side: what is written here is typed.
    master: std::fs::File,
    screen: Arc<(Mutex<String>, Condvar)>,
    reader: std::thread::JoinHandle<()>,
}

impl Terminal {
    /// Starts `cmd` on a new terminal; `stdin` puts its input there too.
    pub fn start(mut cmd: Command, stdin: bool) -> Terminal {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes two new descriptors into the integers given; the rest may be
        // null.
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned here alone.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        if stdin {
            cmd.stdin(Stdio::from(slave.try_clone().unwrap()));
        }
        cmd.stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        let child = cmd.spawn().expect("eugene starts");
        drop(cmd); // the parent's copies of the slave side: reading ends when eugene exits
        let master = std::fs::File::from(master);
        let (screen, reader) = collect(master.try_clone().unwrap());
        Terminal {
            child,
            master,
            screen,
            reader,
        }
    }

    /// Waits until the terminal shows `text` (failing after [`HANG_GUARD`]).
    pub fn wait_for(&self, text: &str) {
        let (lock, grew) = &*self.screen;
        let guard = lock.lock().unwrap();
        let (guard, timeout) = grew
            .wait_timeout_while(guard, HANG_GUARD, |seen| !seen.contains(text))
            .unwrap();
        if timeout.timed_out() {
            // SAFETY: kill(2) with the pid of our own child, which has not been reaped yet.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGKILL) };
            panic!("waited for {text:?}; the terminal shows:\n{}", *guard);
        }
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.master
            .write_all(format!("{line}\r").as_bytes())
            .unwrap();
    }

    /// Sends SIGINT, as Ctrl-C on a terminal does.
    pub fn ctrl_c(&self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) with the pid of our own child, which has not been reaped yet.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    }

    /// Waits for eugene to exit (killing it and failing after [`HANG_GUARD`]); returns how it
    /// exited and everything the terminal showed.
    pub fn finish(mut self) -> (ExitStatus, String) {
        let deadline = Instant::now() + HANG_GUARD;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "eugene did not exit on the terminal; it shows:\n{}",
                    self.screen.0.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader ends with EIO once no process holds the slave side.
        drop(self.master);
        self.reader.join().unwrap();
        let screen = self.screen.0.lock().unwrap().clone();
        (status, screen)
    }
}
