//! Long-running skills as MCP tasks, against rmcp's client (a peer written by others) in process
//! over a duplex pipe: created at once, polled to the skill's result, cancelled mid-run (the
//! skill sees its token fire), refused past the session's cap, expired past the TTL, asking
//! the client through `input_required`, and unchanged for clients without tasks.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{Registry, SkillContext, SkillError, skill};
use agent_mcp::McpServer;
use agent_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    DetailedTask, ElicitRequestParams, ElicitResult, ErrorCode, GetTaskParams, Implementation,
    InitializeRequestParams, InputRequest, TASKS_EXTENSION_ID, TaskPayload, TaskStatus,
    UpdateTaskParams,
};
use agent_mcp::rmcp::service::{RequestContext, RunningService};
use agent_mcp::rmcp::{ClientHandler, ErrorData, RoleClient, ServerHandler, ServiceExt};
use agent_mcp::server::TaskSettings;
use serde_json::{Value, json};

use crate::fixtures;

/// How long a test waits for something that should happen (a bound against hangs, not a
/// timing assertion).
const PATIENCE: Duration = Duration::from_secs(30);

/// Adds `a` and `b`, after a pause.
///
/// # Arguments
/// * `a` - One number.
/// * `b` - The other.
#[skill(read_only, register = false)]
async fn sum_later(a: i64, b: i64) -> Result<i64, SkillError> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    Ok(a + b)
}

