//! What the AG-UI tests share: a scripted agent (a read-only skill, a destructive one that
//! counts its runs behind a permission gate, whose input has an enum, a struct that refers to
//! itself, an `Option` and a `Vec` of structs beside the branch's name), served on loopback, and
//! the official client run with node against it.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_agui::AguiServer;
use agent_core::{Permission, PermissionGate, Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const TOKEN: &str = "agui-test-token-0123456789abcdef";
/// How long anything here may take before the test fails: a bound on liveness, not a timing.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// How many times `delete_branch` ran, in every test.
pub static DELETED: AtomicUsize = AtomicUsize::new(0);

/// Looks up a branch.
///
/// # Arguments
/// * `name` - The branch.
#[skill(read_only, register = false)]
async fn lookup(name: String) -> Result<String, SkillError> {
    Ok(format!("{name}: 3 commits ahead"))
}

/// How a branch is deleted.
#[derive(Debug, serde::Deserialize, agent_core::schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", rename_all = "snake_case")]
#[schemars(crate = "agent_core::schemars")]
enum Mode {
    Soft,
    Hard,
}

/// Who signed off on a deletion, after whose sign-off.
// A type that refers to itself: its schema stays under `$defs`, reached by `$ref` (every other
// type of a skill's input is inlined), so the console's check follows a reference.
#[derive(Debug, serde::Deserialize, agent_core::schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
struct SignOff {
    /// Who.
    by: String,
    /// The sign-off this one came after.
    after: Option<Box<SignOff>>,
}

/// A branch kept for a while.
#[derive(Debug, serde::Deserialize, agent_core::schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
struct Keep {
    /// The branch.
    branch: String,
    /// For how many days.
    days: u32,
}

/// Deletes a branch.
///
/// # Arguments
/// * `name` - The branch.
/// * `mode` - How.
/// * `sign_off` - Who signed off.
/// * `keep` - Branches kept for a while.
#[skill(destructive, register = false)]
async fn delete_branch(
    name: String,
    mode: Option<Mode>,
    sign_off: Option<SignOff>,
    #[arg(default)] keep: Vec<Keep>,
) -> Result<String, SkillError> {
    DELETED.fetch_add(1, Ordering::SeqCst);
    Ok(deleted(&name, mode, sign_off.as_ref(), &keep))
}

/// What `delete_branch` answers: the branch, and what else it was given, so a test sees the
/// arguments the skill saw (`deleted stale (hard; signed off by ann after bob; keeping main 7
/// days)`).
fn deleted(name: &str, mode: Option<Mode>, sign_off: Option<&SignOff>, keep: &[Keep]) -> String {
    let mut given: Vec<String> = mode
        .map(|m| format!("{m:?}").to_lowercase())
        .into_iter()
        .collect();
    let mut by = Vec::new();
    let mut next = sign_off;
    while let Some(one) = next {
        by.push(one.by.as_str());
        next = one.after.as_deref();
    }
    if !by.is_empty() {
        given.push(format!("signed off by {}", by.join(" after ")));
    }
    given.extend(
        keep.iter()
            .map(|k| format!("keeping {} {} days", k.branch, k.days)),
    );
    match given.is_empty() {
        true => format!("deleted {name}"),
        false => format!("deleted {name} ({})", given.join("; ")),
    }
}

/// The registry: both skills, destructive calls asked about.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    registry.add(DeleteBranchSkill);
    registry.with_hook(PermissionGate::with(|_, m| {
        if m.is_destructive {
            Permission::Ask("deletes a branch for good".into())
        } else {
            Permission::Allow
        }
    }));
    registry
}

/// A registry of the read-only skill alone: an agent over it may run beside other calls.
pub fn readers() -> Registry {
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    registry
}

/// A streaming runtime on these scripted replies.
pub fn runtime(replies: impl IntoIterator<Item = MockReply>) -> AgentRuntime {
    AgentRuntime::new(MockProvider::new(replies), registry()).streaming(true)
}

/// A call of `skill` with `{"name": name}`.
pub fn call(id: &str, skill: &str, name: &str) -> MockReply {
    MockReply::tool_calls([ToolCall::new(id, skill, json!({"name": name}))])
}

