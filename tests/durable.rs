//! Durable runs against a real Restate server: the `durable_agent` example served as a child
//! process, registered with a `restate-server` started for each test (free loopback ports, a
//! temporary data folder), the model scripted by a loopback server in this process that counts
//! the requests it gets. The service is killed with SIGKILL in the middle of a run and started
//! again; the skills log on disk what ran, so exactly-once is checked where it happens.
//!
//! `restate-server` comes from npm (`@restatedev/restate-server`, 1.7): `.ci/run` installs it
//! under `target/restate-server`, or `RESTATE_SERVER_BIN` names a binary. Without one these tests
//! fail, saying how to install it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_support::server::{Reply, Server};

/// How long anything here may take before the test gives up (a debug build on a busy machine).
const PATIENCE: Duration = Duration::from_secs(90);

/// Where `.ci/run` installs restate-server, under the repository.
const INSTALLED: &str =
    "target/restate-server/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server";

fn restate_server() -> PathBuf {
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
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process, killed (SIGKILL) and reaped when dropped.
struct Process(Child);

impl Process {
    fn kill(&mut self) {
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
fn http() -> reqwest::ClientBuilder {
    reqwest::Client::builder().tls_backend_preconfigured(eugene::llm::tls_config().unwrap())
}

struct Restate {
    _process: Process,
    admin: String,
    ingress: String,
    _data: tempfile::TempDir,
}

impl Restate {
    async fn start() -> Restate {
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

    fn log(&self) -> String {
        std::fs::read_to_string(self._data.path().join("restate.log")).unwrap_or_default()
    }

    /// Registers the service at `port` (Restate reads its handlers from it).
    async fn register(&self, port: u16) {
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
    async fn ingress(&self, path: &str, body: Option<Value>) -> (u16, Value) {
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
    async fn send_run(&self, session: &str, goal: &str) -> String {
        let (status, answer) = self
            .ingress(&format!("/Agent/{session}/run/send"), Some(json!(goal)))
            .await;
        assert!(status < 300, "{status} {answer}");
        answer["invocationId"].as_str().unwrap().to_owned()
    }

    /// Waits for the invocation to end; its answer.
    async fn attach(&self, invocation: &str) -> Value {
        let (status, answer) = self
            .ingress(&format!("/restate/invocation/{invocation}/attach"), None)
            .await;
        assert_eq!(status, 200, "{answer}");
        answer
    }
}

/// The `durable_agent` example, built by `cargo test` before the tests run.
fn example() -> PathBuf {
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
async fn service(port: u16, work: &Path, llm: &str, hold: Option<&str>) -> Process {
    service_with(port, work, llm, hold, &[]).await
}

async fn service_with(
    port: u16,
    work: &Path,
    llm: &str,
    hold: Option<&str>,
    flags: &[&str],
) -> Process {
    let mut command = Command::new(example());
    command.args(flags);
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
fn answer(message: Value, finish: &str) -> Reply {
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

fn calls(calls: &[(&str, &str, Value)]) -> Reply {
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

fn text(text: &str) -> Reply {
    answer(json!({"role": "assistant", "content": text}), "stop")
}

/// What the skills logged, one line each.
fn logged(work: &Path) -> Vec<String> {
    std::fs::read_to_string(work.join("notes/log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn count(lines: &[String], line: &str) -> usize {
    lines.iter().filter(|l| *l == line).count()
}

/// The events the service's incarnations reported: (process id, the rest of the line).
fn events(work: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(work.join("events"))
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let (pid, rest) = line.split_once(' ').unwrap();
            (pid.to_owned(), rest.to_owned())
        })
        .collect()
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < PATIENCE, "waited too long for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The tool results the model was sent in a request, by call id.
fn tool_results(request: &Value) -> Vec<(String, String)> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_in_the_middle_of_a_batch_finishes_after_a_restart_and_nothing_runs_twice() {
    let started = Instant::now();
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "first"})),
            ("c2", "write_note", json!({"name": "b", "text": "second"})),
        ]),
        text("Both notes are written."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut first = service(port, work.path(), &llm.url, Some("b")).await;
    restate.register(port).await;

    let invocation = restate.send_run("crash", "Write notes a and b.").await;
    // `a` is written and journaled; `b` has started and waits: the process dies here.
    wait_for("b to start", || {
        count(&logged(work.path()), "started b") == 1
    })
    .await;
    assert_eq!(logged(work.path()), ["wrote a", "started b"]);
    first.kill();
    std::fs::write(work.path().join("notes/b.go"), "").unwrap();
    let _second = service(port, work.path(), &llm.url, Some("b")).await;

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "Both notes are written.",
        "{outcome}"
    );
    assert_eq!(outcome["finish"]["reason"], "no_more_tool_calls");
    assert_eq!(outcome["steps"], 2);
    assert_eq!(outcome["usage"]["input_tokens"], 20);

    // `a` ran once, before the crash, and was replayed; `b` was in flight at the crash: it
    // started again and wrote once.
    let log = logged(work.path());
    assert_eq!(count(&log, "wrote a"), 1, "{log:?}");
    assert_eq!(count(&log, "started b"), 2, "{log:?}");
    assert_eq!(count(&log, "wrote b"), 1, "{log:?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("notes/b.md")).unwrap(),
        "second"
    );

    // The model was asked twice in all: the first turn, answered before the crash, was not
    // asked again; the second got both results.
    let requests = llm.received();
    assert_eq!(
        requests.len(),
        2,
        "the model was asked again for a journaled turn"
    );
    assert!(tool_results(&requests[0].json()).is_empty());
    let results = tool_results(&requests[1].json());
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].0, "c1");
    assert!(results[0].1.contains("wrote notes/a.md"), "{results:?}");
    assert!(results[1].1.contains("wrote notes/b.md"), "{results:?}");

    // Events: each once, from the process that got there first; the second incarnation held
    // back what it replayed.
    let events = events(work.path());
    let mut lines: Vec<&str> = events.iter().map(|(_, line)| line.as_str()).collect();
    let total = lines.len();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(
        lines.len(),
        total,
        "an event was reported twice: {events:?}"
    );
    let pids: std::collections::BTreeSet<&str> = events.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(pids.len(), 2, "{events:?}");
    for line in [
        "usage 1",
        "tool_call 1 c1",
        "tool_call 1 c2",
        "tool_result 1 c1",
        "usage 2",
    ] {
        assert!(lines.contains(&line), "{line} missing: {events:?}");
    }
    eprintln!("crash test took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_agent_killed_in_the_middle_of_its_batch_finishes_after_a_restart_and_nothing_runs_twice()
 {
    let llm = Server::start([
        // The coordinator hands the work to `scribe`, an agent used as a skill.
        calls(&[("p1", "scribe", json!({"goal": "Write notes a and b."}))]),
        // The scribe's own turns.
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "first"})),
            ("c2", "write_note", json!({"name": "b", "text": "second"})),
        ]),
        text("Both notes are written."),
        text("The scribe wrote both notes."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut first = service(port, work.path(), &llm.url, Some("b")).await;
    restate.register(port).await;

    let invocation = restate
        .send_run("nested", "Get notes a and b written.")
        .await;
    // Inside the scribe: `a` is written and journaled; `b` has started: the process dies here.
    wait_for("b to start", || {
        count(&logged(work.path()), "started b") == 1
    })
    .await;
    assert_eq!(logged(work.path()), ["wrote a", "started b"]);
    first.kill();
    std::fs::write(work.path().join("notes/b.go"), "").unwrap();
    let _second = service(port, work.path(), &llm.url, Some("b")).await;

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "The scribe wrote both notes.",
        "{outcome}"
    );
    let log = logged(work.path());
    assert_eq!(
        count(&log, "wrote a"),
        1,
        "the scribe's journaled call ran again: {log:?}"
    );
    assert_eq!(count(&log, "started b"), 2, "{log:?}");
    assert_eq!(count(&log, "wrote b"), 1, "{log:?}");
    // Four model calls in all: neither the coordinator's first turn nor the scribe's, both
    // answered before the crash, was asked again.
    let requests = llm.received();
    assert_eq!(requests.len(), 4, "a journaled turn was asked again");
    let results = tool_results(&requests[2].json());
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].1.contains("wrote notes/a.md"), "{results:?}");
    assert!(results[1].1.contains("wrote notes/b.md"), "{results:?}");
    let results = tool_results(&requests[3].json());
    assert_eq!(
        results,
        [("p1".to_owned(), "Both notes are written.".to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_killed_between_its_calls_finishes_after_a_restart_and_no_completed_call_runs_again()
 {
    let program = r#"
        const a = await write_note({ name: "a", text: "first" });
        const b = await write_note({ name: "b", text: "second" });
        return [a, b];
    "#;
    let llm = Server::start([
        calls(&[("p1", "run_code", json!({ "code": program }))]),
        text("The program wrote both notes."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut first = service(port, work.path(), &llm.url, Some("b")).await;
    restate.register(port).await;

    let invocation = restate.send_run("program", "Write notes a and b.").await;
    // Inside the program: `a` is written and journaled; `b` has started: the process dies here.
    wait_for("b to start", || {
        count(&logged(work.path()), "started b") == 1
    })
    .await;
    assert_eq!(logged(work.path()), ["wrote a", "started b"]);
    first.kill();
    std::fs::write(work.path().join("notes/b.go"), "").unwrap();
    let _second = service(port, work.path(), &llm.url, Some("b")).await;

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "The program wrote both notes.",
        "{outcome}"
    );
    let log = logged(work.path());
    assert_eq!(
        count(&log, "wrote a"),
        1,
        "a journaled call ran again: {log:?}"
    );
    assert_eq!(count(&log, "started b"), 2, "{log:?}");
    assert_eq!(count(&log, "wrote b"), 1, "{log:?}");
    let requests = llm.received();
    assert_eq!(requests.len(), 2, "the first turn was asked again");
    let results = tool_results(&requests[1].json());
    assert_eq!(results.len(), 1, "{results:?}");
    let answer: Value = serde_json::from_str(&results[0].1).unwrap();
    assert_eq!(
        answer["value"],
        json!(["wrote notes/a.md (5 bytes)", "wrote notes/b.md (6 bytes)"]),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_inside_a_child_agent_is_decided_by_its_path_id_after_a_restart() {
    let llm = Server::start([
        calls(&[("p1", "scribe", json!({"goal": "Write and publish a."}))]),
        // The scribe's turns: its `publish` waits for a person.
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "news"})),
            ("c2", "publish", json!({"name": "a"})),
        ]),
        text("Written and published."),
        text("The scribe wrote and published a."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut first = service(port, work.path(), &llm.url, None).await;
    restate.register(port).await;

    let invocation = restate.send_run("nested-approve", "Get a published.").await;
    let pending = wait_pending(&restate, "nested-approve").await;
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0]["id"], "p1/c2", "{pending:?}");
    assert_eq!(pending[0]["pending"]["call"]["id"], "c2");
    assert_eq!(
        pending[0]["pending"]["via"],
        json!([{"call_id": "p1", "skill": "scribe"}])
    );
    assert_eq!(logged(work.path()), ["wrote a"]);

    first.kill();
    let _second = service(port, work.path(), &llm.url, None).await;

    // The inner call's own id is not a decision's address: its path id is.
    let (status, refused) = restate
        .ingress(
            "/Agent/nested-approve/decide",
            Some(json!({"c2": {"decision": "approve"}})),
        )
        .await;
    assert!(status >= 400, "{status} {refused}");
    assert!(
        refused.to_string().contains("waiting: `p1/c2`"),
        "{refused}"
    );
    assert_eq!(
        logged(work.path()),
        ["wrote a"],
        "a refused decision ran nothing"
    );
    let (status, decided) = restate
        .ingress(
            "/Agent/nested-approve/decide",
            Some(json!({"p1/c2": {"decision": "approve"}})),
        )
        .await;
    assert_eq!((status, decided), (200, json!(["p1/c2"])));

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "The scribe wrote and published a.",
        "{outcome}"
    );
    assert_eq!(logged(work.path()), ["wrote a", "published a"]);
    // Neither agent's first turn was asked again after the restart.
    let requests = llm.received();
    assert_eq!(requests.len(), 4, "a journaled turn was asked again");
    assert_eq!(
        tool_results(&requests[2].json()),
        [
            ("c1".to_owned(), "wrote notes/a.md (4 bytes)".to_owned()),
            ("c2".to_owned(), "published a".to_owned())
        ]
    );
    assert_eq!(
        tool_results(&requests[3].json()),
        [("p1".to_owned(), "Written and published.".to_owned())]
    );
    let (_, pending) = restate.ingress("/Agent/nested-approve/pending", None).await;
    assert_eq!(pending, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_run_waits_across_a_restart_and_a_decision_sent_through_ingress_finishes_it() {
    let started = Instant::now();
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "news"})),
            ("c2", "publish", json!({"name": "a"})),
        ]),
        text("Written and published."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut first = service(port, work.path(), &llm.url, None).await;
    restate.register(port).await;

    let invocation = restate.send_run("approve", "Write and publish a.").await;
    let pending = wait_pending(&restate, "approve").await;
    assert_eq!(pending[0]["pending"]["call"]["id"], "c2");
    assert_eq!(
        pending[0]["pending"]["reason"],
        "`publish` cannot be undone"
    );
    assert!(
        pending[0]["awakeable"]
            .as_str()
            .unwrap()
            .starts_with("sign_")
    );
    assert_eq!(logged(work.path()), ["wrote a"]);

    // The service goes away while the run waits, and a new one takes its place.
    first.kill();
    let _second = service(port, work.path(), &llm.url, None).await;

    // A decision for a call nobody waits on is refused, and sends nothing.
    let (status, refused) = restate
        .ingress(
            "/Agent/approve/decide",
            Some(json!({"c9": {"decision": "approve"}})),
        )
        .await;
    assert!(status >= 400, "{status} {refused}");
    assert!(
        refused
            .to_string()
            .contains("no call waits for a decision under `c9`; waiting: `c2`"),
        "{refused}"
    );
    let (status, decided) = restate
        .ingress(
            "/Agent/approve/decide",
            Some(json!({"c2": {"decision": "approve"}})),
        )
        .await;
    assert_eq!((status, decided), (200, json!(["c2"])));

    let outcome = restate.attach(&invocation).await;
    assert_eq!(outcome["final_text"], "Written and published.", "{outcome}");
    assert_eq!(logged(work.path()), ["wrote a", "published a"]);
    let requests = llm.received();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1].json());
    assert_eq!(
        results,
        [
            ("c1".to_owned(), "wrote notes/a.md (4 bytes)".to_owned()),
            ("c2".to_owned(), "published a".to_owned())
        ]
    );
    let (_, pending) = restate.ingress("/Agent/approve/pending", None).await;
    assert_eq!(pending, json!([]));
    let (_, stored) = restate.ingress("/Agent/approve/outcome", None).await;
    assert_eq!(stored, outcome);

    let events = events(work.path());
    let awaiting: Vec<_> = events
        .iter()
        .filter(|(_, line)| line == "awaiting_approval 1 c2")
        .collect();
    assert_eq!(awaiting.len(), 1, "{events:?}");
    assert!(
        events
            .iter()
            .any(|(pid, line)| line == "turn_finished 2 NoMoreToolCalls" && pid != &awaiting[0].0),
        "the second incarnation finished the run: {events:?}"
    );
    eprintln!("approval test took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_awakeable_resolved_by_hand_denies_and_the_session_keeps_its_conversation() {
    let llm = Server::start([
        calls(&[("c1", "write_note", json!({"name": "a", "text": "x"}))]),
        calls(&[("c2", "publish", json!({"name": "a"}))]),
        text("Not published: it was refused."),
        text("You asked me to write and publish a."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let _service = service(port, work.path(), &llm.url, None).await;
    restate.register(port).await;

    let invocation = restate.send_run("deny", "Write and publish a.").await;
    let pending = wait_pending(&restate, "deny").await;
    let awakeable = pending[0]["awakeable"].as_str().unwrap();
    // Restate's own route for awakeables: no handler of ours involved.
    let (status, _) = restate
        .ingress(
            &format!("/restate/awakeables/{awakeable}/resolve"),
            Some(json!({"decision": "deny", "with": "not today"})),
        )
        .await;
    assert!(status < 300, "{status}");
    let outcome = restate.attach(&invocation).await;
    assert_eq!(outcome["final_text"], "Not published: it was refused.");
    assert_eq!(outcome["steps"], 3);
    assert_eq!(logged(work.path()), ["wrote a"]);
    let requests = llm.received();
    let results = tool_results(&requests[2].json());
    assert_eq!(results.last().unwrap().1, "denied: not today");

    // The next goal of the session continues its conversation.
    let (status, next) = restate
        .ingress("/Agent/deny/run", Some(json!("What did I ask?")))
        .await;
    assert_eq!(status, 200, "{next}");
    assert_eq!(next["final_text"], "You asked me to write and publish a.");
    assert_eq!(next["steps"], 1);
    let messages = requests_messages(&llm.received()[3].json());
    assert_eq!(messages.first().unwrap(), "Write and publish a.");
    assert_eq!(messages.last().unwrap(), "What did I ask?");
}

/// The user messages of a request.
fn requests_messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until the session's run waits for a decision; what it waits on.
async fn wait_pending(restate: &Restate, session: &str) -> Vec<Value> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_runs_one_goal_at_a_time_and_cancelling_a_waiting_run_lets_the_next_one_in() {
    let llm = Server::start([
        calls(&[("c1", "publish", json!({"name": "a"}))]),
        text("Hello from another session."),
        text("Second goal done."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let _service = service(port, work.path(), &llm.url, None).await;
    restate.register(port).await;

    let waiting = restate.send_run("queue", "Publish a.").await;
    wait_pending(&restate, "queue").await;
    // The same session's next goal queues behind the waiting run...
    let queued = restate.send_run("queue", "Then this.").await;
    // ...while another session runs at once.
    let (status, other) = restate
        .ingress("/Agent/other/run", Some(json!("Say hello.")))
        .await;
    assert_eq!(status, 200, "{other}");
    assert_eq!(other["final_text"], "Hello from another session.");
    assert_eq!(llm.received().len(), 2, "the queued goal has not started");

    // Cancelled through Restate's admin API, the waiting run ends without running the call.
    let response = http()
        .build()
        .unwrap()
        .patch(format!("{}/invocations/{waiting}/cancel", restate.admin))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{response:?}");
    let (status, cancelled) = restate
        .ingress(&format!("/restate/invocation/{waiting}/attach"), None)
        .await;
    assert!(status >= 400, "{status} {cancelled}");
    assert!(logged(work.path()).is_empty());

    let next = restate.attach(&queued).await;
    assert_eq!(next["final_text"], "Second goal done.", "{next}");
    let requests = llm.received();
    assert_eq!(requests.len(), 3);
    // The cancelled goal left the conversation as it was.
    assert_eq!(requests_messages(&requests[2].json()), ["Then this."]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_down_through_the_providers_retries_is_retried_by_restate_without_rerunning_tools()
{
    let overloaded = || {
        Reply::json(
            503,
            &json!({"error": {"message": "overloaded", "type": "overloaded_error"}}),
        )
    };
    let llm = Server::start([
        calls(&[("c1", "write_note", json!({"name": "a", "text": "x"}))]),
        // The provider tries three times, then the step fails and is not journaled; Restate
        // retries the invocation, which replays the first turn and the call, and asks again.
        overloaded(),
        overloaded(),
        overloaded(),
        text("Written, eventually."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let _service = service(port, work.path(), &llm.url, None).await;
    restate.register(port).await;

    let (status, outcome) = restate
        .ingress("/Agent/flaky/run", Some(json!("Write a.")))
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["final_text"], "Written, eventually.");
    assert_eq!(outcome["steps"], 2);
    assert_eq!(logged(work.path()), ["wrote a"]);
    let requests = llm.received();
    assert_eq!(requests.len(), 5);
    for retry in &requests[2..] {
        assert_eq!(
            retry.json(),
            requests[1].json(),
            "the same turn, asked again"
        );
    }
}

/// What a load balancer in front of several instances does, on loopback: each connection is
/// forwarded to the port `to` holds when it arrives.
struct Proxy {
    port: u16,
    to: std::sync::Arc<std::sync::atomic::AtomicU16>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(to: u16) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let to = std::sync::Arc::new(std::sync::atomic::AtomicU16::new(to));
        let target = to.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let port = target.load(std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    if let Ok(mut outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", port)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Proxy { port, to, task }
    }

    fn switch(&self, to: u16) {
        self.to.store(to, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_instance_behind_the_same_address_takes_over_a_run_whose_instance_died() {
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "first"})),
            ("c2", "write_note", json!({"name": "b", "text": "second"})),
        ]),
        text("Both notes are written."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    // Two instances of the service (one workspace, as on shared storage), one address for Restate.
    let (port_a, port_b) = (free_port(), free_port());
    let mut a = service(port_a, work.path(), &llm.url, Some("b")).await;
    let _b = service(port_b, work.path(), &llm.url, Some("b")).await;
    let balancer = Proxy::start(port_a).await;
    restate.register(balancer.port).await;

    let invocation = restate.send_run("failover", "Write notes a and b.").await;
    wait_for("b to start", || {
        count(&logged(work.path()), "started b") == 1
    })
    .await;
    // Instance a dies; the balancer sends new connections to b, which was up all along.
    balancer.switch(port_b);
    a.kill();
    std::fs::write(work.path().join("notes/b.go"), "").unwrap();

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "Both notes are written.",
        "{outcome}"
    );
    let log = logged(work.path());
    assert_eq!(count(&log, "wrote a"), 1, "{log:?}");
    assert_eq!(count(&log, "wrote b"), 1, "{log:?}");
    assert_eq!(llm.received().len(), 2);
    let events = events(work.path());
    let finished: Vec<&str> = events
        .iter()
        .filter(|(_, line)| line.starts_with("turn_finished 2"))
        .map(|(pid, _)| pid.as_str())
        .collect();
    assert_eq!(
        finished,
        [b_pid(&events, &a)],
        "instance b finished the run: {events:?}"
    );
}

/// The process id in the events that is not `a`'s.
fn b_pid<'e>(events: &'e [(String, String)], a: &Process) -> &'e str {
    let a = a.0.id().to_string();
    events
        .iter()
        .map(|(pid, _)| pid.as_str())
        .find(|pid| *pid != a)
        .expect("the second instance reported events")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_agent_pauses_goes_on_after_the_decision_and_ends_with_a_checked_value() {
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "x"})),
            ("c2", "publish", json!({"name": "a"})),
        ]),
        // The first answer does not pass the check: it goes back to the model with the error.
        calls(&[("c3", "final_answer", json!({"written": "a"}))]),
        calls(&[(
            "c4",
            "final_answer",
            json!({"written": ["a"], "summary": "Wrote and published a."}),
        )]),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let _service = service_with(port, work.path(), &llm.url, None, &["--typed"]).await;
    restate.register(port).await;

    let invocation = restate.send_run("typed", "Write and publish a.").await;
    wait_pending(&restate, "typed").await;
    let (status, _) = restate
        .ingress(
            "/Agent/typed/decide",
            Some(json!({"c2": {"decision": "approve"}})),
        )
        .await;
    assert_eq!(status, 200);
    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["output"],
        json!({"written": ["a"], "summary": "Wrote and published a."}),
        "{outcome}"
    );
    assert_eq!(outcome["steps"], 3);
    assert_eq!(logged(work.path()), ["wrote a", "published a"]);
    let requests = llm.received();
    let offered: Vec<String> = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"final_answer".to_owned()), "{offered:?}");
    let told = tool_results(&requests[2].json());
    assert!(told.last().unwrap().1.contains("`written`"), "{told:?}");
}
