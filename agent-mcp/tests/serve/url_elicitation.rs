//! URL-mode elicitation when serving: a skill sends the client's user to a URL
//! ([`ConnectedClient::elicit_url`](agent_mcp::server::ConnectedClient::elicit_url)) and tells
//! the client when it is done. Against the official Python SDK over stdio
//! (`tests/programs/serve_url_client.py`, which makes the checks), and inside an MCP task
//! against rmcp's client.

use std::time::Duration;

use agent_core::{Registry, SkillContext, SkillError, skill};
use agent_mcp::McpServer;
use agent_mcp::server::{ClientUrlAnswer, client_of};

use crate::python::run_script;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/programs/serve_url_client.py"
);

/// Ask the user to sign in at a URL.
///
/// # Arguments
/// * `url` - Where to sign in.
#[skill(read_only, register = false)]
pub async fn sign_in(ctx: &SkillContext, url: String) -> Result<String, SkillError> {
    let client = client_of(ctx)?;
    Ok(
        match client
            .elicit_url("Sign in to continue.", &url, "sign-in-1")
            .await?
        {
            ClientUrlAnswer::Accept => {
                client.elicitation_complete("sign-in-1").await?;
                "signed in".into()
            }
            ClientUrlAnswer::Decline => "declined".into(),
            ClientUrlAnswer::Cancel => "dismissed".into(),
        },
    )
}

/// The server of these tests. `sign_in` is served as a task to clients that support tasks:
/// the Python SDK (2.3.0) has no tasks client, so it gets plain synchronous calls.
pub fn server() -> McpServer {
    let mut registry = Registry::new();
    registry.add(SignInSkill);
    McpServer::new(registry)
        .client_request_timeout(Duration::from_secs(60))
        .tasks(agent_mcp::server::TaskSettings::for_skills(["sign_in"]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_the_python_sdk_is_sent_to_a_url_and_told_when_it_is_done() {
    run_script(SCRIPT, &["--stdio"], Some(server())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_python_client_without_url_elicitation_gets_a_clear_tool_error() {
    run_script(SCRIPT, &["--stdio-without"], Some(server())).await;
}

/// A client that declares tasks and URL elicitation, and answers nothing directly.
#[derive(Clone)]
struct TasksUrlClient;

impl agent_mcp::rmcp::ClientHandler for TasksUrlClient {
    fn get_info(&self) -> agent_mcp::rmcp::model::InitializeRequestParams {
        use agent_mcp::rmcp::model::{
            ClientCapabilities, Implementation, InitializeRequestParams, TASKS_EXTENSION_ID,
        };
        let capabilities: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "elicitation": {"url": {}},
            "extensions": {TASKS_EXTENSION_ID: {}}
        }))
        .unwrap();
        InitializeRequestParams::new(capabilities, Implementation::new("tasks-url", "1"))
    }
}

#[tokio::test]
async fn in_a_task_a_url_elicitation_is_an_input_request_and_its_answer_resumes_the_skill() {
    use agent_mcp::rmcp::ServiceExt;
    use agent_mcp::rmcp::model::{
        CallToolRequestParams, CallToolResponse, GetTaskParams, InputRequest, TaskPayload,
        TaskStatus, UpdateTaskParams,
    };

    let server = server();
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    let client = TasksUrlClient.serve(client_end).await.unwrap();
    let arguments = serde_json::json!({"url": "https://login.example.com/"});
    let call = CallToolRequestParams::new("sign_in")
        .with_arguments(arguments.as_object().unwrap().clone());
    let CallToolResponse::Task(created) = client.call_tool_once(call).await.unwrap() else {
        panic!("expected a task")
    };
    let id = created.task.task_id;
    let poll = |done: fn(&TaskPayload) -> bool| {
        let client = &client;
        let id = id.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(30), async {
                loop {
                    let got = client
                        .get_task(GetTaskParams::new(id.clone()))
                        .await
                        .unwrap();
                    if done(&got.task.payload) {
                        return got.task;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            })
            .await
            .expect("the task gets there")
        }
    };
    let waiting = poll(|p| matches!(p, TaskPayload::InputRequired { .. })).await;
    let TaskPayload::InputRequired { input_requests } = waiting.payload else {
        unreachable!()
    };
    let (key, InputRequest::Elicitation(request)) = input_requests.into_iter().next().unwrap()
    else {
        panic!("expected an elicitation")
    };
    let asked = serde_json::to_value(&request.params).unwrap();
    assert_eq!(asked["mode"], "url", "{asked}");
    assert_eq!(asked["url"], "https://login.example.com/", "{asked}");
    assert_eq!(asked["elicitationId"], "sign-in-1", "{asked}");
    let answers = [(key, serde_json::json!({"action": "accept"}))].into();
    client
        .update_task(UpdateTaskParams::new(id.clone(), answers))
        .await
        .unwrap();
    let done = poll(|p| matches!(p, TaskPayload::Completed { .. })).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    let TaskPayload::Completed { result } = done.payload else {
        unreachable!()
    };
    assert_eq!(result["content"][0]["text"], "signed in", "{result:?}");
}

/// Ask the user to sign in at a URL, under an id of the caller's choosing.
///
/// # Arguments
/// * `url` - Where to sign in.
/// * `id` - The elicitation's id.
#[skill(read_only, register = false)]
async fn sign_in_as(ctx: &SkillContext, url: String, id: String) -> Result<String, SkillError> {
    let answer = client_of(ctx)?
        .elicit_url("Sign in to continue.", &url, id)
        .await?;
    Ok(format!("{answer:?}"))
}

/// A client that declares URL elicitation, accepts every one and counts them.
#[derive(Clone, Default)]
struct CountingUrlClient(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl agent_mcp::rmcp::ClientHandler for CountingUrlClient {
    async fn create_elicitation(
        &self,
        _request: agent_mcp::rmcp::model::ElicitRequestParams,
        _context: agent_mcp::rmcp::service::RequestContext<agent_mcp::rmcp::RoleClient>,
    ) -> Result<agent_mcp::rmcp::model::ElicitResult, agent_mcp::rmcp::ErrorData> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(serde_json::from_value(serde_json::json!({"action": "accept"})).unwrap())
    }

    fn get_info(&self) -> agent_mcp::rmcp::model::InitializeRequestParams {
        use agent_mcp::rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
        let capabilities: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"elicitation": {"url": {}}})).unwrap();
        InitializeRequestParams::new(capabilities, Implementation::new("counting-url", "1"))
    }
}