/// `server` served on a loopback port; the task serving it.
pub async fn serve(server: AguiServer) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        server
            .bearer_token(TOKEN)
            .serve(listener)
            .await
            .expect("serves");
    });
    (addr, task)
}

/// The `node_modules` holding `@ag-ui/client` 1.0.0 and the `@ag-ui/core` it depends on:
/// `AGENT_AGUI_NODE_MODULES` if set, else installed once under the test target's directory.
pub fn node_modules() -> PathBuf {
    if let Some(dir) = std::env::var_os("AGENT_AGUI_NODE_MODULES") {
        return PathBuf::from(dir);
    }
    let package = test_support::provision::npm_program(
        env!("CARGO_TARGET_TMPDIR"),
        "AGENT_AGUI_CLIENT_PACKAGE",
        "@ag-ui/client@1.0.0",
        "@ag-ui/client/package.json",
    );
    package
        .ancestors()
        .nth(3)
        .expect("node_modules/@ag-ui/client/package.json")
        .to_path_buf()
}

/// Runs the official client over `turns` on `thread`; its report.
pub async fn client(addr: SocketAddr, thread: &str, turns: Value) -> Value {
    let modules = node_modules();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agui_client.cjs");
    let run = tokio::process::Command::new("node")
        .arg(&script)
        .arg(format!("http://{addr}{}", agent_agui::AGUI_PATH))
        .arg(TOKEN)
        .arg(thread)
        .arg(turns.to_string())
        .env("NODE_PATH", &modules)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(PATIENCE, run)
        .await
        .expect("the client finished")
        .unwrap_or_else(|e| {
            panic!("node could not start ({e}): install Node.js 18 or later (https://nodejs.org)")
        });
    assert!(
        output.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client's report is JSON")
}

/// The types of a turn's events.
pub fn types(turn: &Value) -> Vec<String> {
    turn["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

/// Asserts every event of every turn passed `@ag-ui/core`'s schemas.
pub fn all_valid(report: &Value) {
    for (n, turn) in report["turns"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            turn["invalid"],
            json!([]),
            "turn {n}: events the schemas refuse"
        );
    }
}

/// A runtime whose model calls the agent `janitor`, whose own model calls `delete_branch`
/// (asked about: the run pauses), then answers `child_answer`.
pub fn nested(child_answer: &str) -> AguiServer {
    let child = AgentRuntime::new(
        MockProvider::new([
            call("c1", "delete_branch", "old"),
            MockReply::text(child_answer),
        ]),
        registry(),
    )
    .streaming(true);
    let mut parent = Registry::new();
    parent.add(child.into_skill("janitor", "Cleans up branches."));
    let runtime = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new(
                "p1",
                "janitor",
                json!({"goal": "delete the old branch"}),
            )]),
            MockReply::text("All clean."),
        ]),
        parent,
    )
    .streaming(true);
    AguiServer::new(runtime).skill_schemas(&registry())
}

/// One `GET` over a fresh connection: the status, the headers (lowercase), the body.
pub async fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    send(addr, "GET", path, headers).await
}

/// One bodiless request over a fresh connection: the status, the headers (lowercase), the body.
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n"
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head.to_lowercase(), body.to_owned())
}

/// The thread `id` in the server's listing; `None` while it is not listed.
pub async fn listed(addr: SocketAddr, id: &str) -> Option<Value> {
    let auth = format!("Bearer {TOKEN}");
    let (status, _, body) = get(addr, "/agui/threads", &[("Authorization", &auth)]).await;
    assert_eq!(status, 200, "{body}");
    let listing: Value = serde_json::from_str(&body).unwrap();
    listing["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .cloned()
}

/// A `POST` of `body` to the endpoint with the token, over a fresh connection: the events of
/// the answer, in order.
pub async fn post_events(addr: SocketAddr, body: &Value) -> Vec<Value> {
    let body = body.to_string();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        agent_agui::AGUI_PATH,
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("answered")
        .unwrap();
    String::from_utf8_lossy(&answer)
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}
