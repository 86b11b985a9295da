//! One scenario, one process: a program has one global `tracing` subscriber, so each scenario
//! installs its exporter in a process of its own. The test binary runs itself again, running
//! only the ignored test [`child`], which reads its [`Scenario`] from `AGENT_OTEL_CHILD`, sets
//! export up with `Otlp::install`, runs a scripted agent, drops the guard and reports.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent_otel::{Otlp, Protocol};
use agent_runtime::{RunOutcome, RunState};
use serde_json::{Value, json};

use crate::agent;

/// The variable that carries the scenario (JSON); absent, the child test does nothing.
const ARGS: &str = "AGENT_OTEL_CHILD";
/// What the child prints before its report.
const MARK: &str = "AGENT-OTEL-CHILD ";
/// The longest a child may take before it is killed (a hang, not a slow machine).
const CHILD_WITHIN: Duration = Duration::from_secs(120);
/// The longest a state file read back may be.
const MAX_STATE_BYTES: u64 = 1 << 20;

/// What a child process does.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// `tree`, `pause`, `resume`, or `twice` (install a second time, run nothing).
    mode: &'static str,
    endpoint: Option<String>,
    grpc: bool,
    content: Option<bool>,
    project: Option<String>,
    goal_chars: Option<usize>,
    state_file: Option<PathBuf>,
    shutdown_secs: Option<u64>,
    env: Vec<(String, String)>,
}

/// What came back from a child.
#[derive(Debug)]
pub struct Ran {
    /// Its report (see [`scenario`]).
    pub report: Value,
    /// Everything it wrote to stderr (the exporter's warning goes there).
    pub stderr: String,
}

impl Ran {
    /// How often the exporter warned.
    pub fn warnings(&self) -> usize {
        self.stderr.matches("agent-otel warns once").count()
    }
}

impl Scenario {
    /// A scenario of `mode`, exporting to the default endpoint until told otherwise.
    pub fn new(mode: &'static str) -> Scenario {
        Scenario {
            mode,
            endpoint: None,
            grpc: false,
            content: None,
            project: None,
            goal_chars: None,
            state_file: None,
            shutdown_secs: None,
            env: Vec::new(),
        }
    }

    /// `Otlp::endpoint(url)`.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// `Otlp::protocol(Protocol::Grpc)`.
    pub fn grpc(mut self) -> Self {
        self.grpc = true;
        self
    }

    /// `Otlp::record_content(on)`.
    pub fn content(mut self, on: bool) -> Self {
        self.content = Some(on);
        self
    }

    /// `Otlp::resource_attribute("openinference.project.name", project)`: Phoenix's project.
    pub fn project(mut self, project: &str) -> Self {
        self.project = Some(project.to_owned());
        self
    }

    /// A goal of this many characters instead of [`agent::GOAL`].
    pub fn goal_chars(mut self, chars: usize) -> Self {
        self.goal_chars = Some(chars);
        self
    }

    /// Where `pause` writes the paused state and `resume` reads it.
    pub fn state_file(mut self, path: &Path) -> Self {
        self.state_file = Some(path.to_owned());
        self
    }

    /// `Otlp::shutdown_timeout`.
    pub fn shutdown_secs(mut self, secs: u64) -> Self {
        self.shutdown_secs = Some(secs);
        self
    }

    /// An environment variable of the child (every `OTEL_*` of this process is removed).
    pub fn env(mut self, name: &str, value: impl Into<String>) -> Self {
        self.env.push((name.to_owned(), value.into()));
        self
    }

    /// Runs it in a child process and returns its report; fails when the child reports nothing
    /// or is still running after [`CHILD_WITHIN`].
    pub fn run(&self) -> Ran {
        let args = json!({
            "mode": self.mode,
            "endpoint": self.endpoint,
            "grpc": self.grpc,
            "content": self.content,
            "project": self.project,
            "goal_chars": self.goal_chars,
            "state_file": self.state_file,
            "shutdown_secs": self.shutdown_secs,
        });
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args([
                "--exact",
                "child::child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ARGS, args.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, _) in std::env::vars() {
            if name.starts_with("OTEL_") {
                command.env_remove(name);
            }
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        let mut child = command.spawn().unwrap();
        let stdout = reader(child.stdout.take().unwrap());
        let stderr = reader(child.stderr.take().unwrap());
        let deadline = Instant::now() + CHILD_WITHIN;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the child {self:?} was still running after {CHILD_WITHIN:?}; stderr:\n{}",
                    stderr.join().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let stdout = stdout.join().unwrap();
        let stderr = stderr.join().unwrap();
        let Some(line) = stdout
            .lines()
            .find_map(|l| l.find(MARK).map(|at| &l[at + MARK.len()..]))
        else {
            panic!("the child {self:?} reported nothing ({status}):\n{stdout}\n{stderr}");
        };
        Ran {
            report: serde_json::from_str(line).unwrap(),
            stderr,
        }
    }
}

fn reader(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        text
    })
}

