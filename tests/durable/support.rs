//! What the durable-run tests share: the Restate server, the example service, the scripted
//! model, and reading what the skills logged.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
pub(crate) use test_support::server::{Reply, Server};

/// How long anything here may take before the test gives up (a debug build on a busy machine).
pub(crate) const PATIENCE: Duration = Duration::from_secs(90);

/// Where `.ci/run` installs restate-server, under the repository.
pub(crate) const INSTALLED: &str =
    "target/restate-server/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server";

pub(crate) fn restate_server() -> PathBuf {
    if let Some(path) = std::env::var_os("RESTATE_SERVER_BIN") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "RESTATE_SERVER_BIN={} is not a file",
            path.display()
        );
        return path;
    }
    let installed = Path::new(env!("CARGO_MANIFEST_DIR")).join(INSTALLED);
    if installed.is_file() {
        return installed;
    }
    // Not installed by .ci/run: install it once under the test target's directory (a fresh
    // clone's `cargo test --workspace` needs no setup step); a failure says how to do it by hand.
    test_support::provision::npm_program(
        env!("CARGO_TARGET_TMPDIR"),
        "RESTATE_SERVER_BIN",
        "@restatedev/restate-server@1.7.12",
        "@restatedev/restate-server-linux-x64/bin/restate-server",
    )
}

/// A port nobody listens on now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process, killed (SIGKILL) and reaped when dropped.
pub(crate) struct Process(pub(crate) Child);

impl Process {
    pub(crate) fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A restate-server of this test's own.
/// An HTTP client for Restate's admin and ingress APIs, with the TLS settings eugene's own clients
/// use (the workspace's reqwest has no process-wide crypto provider to fall back on).
pub(crate) fn http() -> reqwest::ClientBuilder {
    reqwest::Client::builder().tls_backend_preconfigured(eugene::llm::llm::tls_config().unwrap())
}

pub(crate) struct Restate {
    pub(crate) _process: Process,
    pub(crate) admin: String,
    pub(crate) ingress: String,
    pub(crate) _data: tempfile::TempDir,
}

impl Restate {
    pub(crate) async fn start() -> Restate {
        let binary = restate_server();
        let data = tempfile::tempdir().unwrap();
        let (admin, ingress, node) = (free_port(), free_port(), free_port());
        let log = std::fs::File::create(data.path().join("restate.log")).unwrap();
        let process = Command::new(&binary)
            .arg("--base-dir")
            .arg(data.path())
            .args(["--listen-mode", "tcp", "--no-logo", "--node-name", "test"])
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
            .env(
                "RESTATE_INGRESS__BIND_ADDRESS",
                format!("127.0.0.1:{ingress}"),
            )
            .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{node}"))
            .env(
                "RESTATE_ADVERTISED_ADDRESS",
                format!("http://127.0.0.1:{node}/"),
            )
            .env("RESTATE_DISABLE_TELEMETRY", "true")
            .env("RESTATE_DEFAULT_NUM_PARTITIONS", "2")
            .env("RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE", "256 MiB")
            // A killed service is tried again soon: the test restarts it within a second.
            .env("RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL", "100ms")
            .env("RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL", "1s")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", binary.display()));
        let restate = Restate {
            _process: Process(process),
            admin: format!("http://127.0.0.1:{admin}"),
            ingress: format!("http://127.0.0.1:{ingress}"),
            _data: data,
        };
        let client = http().build().unwrap();
        let started = Instant::now();
        loop {
            let admin_up = client
                .get(format!("{}/health", restate.admin))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            let ingress_up = client
                .get(format!("{}/restate/health", restate.ingress))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if admin_up && ingress_up {
                return restate;
            }
            assert!(
                started.elapsed() < PATIENCE,
                "restate-server did not come up; its log: {}",
                restate.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self._data.path().join("restate.log")).unwrap_or_default()
    }

    /// Registers the service at `port` (Restate reads its handlers from it).
    pub(crate) async fn register(&self, port: u16) {
        let response = http()
            .build()
            .unwrap()
            .post(format!("{}/deployments", self.admin))
            .header("content-type", "application/json")
            .body(json!({"uri": format!("http://127.0.0.1:{port}")}).to_string())
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body = response.text().await.unwrap();
        assert!(status.is_success(), "registering failed: {status} {body}");
        assert!(body.contains("\"Agent\""), "{body}");
    }

    /// A request through the ingress; the status and the body as JSON (`null` when empty).
    pub(crate) async fn ingress(&self, path: &str, body: Option<Value>) -> (u16, Value) {
        let client = http().timeout(PATIENCE).build().unwrap();
        let url = format!("{}{path}", self.ingress);
        let request = match body {
            Some(body) => client
                .post(url)
                .header("content-type", "application/json")
                .body(body.to_string()),
            None => client.get(url),
        };
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let value = match text.is_empty() {
            true => Value::Null,
            false => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        };
        (status, value)
    }

    /// Starts `goal` on `session` without waiting; the invocation's id.
    pub(crate) async fn send_run(&self, session: &str, goal: &str) -> String {
        let (status, answer) = self
            .ingress(&format!("/Agent/{session}/run/send"), Some(json!(goal)))
            .await;
        assert!(status < 300, "{status} {answer}");
        answer["invocationId"].as_str().unwrap().to_owned()
    }

    /// Starts a run on a user message (media included) in `session`, without waiting; its
    /// invocation id.
    pub(crate) async fn send_run_message(&self, session: &str, message: Value) -> String {
        let (status, answer) = self
            .ingress(&format!("/Agent/{session}/run_message/send"), Some(message))
            .await;
        assert!(status < 300, "{status} {answer}");
        answer["invocationId"].as_str().unwrap().to_owned()
    }

    /// Waits for the invocation to end; its answer.
    pub(crate) async fn attach(&self, invocation: &str) -> Value {
        let (status, answer) = self
            .ingress(&format!("/restate/invocation/{invocation}/attach"), None)
            .await;
        assert_eq!(status, 200, "{answer}");
        answer
    }
}

/// Where most tests start: Restate, a workspace, and the `durable_agent` example serving it on a
/// free port, registered with Restate, its model at `llm`.
pub(crate) struct Stage {
    pub(crate) restate: Restate,
    pub(crate) work: tempfile::TempDir,
    pub(crate) port: u16,
    pub(crate) service: Process,
}

impl Stage {
    /// The stage with `write_note` holding for `hold`, if any (`--hold`).
    pub(crate) async fn start(llm: &str, hold: Option<&str>) -> Stage {
        Stage::start_with(llm, hold, &[]).await
    }