/// Runs until cancelled: writes `NAME.started` in the workspace when it starts and
/// `NAME.cancelled` when its cancellation token fires.
///
/// # Arguments
/// * `name` - The name of its marker files.
#[skill(read_only, register = false)]
async fn run_until_cancelled(ctx: &SkillContext, name: String) -> Result<String, SkillError> {
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
struct TasksClient {
    direct_elicitations: Arc<AtomicUsize>,
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

struct Served {
    workspace: tempfile::TempDir,
    _skills: tempfile::TempDir,
}

impl Served {
    fn path(&self, name: &str) -> PathBuf {
        self.workspace.path().join(name)
    }
}

/// The test registry (the fixtures' and this file's skills) served with `settings`, in a fresh
/// workspace.
fn server(settings: TaskSettings) -> (McpServer, Served) {
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

fn settings() -> TaskSettings {
    TaskSettings::for_skills(["sum_later", "run_until_cancelled", "ask_name"])
        .poll_interval(Duration::from_millis(10))
}

async fn connect<C: ClientHandler>(server: McpServer, client: C) -> RunningService<RoleClient, C> {
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

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// Calls `name` and expects a task: its id.
async fn start<C: ClientHandler>(
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
async fn poll_until<C: ClientHandler>(
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

async fn until_terminal<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    id: &str,
) -> DetailedTask {
    poll_until(client, id, |task| task.status().is_terminal()).await
}

/// Waits for `path` to exist, bounded by [`PATIENCE`].
async fn file_appears(path: &Path) -> String {
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

fn completed_result(task: &DetailedTask) -> CallToolResult {
    match &task.payload {
        TaskPayload::Completed { result } => {
            serde_json::from_value(Value::Object(result.clone())).unwrap()
        }
        other => panic!("expected a completed task, got {other:?}"),
    }
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect()
}

fn code_of(error: &agent_mcp::rmcp::ServiceError) -> Option<ErrorCode> {
    match error {
        agent_mcp::rmcp::ServiceError::McpError(data) => Some(data.code),
        _ => None,
    }
}

#[tokio::test]
async fn a_task_is_handed_out_at_once_and_polled_to_the_skills_result() {
    let (server, _served) = server(settings());
    assert!(
        server.get_info().capabilities.supports_tasks(),
        "the server advertises the extension"
    );
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "sum_later", json!({"a": 40, "b": 2})).await;
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Completed, "{task:?}");
    let result = completed_result(&task);
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text_of(&result), "42");
    // The typed output is served as a synchronous call would serve it.
    assert_eq!(result.structured_content, Some(json!({"result": 42})));
    // A skill not named in the settings is answered synchronously, even to this client.
    let skills = client.list_tools(None).await.unwrap();
    assert!(skills.tools.iter().any(|t| t.name == "ask_model"));
}

#[tokio::test]
async fn cancelling_a_task_fires_the_skills_token_and_the_task_settles_cancelled() {
    let (server, served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "run_until_cancelled", json!({"name": "job"})).await;
    file_appears(&served.path("job.started")).await;
    assert_eq!(
        client
            .get_task(GetTaskParams::new(id.clone()))
            .await
            .unwrap()
            .task
            .status(),
        TaskStatus::Working
    );
    assert!(!served.path("job.cancelled").exists());
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    assert_eq!(
        file_appears(&served.path("job.cancelled")).await,
        "cancelled"
    );
}

#[tokio::test]
async fn past_the_cap_on_open_tasks_the_next_call_is_refused_clearly_and_runs_nothing() {
    let (server, served) = server(settings().max_open(2));
    let client = connect(server, TasksClient::default()).await;
    let first = start(&client, "run_until_cancelled", json!({"name": "one"})).await;
    start(&client, "run_until_cancelled", json!({"name": "two"})).await;
    let refused = client
        .call_tool_once(call("run_until_cancelled", json!({"name": "three"})))
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) = refused else {
        panic!("expected a refusal, got {refused:?}")
    };
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    let text = text_of(&refused);
    assert!(
        text.contains("running 2 tasks") && text.contains("tasks/cancel"),
        "{text}"
    );
    // Nothing ran: the third skill never started.
    file_appears(&served.path("one.started")).await;
    file_appears(&served.path("two.started")).await;
    assert!(!served.path("three.started").exists());
    // Once one has finished, there is room again.
    client
        .cancel_task(CancelTaskParams::new(first.clone()))
        .await
        .unwrap();
    until_terminal(&client, &first).await;
    start(&client, "run_until_cancelled", json!({"name": "four"})).await;
    file_appears(&served.path("four.started")).await;
}

#[tokio::test]
async fn past_the_cap_on_kept_tasks_the_next_call_is_refused_though_all_have_finished() {
    let (server, _served) = server(settings().max_open(1).max_kept(2));
    let client = connect(server, TasksClient::default()).await;
    for _ in 0..2 {
        let id = start(&client, "sum_later", json!({"a": 1, "b": 1})).await;
        until_terminal(&client, &id).await;
    }
    let refused = client
        .call_tool_once(call("sum_later", json!({"a": 1, "b": 1})))
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) = refused else {
        panic!("expected a refusal, got {refused:?}")
    };
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    assert!(text_of(&refused).contains("holds 2 tasks"), "{refused:?}");
}

#[tokio::test]
async fn an_unknown_task_id_is_invalid_params_naming_it() {
    let (server, _served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let error = client
        .get_task(GetTaskParams::new("no-such-task"))
        .await
        .unwrap_err();
    assert_eq!(code_of(&error), Some(ErrorCode::INVALID_PARAMS), "{error}");
    assert!(error.to_string().contains("no-such-task"), "{error}");
    let error = client
        .cancel_task(CancelTaskParams::new("no-such-task"))
        .await
        .unwrap_err();
    assert_eq!(code_of(&error), Some(ErrorCode::INVALID_PARAMS), "{error}");
    let error = client
        .update_task(UpdateTaskParams::new("no-such-task", Default::default()))
        .await
        .unwrap_err();
    assert_eq!(code_of(&error), Some(ErrorCode::INVALID_PARAMS), "{error}");
}

#[tokio::test]
async fn a_task_past_its_ttl_fails_naming_the_ttl_and_its_skill_is_cancelled() {
    let (server, served) = server(settings().ttl(Duration::from_millis(300)));
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "run_until_cancelled", json!({"name": "late"})).await;
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Failed, "{task:?}");
    let TaskPayload::Failed { error } = &task.payload else {
        panic!("{task:?}")
    };
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("TTL"), "{error:?}");
    assert_eq!(
        file_appears(&served.path("late.cancelled")).await,
        "cancelled"
    );
}

