//! A server written with rmcp alone (`examples/echo_server.rs`), used through `McpSkills`: over a
//! duplex, as a child process, and by an agent run.

use crate::support;

#[path = "../../examples/echo_server.rs"]
mod echo_server;

use std::time::Duration;

use agent_core::{Registry, SkillContext, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply, Role};
use agent_mcp::{McpError, McpServer, McpSkills};
use agent_runtime::{AgentRuntime, FinishReason};
use echo_server::EchoServer;
use rmcp::ServiceExt;
use serde_json::{Value, json};

/// An empty registry whose destructive calls run. Remote tools without annotations count as
/// destructive; these tests are about what comes back from them (the default, asking a person,
/// is tested in serve.rs).
fn running_remote_tools() -> Registry {
    let mut registry = Registry::new();
    registry.destructive_calls(agent_core::DestructiveCalls::Allow);
    registry
}

async fn echo_over_duplex() -> McpSkills {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = EchoServer::default()
            .serve(server_end)
            .await
            .expect("the server starts");
        let _ = running.waiting().await;
    });
    McpSkills::connect_transport("echo", client_end)
        .await
        .expect("connects")
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("call_1", name, args)
}

#[tokio::test]
async fn tools_become_skills_with_the_servers_schema_and_fail_closed_flags() {
    let echo = echo_over_duplex().await.with_prefix("echo_");
    let mut registry = running_remote_tools();
    let mut names = echo.add_to(&mut registry).unwrap();
    names.sort();
    assert_eq!(
        names,
        [
            "echo_add",
            "echo_crash",
            "echo_echo",
            "echo_fail",
            "echo_hang",
            "echo_text_upper"
        ]
    );

    let remote = echo.tools().iter().find(|t| t.name == "add").unwrap();
    let definition = registry
        .definitions()
        .into_iter()
        .find(|d| d.name == "echo_add")
        .unwrap();
    assert_eq!(definition.description, "Add two integers.");
    assert_eq!(
        definition.input_schema["properties"],
        remote.input_schema["properties"]
    );
    assert_eq!(definition.input_schema["required"], json!(["a", "b"]));

    let flags = |name: &str| {
        let m = registry.metadata(name).unwrap();
        (m.is_read_only, m.is_destructive, m.is_concurrency_safe)
    };
    assert_eq!(
        flags("echo_echo"),
        (true, false, true),
        "readOnlyHint: true"
    );
    assert_eq!(
        flags("echo_add"),
        (false, true, false),
        "no annotations: fail closed"
    );
    assert_eq!(
        flags("echo_text_upper"),
        (false, false, false),
        "destructiveHint: false"
    );
    assert_eq!(flags("echo_crash"), (false, true, false));
}

#[tokio::test]
async fn remote_results_and_errors_come_back_as_skill_results() {
    let echo = echo_over_duplex().await;
    let mut registry = running_remote_tools();
    echo.add_to(&mut registry).unwrap();
    let ctx = SkillContext::default();

    let added = registry
        .run_one(&call("add", json!({"a": 2, "b": 40})), &ctx)
        .await;
    assert_eq!((added.content().as_ref(), added.is_error()), ("42", false));

    let upper = registry
        .run_one(&call("text_upper", json!({"text": "mcp"})), &ctx)
        .await;
    assert_eq!(upper.content(), "MCP");

    let failed = registry.run_one(&call("fail", json!({})), &ctx).await;
    assert!(matches!(failed.output, Err(SkillError::Tool { .. })));
    assert_eq!(failed.content(), "the disk is on fire");

    let not_object = registry.run_one(&call("echo", json!([1, 2])), &ctx).await;
    assert!(
        matches!(not_object.output, Err(SkillError::BadArgs { .. })),
        "{:?}",
        not_object.output
    );

    // The server validates the rest; its JSON-RPC error is a tool error the model can read.
    let wrong = registry
        .run_one(&call("add", json!({"a": "two"})), &ctx)
        .await;
    assert!(wrong.is_error());
    assert!(
        wrong.content().contains("invalid type"),
        "{}",
        wrong.content()
    );
}

