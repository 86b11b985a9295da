//! What the tests share: a served runtime on a loopback port, the test skills, and running the
//! Python programs.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use agent_a2a::A2aServer;
use agent_core::{
    Permission, PermissionGate, Registry, Skill, SkillContext, SkillError, SkillOutput,
    async_trait, schemars, serde,
};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use serde_json::Value;

pub const TOKEN: &str = "test-token-0123456789abcdef";

/// A server of `runtime` on a free loopback port: its base URL, and the task serving it (aborted
/// when dropped).
pub struct Served {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn serve(server: A2aServer) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        server.serve(listener).await.expect("serves");
    });
    Served { url, task }
}

/// A runtime on these scripted replies with the test skills (`wait`, `delete`, which asks for
/// approval), streaming.
pub fn runtime(replies: Vec<MockReply>) -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(Wait);
    registry.add(Delete);
    registry.with_hook(PermissionGate::with(|_, m| {
        if m.is_destructive {
            Permission::Ask("deletes a file".into())
        } else {
            Permission::Allow
        }
    }));
    AgentRuntime::new(MockProvider::new(replies), registry).streaming(true)
}

pub fn server(replies: Vec<MockReply>) -> A2aServer {
    A2aServer::new(runtime(replies))
        .name("tester")
        .description("A scripted agent for tests.")
        .bearer_token(TOKEN)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
pub struct WaitInput {
    /// Milliseconds.
    pub ms: u64,
}

/// Sleeps `ms` milliseconds (a run that lasts, to cancel or subscribe to).
pub struct Wait;

#[async_trait]
impl Skill for Wait {
    type Input = WaitInput;
    fn name(&self) -> &str {
        "wait"
    }
    fn description(&self) -> &str {
        "Wait a while."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    async fn run(&self, input: WaitInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        tokio::time::sleep(Duration::from_millis(input.ms)).await;
        Ok("waited".into())
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
pub struct DeleteInput {
    /// The file.
    pub path: String,
}

/// A destructive skill: the gate asks before it runs.
pub struct Delete;

#[async_trait]
impl Skill for Delete {
    type Input = DeleteInput;
    fn name(&self) -> &str {
        "delete"
    }
    fn description(&self) -> &str {
        "Delete a file."
    }
    fn is_destructive(&self) -> bool {
        true
    }
    async fn run(&self, input: DeleteInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok(format!("deleted {}", input.path).into())
    }
}

pub fn python() -> PathBuf {
    test_support::provision::python_with_a2a(env!("CARGO_TARGET_TMPDIR"))
}

pub fn program(name: &str) -> String {
    format!("{}/tests/programs/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs the Python SDK client program on a scenario and reads the JSON it prints.
pub async fn python_client(url: &str, token: Option<&str>, scenario: &str) -> Value {
    run_python("a2a_client.py", &[url, token.unwrap_or("-"), scenario]).await
}

/// Runs the Python program `name` (in `tests/programs/`) with `args`, within a minute, and reads
/// the JSON it prints; it must succeed.
pub async fn run_python(name: &str, args: &[&str]) -> Value {
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(python())
            .arg(program(name))
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python client finishes within a minute")
    .expect("the Python client starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python client failed: {stdout}\n{stderr}"
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

/// The Python echo agent on a free port: the child (killed when dropped) and its base URL.
pub async fn python_echo_agent() -> (tokio::process::Child, String) {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let child = tokio::process::Command::new(python())
        .arg(program("echo_agent.py"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the Python echo agent starts");
    let url = format!("http://127.0.0.1:{port}");
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (child, url);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Python echo agent did not listen on {port} within 15 s");
}
