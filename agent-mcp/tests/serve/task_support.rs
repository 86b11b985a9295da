//! What the task tests share: the skills (one that sums after a pause, one that runs until its
//! token fires and says so in files), a client of rmcp's that declares tasks, the server, and
//! polling.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{Registry, SkillContext, SkillError, skill};
use agent_mcp::McpServer;
use agent_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, DetailedTask,
    ElicitRequestParams, ElicitResult, ErrorCode, GetTaskParams, Implementation,
    InitializeRequestParams, TASKS_EXTENSION_ID, TaskPayload, TaskStatus,
};
use agent_mcp::rmcp::service::{RequestContext, RunningService};
use agent_mcp::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use agent_mcp::server::TaskSettings;
use serde_json::{Value, json};

use crate::fixtures;

/// How long a test waits for something that should happen (a bound against hangs, not a
/// timing assertion).
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Adds `a` and `b`, after a pause.
///
/// # Arguments
/// * `a` - One number.
/// * `b` - The other.
#[skill(read_only, register = false)]
pub async fn sum_later(a: i64, b: i64) -> Result<i64, SkillError> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    Ok(a + b)
}

/// Runs until cancelled: writes `NAME.started` in the workspace when it starts and
/// `NAME.cancelled` when its cancellation token fires.
///
/// # Arguments
/// * `name` - The name of its marker files.
#[skill(read_only, register = false)]
pub async fn run_until_cancelled(ctx: &SkillContext, name: String) -> Result<String, SkillError> {
    let root = ctx.workspace_root().to_path_buf();
    let token = ctx.cancellation().clone();
    let cancelled = root.join(format!("{name}.cancelled"));
    // A watcher of its own, so that the skill sees the token fire even though the registry
    // drops the call's future when it does.
    tokio::spawn(async move {
        token.cancelled().await;
        let _ = std::fs::write(cancelled, "cancelled");
    });
    std::fs::write(root.join(format!("{name}.started")), "started")
        .map_err(|e| SkillError::tool(e.to_string()))?;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    Ok("the hour passed".into())
}

/// A client that declares tasks and form elicitation, and counts the elicitations sent to it
/// directly (a task must not send any: it asks through `tasks/get`).
#[derive(Clone, Default)]
pub struct TasksClient {
    pub direct_elicitations: Arc<AtomicUsize>,
}

impl ClientHandler for TasksClient {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.direct_elicitations.fetch_add(1, Ordering::SeqCst);
        Err(ErrorData::internal_error("a task asked directly", None))
    }

    fn get_info(&self) -> InitializeRequestParams {
        let capabilities: ClientCapabilities = serde_json::from_value(json!({
            "elicitation": {"form": {}},
            "extensions": {TASKS_EXTENSION_ID: {}}
        }))
        .unwrap();
        InitializeRequestParams::new(capabilities, Implementation::new("tasks-client", "1"))
    }
}

pub struct Served {
    pub workspace: tempfile::TempDir,
    _skills: tempfile::TempDir,
}

impl Served {
    pub fn path(&self, name: &str) -> PathBuf {
        self.workspace.path().join(name)
    }
}

/// The test registry (the fixtures' and this file's skills) served with `settings`, in a fresh
/// workspace.
pub fn server(settings: TaskSettings) -> (McpServer, Served) {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    let workspace = tempfile::tempdir().unwrap();
    let mut registry: Registry = fixtures::registry(skills.path());
    registry.add(SumLaterSkill).add(RunUntilCancelledSkill);
    let server = McpServer::new(registry)
        .context(SkillContext::new(workspace.path()))
        .client_request_timeout(Duration::from_secs(3600))
        .tasks(settings);
    (
        server,
        Served {
            workspace,
            _skills: skills,
        },
    )
}

pub fn settings() -> TaskSettings {
    TaskSettings::for_skills(["sum_later", "run_until_cancelled", "ask_name"])
        .poll_interval(Duration::from_millis(10))
}

pub async fn connect<C: ClientHandler>(
    server: McpServer,
    client: C,
) -> RunningService<RoleClient, C> {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    client
        .serve(client_end)
        .await
        .expect("the handshake succeeds")
}

pub fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// Calls `name` and expects a task: its id.
pub async fn start<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    name: &str,
    arguments: Value,
) -> String {
    match client.call_tool_once(call(name, arguments)).await.unwrap() {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working);
            assert!(created.task.ttl_ms.is_some(), "{created:?}");
            created.task.task_id
        }
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Polls `tasks/get` until `done` holds, bounded by [`PATIENCE`].
pub async fn poll_until<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    id: &str,
    done: impl Fn(&DetailedTask) -> bool,
) -> DetailedTask {
    tokio::time::timeout(PATIENCE, async {
        loop {
            let got = client
                .get_task(GetTaskParams::new(id.to_owned()))
                .await
                .unwrap();
            if done(&got.task) {
                return got.task;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the task reaches the state awaited")
}

pub async fn until_terminal<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    id: &str,
) -> DetailedTask {
    poll_until(client, id, |task| task.status().is_terminal()).await
}

/// Waits for `path` to exist, bounded by [`PATIENCE`].
pub async fn file_appears(path: &Path) -> String {
    tokio::time::timeout(PATIENCE, async {
        loop {
            if let Ok(text) = std::fs::read_to_string(path) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} appears", path.display()))
}

pub fn completed_result(task: &DetailedTask) -> CallToolResult {
    match &task.payload {
        TaskPayload::Completed { result } => {
            serde_json::from_value(Value::Object(result.clone())).unwrap()
        }
        other => panic!("expected a completed task, got {other:?}"),
    }
}

pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect()
}

pub fn code_of(error: &agent_mcp::rmcp::ServiceError) -> Option<ErrorCode> {
    match error {
        agent_mcp::rmcp::ServiceError::McpError(data) => Some(data.code),
        _ => None,
    }
}