#[tokio::test]
async fn an_empty_or_oversized_elicitation_id_is_refused_and_the_client_is_not_asked() {
    use agent_mcp::rmcp::ServiceExt;
    use agent_mcp::rmcp::model::CallToolRequestParams;
    use agent_mcp::server::MAX_ELICITATION_ID_BYTES;

    let mut registry = Registry::new();
    registry.add(SignInAsSkill);
    let server = McpServer::new(registry);
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    let handler = CountingUrlClient::default();
    let client = handler.clone().serve(client_end).await.unwrap();
    let sign_in = |id: String| {
        let arguments = serde_json::json!({"url": "https://login.example.com/", "id": id});
        CallToolRequestParams::new("sign_in_as")
            .with_arguments(arguments.as_object().unwrap().clone())
    };
    for id in [String::new(), "x".repeat(MAX_ELICITATION_ID_BYTES + 1)] {
        let result = client.call_tool(sign_in(id)).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{result:?}");
        assert!(format!("{:?}", result.content).contains("needs an id of 1 to"));
    }
    assert_eq!(handler.0.load(std::sync::atomic::Ordering::SeqCst), 0);
    // The largest id allowed is sent.
    let result = client
        .call_tool(sign_in("x".repeat(MAX_ELICITATION_ID_BYTES)))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(handler.0.load(std::sync::atomic::Ordering::SeqCst), 1);
}