#[tokio::test]
async fn a_call_that_never_answers_times_out() {
    let echo = echo_over_duplex()
        .await
        .with_call_timeout(Duration::from_millis(200));
    let mut registry = running_remote_tools();
    echo.add_to(&mut registry).unwrap();
    let hung = registry
        .run_one(&call("hang", json!({})), &SkillContext::default())
        .await;
    assert!(
        matches!(hung.output, Err(SkillError::Timeout(_))),
        "{:?}",
        hung.output
    );
    // The connection is still usable afterwards.
    let echoed = registry
        .run_one(
            &call("echo", json!({"text": "still here"})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(echoed.content(), "still here");
}

#[tokio::test]
async fn names_that_are_taken_add_nothing() {
    let echo = echo_over_duplex().await;
    let mut registry = running_remote_tools();
    echo.add_to(&mut registry).unwrap();
    let before = registry.len();
    let again = echo_over_duplex().await;
    let error = again.add_to(&mut registry).unwrap_err();
    assert!(matches!(error, McpError::Registry(_)), "{error}");
    assert_eq!(registry.len(), before);
    assert!(matches!(
        again.reconnect().await,
        Err(McpError::NotReconnectable { .. })
    ));
}

#[tokio::test]
async fn an_agent_runs_a_remote_tool() {
    let echo = echo_over_duplex().await.with_prefix("echo_");
    let mut registry = running_remote_tools();
    echo.add_to(&mut registry).unwrap();
    let model = MockProvider::new([
        MockReply::tool_calls([
            ToolCall::new("c1", "echo_echo", json!({"text": "hello from MCP"})),
            ToolCall::new("c2", "echo_fail", json!({})),
        ]),
        MockReply::text("The server said hello."),
    ]);
    let runtime = AgentRuntime::new(model, registry);
    let outcome = runtime
        .run("Say hello through the echo server.")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(
        outcome.final_text.as_deref(),
        Some("The server said hello.")
    );
    let results: Vec<_> = outcome
        .transcript
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            (
                m.tool_call_id.as_deref().unwrap(),
                m.content.as_str(),
                m.is_error,
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("c1", "hello from MCP", false),
            ("c2", "the disk is on fire", true)
        ]
    );
}

#[tokio::test]
async fn a_child_process_that_exits_gives_errors_and_can_be_reconnected() {
    let server = support::example("echo_server");
    let echo = McpSkills::connect_stdio(&server, std::iter::empty::<&str>())
        .await
        .expect("the child process answers")
        .with_prefix("echo_");
    assert_eq!(echo.server_info().unwrap().name, "rmcp");
    let mut registry = running_remote_tools();
    echo.add_to(&mut registry).unwrap();
    let ctx = SkillContext::default();

    let echoed = registry
        .run_one(&call("echo_echo", json!({"text": "one"})), &ctx)
        .await;
    assert_eq!(echoed.content(), "one");

    let crashed = registry.run_one(&call("echo_crash", json!({})), &ctx).await;
    assert!(crashed.is_error());
    assert!(
        crashed.content().contains("is not running") && crashed.content().contains("3"),
        "{}",
        crashed.content()
    );
    let after = registry
        .run_one(&call("echo_echo", json!({"text": "two"})), &ctx)
        .await;
    assert!(after.is_error());
    assert!(
        after.content().contains("is not running"),
        "{}",
        after.content()
    );
    assert!(!echo.is_connected());

    echo.reconnect().await.expect("a new process starts");
    assert!(echo.is_connected());
    let echoed = registry
        .run_one(&call("echo_echo", json!({"text": "three"})), &ctx)
        .await;
    assert_eq!(echoed.content(), "three");

    echo.close().await;
    let closed = registry
        .run_one(&call("echo_echo", json!({"text": "four"})), &ctx)
        .await;
    assert!(closed.content().contains("closed"), "{}", closed.content());
}

#[tokio::test]
async fn a_command_that_is_no_mcp_server_fails_to_connect_with_a_reason() {
    let error = McpSkills::connect_stdio("sh", ["-c", "exit 7"])
        .await
        .unwrap_err();
    let McpError::Connect { server, message } = &error else {
        panic!("expected Connect, got {error:?}");
    };
    assert_eq!(server, "`sh -c exit 7`");
    assert!(message.contains("exit status: 7"), "{message}");

    let error = McpSkills::connect_stdio("/nonexistent/mcp-server", ["x"])
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Io { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("starting the MCP server `/nonexistent/mcp-server x`")
    );
}

/// A server with tools `McpSkills` must be careful with: `report` fails with its details in
/// `structuredContent` only, and `raw` (listed last) takes a string, not an object.
#[derive(Clone)]
struct OddServer;

impl rmcp::ServerHandler for OddServer {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let schema = |value: Value| value.as_object().unwrap().clone();
        Ok(rmcp::model::ListToolsResult::with_all_items(vec![
            rmcp::model::Tool::new(
                "report",
                "Fails with structured details.",
                schema(json!({"type": "object"})),
            ),
            rmcp::model::Tool::new(
                "raw",
                "Takes a bare string.",
                schema(json!({"type": "string"})),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        _request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let mut result = rmcp::model::CallToolResult::error(vec![]);
        result.structured_content = Some(json!({"code": "E_QUOTA", "retry_after": 30}));
        Ok(result.into())
    }
}

async fn odd_over_duplex() -> McpSkills {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = OddServer
            .serve(server_end)
            .await
            .expect("the server starts");
        let _ = running.waiting().await;
    });
    McpSkills::connect_transport("odd", client_end)
        .await
        .expect("connects")
}

#[tokio::test]
async fn a_tool_whose_input_is_not_an_object_adds_nothing() {
    let odd = odd_over_duplex().await;
    let mut registry = running_remote_tools();
    let before = registry.len();
    let error = odd.add_to(&mut registry).unwrap_err();
    assert!(error.to_string().contains("raw"), "{error}");
    assert_eq!(
        registry.len(),
        before,
        "{:?}",
        registry.names().collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn an_error_result_with_only_structured_content_keeps_its_details() {
    let odd = odd_over_duplex().await;
    let report = odd
        .skills()
        .into_iter()
        .find(|s| s.name() == "report")
        .unwrap();
    let mut registry = running_remote_tools();
    registry.try_add_shared(report).unwrap();
    let failed = registry
        .run_one(&call("report", json!({})), &SkillContext::default())
        .await;
    assert!(matches!(failed.output, Err(SkillError::Tool { .. })));
    assert!(
        failed.content().contains("E_QUOTA") && failed.content().contains("retry_after"),
        "{}",
        failed.content()
    );
}

static STALL_STARTED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Wait forever.
#[skill(read_only, register = false)]
async fn stall() -> Result<String, SkillError> {
    STALL_STARTED.notify_one();
    std::future::pending::<()>().await;
    unreachable!("pending never finishes")
}

#[tokio::test]
async fn an_http_server_that_dies_mid_call_fails_the_call_before_its_time_limit() {
    // The server runs on a runtime of its own, on its own thread, so it can die whole.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (kill, killed) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.spawn(async move {
            let mut registry = Registry::new();
            registry.add(StallSkill);
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = McpServer::new(registry)
                .without_auth()
                .serve_http_on(listener)
                .await;
        });
        let _ = killed.recv();
        runtime.shutdown_background();
    });
    let remote = McpSkills::connect_http(&url)
        .await
        .unwrap()
        .with_call_timeout(Duration::from_secs(120));
    let mut registry = running_remote_tools();
    remote.add_to(&mut registry).unwrap();
    let (stall, ctx) = (call("stall", json!({})), SkillContext::default());
    let call = registry.run_one(&stall, &ctx);
    let kill_when_started = async {
        STALL_STARTED.notified().await;
        kill.send(()).unwrap();
    };
    let (result, ()) = tokio::join!(call, kill_when_started);
    server.join().unwrap();
    assert!(
        matches!(result.output, Err(SkillError::Transient(_))),
        "{:?}",
        result.output
    );
    assert!(
        result.content().contains("lost the connection"),
        "{}",
        result.content()
    );
}

#[tokio::test]
async fn an_http_server_that_requires_a_token_is_consumed_with_it_and_refused_without() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let token = agent_mcp::generate_token().unwrap();
    let mut served = Registry::new();
    served.add(StallSkill);
    let server = tokio::spawn(
        McpServer::new(served)
            .bearer_token(token.clone())
            .serve_http_on(listener),
    );
    let without = McpSkills::connect_http(&url).await;
    assert!(
        without.is_err(),
        "a server with a token let a client in without it"
    );
    let remote = McpSkills::connect_http_with_token(&url, token)
        .await
        .unwrap();
    let mut registry = running_remote_tools();
    remote.add_to(&mut registry).unwrap();
    assert!(registry.contains("stall"));
    server.abort();
}