#[tokio::test]
async fn a_client_without_tasks_gets_the_plain_result_and_cannot_use_tasks_methods() {
    let (server, _served) = server(settings());
    let client = connect(server, ()).await;
    let result = client
        .call_tool(call("sum_later", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text_of(&result), "5");
    let error = client
        .get_task(GetTaskParams::new("anything"))
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&error),
        Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY),
        "{error}"
    );
}

#[tokio::test]
async fn without_task_settings_nothing_changes_for_a_client_with_tasks() {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    let mut registry = fixtures::registry(skills.path());
    registry.add(SumLaterSkill);
    let server = McpServer::new(registry);
    assert!(!server.get_info().capabilities.supports_tasks());
    let client = connect(server, TasksClient::default()).await;
    match client
        .call_tool_once(call("sum_later", json!({"a": 2, "b": 3})))
        .await
        .unwrap()
    {
        CallToolResponse::Complete(result) => assert_eq!(text_of(&result), "5"),
        other => panic!("expected the plain result, got {other:?}"),
    }
    let error = client
        .get_task(GetTaskParams::new("anything"))
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&error),
        Some(ErrorCode::METHOD_NOT_FOUND),
        "{error}"
    );
}

#[tokio::test]
async fn a_skill_that_elicits_in_a_task_makes_it_input_required_and_tasks_update_answers() {
    let (server, _served) = server(settings());
    let handler = TasksClient::default();
    let client = connect(server, handler.clone()).await;
    let id = start(&client, "ask_name", json!({})).await;
    let waiting = poll_until(&client, &id, |task| {
        task.status() == TaskStatus::InputRequired
    })
    .await;
    let TaskPayload::InputRequired { input_requests } = &waiting.payload else {
        panic!("{waiting:?}")
    };
    assert_eq!(input_requests.len(), 1, "{input_requests:?}");
    let (key, request) = input_requests.iter().next().unwrap();
    let InputRequest::Elicitation(request) = request else {
        panic!("expected an elicitation, got {request:?}")
    };
    let asked = serde_json::to_value(&request.params).unwrap();
    assert_eq!(asked["message"], "Who are you?", "{asked}");
    assert_eq!(asked["mode"], "form", "{asked}");
    let mut answers = std::collections::BTreeMap::new();
    answers.insert(
        key.clone(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    );
    client
        .update_task(UpdateTaskParams::new(id.clone(), answers))
        .await
        .unwrap();
    let task = until_terminal(&client, &id).await;
    let result = completed_result(&task);
    assert_eq!(text_of(&result), "hello, Ada", "{result:?}");
    assert_eq!(
        handler.direct_elicitations.load(Ordering::SeqCst),
        0,
        "the task asked through tasks/get, not elicitation/create"
    );
}

#[tokio::test]
async fn an_answer_that_is_not_an_elicitation_result_fails_the_skill_clearly() {
    let (server, _served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "ask_name", json!({})).await;
    let waiting = poll_until(&client, &id, |task| {
        task.status() == TaskStatus::InputRequired
    })
    .await;
    let TaskPayload::InputRequired { input_requests } = &waiting.payload else {
        panic!("{waiting:?}")
    };
    let key = input_requests.keys().next().unwrap().clone();
    let mut answers = std::collections::BTreeMap::new();
    answers.insert(key, json!({"action": "shrug", "content": 7}));
    client
        .update_task(UpdateTaskParams::new(id.clone(), answers))
        .await
        .unwrap();
    let result = completed_result(&until_terminal(&client, &id).await);
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(text_of(&result).contains("something else"), "{result:?}");
}

#[tokio::test]
async fn when_the_connection_ends_its_running_tasks_are_stopped() {
    let (server, served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    start(&client, "run_until_cancelled", json!({"name": "orphan"})).await;
    file_appears(&served.path("orphan.started")).await;
    client.cancel().await.unwrap();
    assert_eq!(
        file_appears(&served.path("orphan.cancelled")).await,
        "cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_cannot_open_more_tasks_than_the_cap() {
    let (server, _served) = server(settings().max_open(3));
    let client = connect(server, TasksClient::default()).await;
    let calls = (0..16).map(|n| {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            peer.call_tool_once(call("run_until_cancelled", json!({"name": format!("c{n}")})))
                .await
                .unwrap()
        })
    });
    let mut tasks = 0;
    let mut refused = 0;
    for answer in futures_join(calls).await {
        match answer {
            CallToolResponse::Task(_) => tasks += 1,
            CallToolResponse::Complete(result) if result.is_error == Some(true) => refused += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((tasks, refused), (3, 13));
}

async fn futures_join<T>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles {
        out.push(
            tokio::time::timeout(PATIENCE, handle)
                .await
                .expect("answered")
                .unwrap(),
        );
    }
    out
}

#[tokio::test]
async fn cancelling_a_task_waiting_for_input_withdraws_the_request_and_stops_the_skill() {
    let (server, _served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "ask_name", json!({})).await;
    poll_until(&client, &id, |task| {
        task.status() == TaskStatus::InputRequired
    })
    .await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    // An answer that comes too late changes nothing.
    let answers = [(
        "elicitation-1".to_owned(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )]
    .into();
    client
        .update_task(UpdateTaskParams::new(id.clone(), answers))
        .await
        .unwrap();
    let again = client.get_task(GetTaskParams::new(id)).await.unwrap().task;
    assert_eq!(again.status(), TaskStatus::Cancelled, "{again:?}");
}

#[tokio::test]
async fn a_task_that_finished_stays_completed_when_cancelled_late() {
    let (server, _served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "sum_later", json!({"a": 1, "b": 2})).await;
    until_terminal(&client, &id).await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let task = client.get_task(GetTaskParams::new(id)).await.unwrap().task;
    assert_eq!(text_of(&completed_result(&task)), "3");
}

/// rmcp's streamable-HTTP client, with the bearer token, for a server at `url`.
async fn connect_http(url: &str, token: &str) -> RunningService<RoleClient, TasksClient> {
    use agent_mcp::rmcp::transport::StreamableHttpClientTransport;
    use agent_mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    // reqwest is built without a crypto provider; McpSkills::connect_http installs this one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    TasksClient::default()
        .serve(transport)
        .await
        .expect("connects over HTTP")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_tasks_run_polled_and_cancelled_and_another_session_cannot_touch_them() {
    let (server, served) = server(settings());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let token = agent_mcp::generate_token().unwrap();
    let serving = tokio::spawn(server.bearer_token(token.clone()).serve_http_on(listener));
    let one = connect_http(&url, &token).await;
    let two = connect_http(&url, &token).await;

    let sum = start(&one, "sum_later", json!({"a": 20, "b": 22})).await;
    assert_eq!(
        text_of(&completed_result(&until_terminal(&one, &sum).await)),
        "42"
    );

    let id = start(&one, "run_until_cancelled", json!({"name": "mine"})).await;
    file_appears(&served.path("mine.started")).await;
    for error in [
        two.cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .unwrap_err(),
        two.get_task(GetTaskParams::new(id.clone()))
            .await
            .unwrap_err(),
    ] {
        assert_eq!(code_of(&error), Some(ErrorCode::INVALID_PARAMS), "{error}");
    }
    assert!(!served.path("mine.cancelled").exists());
    one.cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(
        until_terminal(&one, &id).await.status(),
        TaskStatus::Cancelled
    );
    assert_eq!(
        file_appears(&served.path("mine.cancelled")).await,
        "cancelled"
    );
    serving.abort();
}