    /// The stage with more flags for the service.
    pub(crate) async fn start_with(llm: &str, hold: Option<&str>, extra: &[&str]) -> Stage {
        let restate = Restate::start().await;
        let work = tempfile::tempdir().unwrap();
        let port = free_port();
        let service = service_with(port, work.path(), llm, hold, extra).await;
        restate.register(port).await;
        Stage {
            restate,
            work,
            port,
            service,
        }
    }
}

/// The `durable_agent` example, built by `cargo test` before the tests run.
pub(crate) fn example() -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    let path = deps
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/durable_agent");
    assert!(
        path.exists(),
        "{} is not built; run through `cargo test`",
        path.display()
    );
    path
}

/// One incarnation of the service: the example on `port`, writing in `work`, the model at `llm`.
pub(crate) async fn service(port: u16, work: &Path, llm: &str, hold: Option<&str>) -> Process {
    service_with(port, work, llm, hold, &[]).await
}

pub(crate) async fn service_with(
    port: u16,
    work: &Path,
    llm: &str,
    hold: Option<&str>,
    flags: &[&str],
) -> Process {
    service_in(port, work, llm, hold, flags, &[]).await
}

/// [`service_with`], with these variables in the service's environment.
pub(crate) async fn service_in(
    port: u16,
    work: &Path,
    llm: &str,
    hold: Option<&str>,
    flags: &[&str],
    env: &[(&str, String)],
) -> Process {
    let mut command = Command::new(example());
    command.args(flags);
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .arg("--workspace")
        .arg(work)
        .arg("--events")
        .arg(work.join("events"));
    if let Some(name) = hold {
        command.args(["--hold", name]);
    }
    for key in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "AGENT_MODEL",
        "OLLAMA_HOST",
    ] {
        command.env_remove(key);
    }
    let mut process = command
        .env("OPENAI_BASE_URL", llm)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if let Some(status) = process.try_wait().unwrap() {
            panic!(
                "the service exited ({status}) before it listened; an old build? `cargo test` \
                 builds the examples, `cargo test --test durable` alone does not"
            );
        }
        assert!(started.elapsed() < PATIENCE, "the service did not listen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Process(process)
}

/// A whole OpenAI-style answer.
pub(crate) fn answer(message: Value, finish: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "chatcmpl-1",
            "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        }),
    )
}

pub(crate) fn calls(calls: &[(&str, &str, Value)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function",
                   "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    answer(
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
        "tool_calls",
    )
}

pub(crate) fn text(text: &str) -> Reply {
    answer(json!({"role": "assistant", "content": text}), "stop")
}

/// What the skills logged, one line each.
pub(crate) fn logged(work: &Path) -> Vec<String> {
    std::fs::read_to_string(work.join("notes/log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

pub(crate) fn count(lines: &[String], line: &str) -> usize {
    lines.iter().filter(|l| *l == line).count()
}

/// The events the service's incarnations reported: (process id, the rest of the line).
pub(crate) fn events(work: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(work.join("events"))
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let (pid, rest) = line.split_once(' ').unwrap();
            (pid.to_owned(), rest.to_owned())
        })
        .collect()
}

pub(crate) async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < PATIENCE, "waited too long for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The tool results the model was sent in a request, by call id.
pub(crate) fn tool_results(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

pub(crate) fn requests_messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until the session's run waits for a decision; what it waits on.
pub(crate) async fn wait_pending(restate: &Restate, session: &str) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let (status, pending) = restate
            .ingress(&format!("/Agent/{session}/pending"), None)
            .await;
        assert_eq!(status, 200, "{pending}");
        if let Some(list) = pending.as_array().filter(|l| !l.is_empty()) {
            return list.clone();
        }
        assert!(started.elapsed() < PATIENCE, "the run never paused");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