/// Not a test of its own: the child process of the scenarios (see the module docs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run as a child process by the other tests of this binary"]
async fn child() {
    let Ok(args) = std::env::var(ARGS) else {
        return;
    };
    let args: Value = serde_json::from_str(&args).unwrap();
    let report = scenario(&args).await;
    println!("\n{MARK}{report}");
    // The report is out; a runtime kept alive by a stuck exporter thread must not keep the
    // process (the report says whether the guard came back).
    std::process::exit(0);
}

/// Sets export up as `args` say, runs the agent, shuts the export down, and reports: the run
/// (`final_text`, `paused`, `usage`, `cost`), or `install_error`; and `shutdown`, the guard's
/// [`agent_otel::ExportStats`] or `"hung"` when it did not come back within 30 s.
async fn scenario(args: &Value) -> Value {
    let mut otlp = Otlp::from_env().service_name("agent-otel-tests");
    if let Some(endpoint) = args["endpoint"].as_str() {
        otlp = otlp.endpoint(endpoint);
    }
    if args["grpc"] == true {
        otlp = otlp.protocol(Protocol::Grpc);
    }
    if let Some(on) = args["content"].as_bool() {
        otlp = otlp.record_content(on);
    }
    if let Some(project) = args["project"].as_str() {
        otlp = otlp.resource_attribute("openinference.project.name", project);
    }
    if let Some(secs) = args["shutdown_secs"].as_u64() {
        otlp = otlp.shutdown_timeout(Duration::from_secs(secs));
    }
    let guard = match otlp.install() {
        Ok(guard) => guard,
        Err(error) => {
            return json!({
                "install_error": error.to_string(),
                "subscriber_set": tracing::dispatcher::has_been_set(),
            });
        }
    };
    let state_file = args["state_file"].as_str().map(PathBuf::from);
    let mut report = match args["mode"].as_str().unwrap() {
        "tree" => {
            let goal = args["goal_chars"]
                .as_u64()
                .map(|n| format!("{} {}", agent::GOAL, "w".repeat(n as usize)));
            outcome(&agent::tree(goal).await)
        }
        "pause" => {
            let paused = agent::pause().await;
            let state = paused.state.as_deref().expect("the run paused");
            save(state_file.as_deref().unwrap(), state);
            outcome(&paused)
        }
        "resume" => {
            let state = load(state_file.as_deref().unwrap());
            outcome(&agent::resume(state).await)
        }
        "nested-pause" => {
            let paused = agent::nested_pause().await;
            let state = paused.state.as_deref().expect("the run paused");
            save(state_file.as_deref().unwrap(), state);
            outcome(&paused)
        }
        "nested-resume" => {
            let state = load(state_file.as_deref().unwrap());
            outcome(&agent::nested_resume(state).await)
        }
        "twice" => match Otlp::from_env().install() {
            Ok(_) => json!({"second_install": "accepted"}),
            Err(error) => json!({"second_install": error.to_string()}),
        },
        other => panic!("no scenario {other}"),
    };
    report["endpoint"] = json!(guard.settings().endpoint);
    let stopped = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || guard.shutdown()),
    )
    .await;
    report["shutdown"] = match stopped {
        Ok(Ok(stats)) => json!({
            "exported_spans": stats.exported_spans,
            "failed_spans": stats.failed_spans,
            "failed_batches": stats.failed_batches,
        }),
        Ok(Err(panicked)) => json!(format!("panicked: {panicked}")),
        Err(_) => json!("hung"),
    };
    report
}

fn outcome(outcome: &RunOutcome) -> Value {
    let usage = &outcome.usage;
    json!({
        "final_text": outcome.final_text,
        "paused": outcome.state.is_some(),
        "usage": {
            // As the conventions count input tokens: the cached part too.
            "input_tokens": usage.prompt_tokens(),
            "output_tokens": usage.output_tokens,
        },
        "cost": outcome.cost.is_complete().then(|| outcome.cost.total().as_dollars()),
    })
}

/// Writes `state` to `path` whole or not at all (a temporary file renamed over it).
fn save(path: &Path, state: &RunState) {
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, serde_json::to_vec(state).unwrap()).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

fn load(path: &Path) -> RunState {
    let file = std::fs::File::open(path).unwrap();
    let mut text = String::new();
    file.take(MAX_STATE_BYTES + 1)
        .read_to_string(&mut text)
        .unwrap();
    assert!(
        text.len() as u64 <= MAX_STATE_BYTES,
        "{} is too big",
        path.display()
    );
    serde_json::from_str(&text).unwrap()
}
