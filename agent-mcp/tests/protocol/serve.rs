//! Our server, seen by rmcp's client: over an in-memory duplex, and over HTTP on loopback.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{PermissionGate, Registry, SkillContext, SkillError, skill};
use agent_mcp::{McpServer, McpSkills};
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{MaybeSendFuture, NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

/// Shout the text.
///
/// # Arguments
/// * `text` - What to shout.
#[skill(read_only, register = false)]
async fn shout(text: String) -> Result<String, SkillError> {
    Ok(text.to_uppercase())
}

/// Wipe the disk.
#[skill(destructive, register = false)]
async fn wipe() -> Result<String, SkillError> {
    Err(SkillError::Safety("not on this machine".into()))
}

/// Launch the rocket.
///
/// # Arguments
/// * `target` - Where to.
#[skill(defer, search_hint = "rocket launch space", register = false)]
async fn launch(target: String) -> Result<String, SkillError> {
    Ok(format!("launched to {target}"))
}

/// Say a lot.
#[skill(read_only, register = false)]
async fn chatter() -> Result<String, SkillError> {
    Ok("blah ".repeat(100))
}

/// Report as JSON.
#[skill(read_only, register = false)]
async fn report() -> Result<Value, SkillError> {
    Ok(json!({"status": "green", "count": 3}))
}

/// Write something.
#[skill(register = false)]
async fn scribble() -> Result<String, SkillError> {
    Ok("scribbled".into())
}

/// Wait forever.
#[skill(read_only, timeout = "100ms", register = false)]
async fn stall() -> Result<String, SkillError> {
    std::future::pending::<()>().await;
    unreachable!("pending never finishes")
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .add(ShoutSkill)
        .add(WipeSkill)
        .add(LaunchSkill)
        .add(ChatterSkill)
        .add(ReportSkill)
        .add(ScribbleSkill)
        .add(StallSkill)
        .with_output_budget(60)
        .with_hook(PermissionGate::new(|name, _| name != "scribble"));
    registry
}

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Recorder {
    list_changed: Arc<AtomicUsize>,
    notify: Arc<Notify>,
}

impl ClientHandler for Recorder {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_one();
        std::future::ready(())
    }
}

async fn connect(server: McpServer) -> RunningService<RoleClient, Recorder> {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    Recorder::default()
        .serve(client_end)
        .await
        .expect("the handshake succeeds")
}

async fn call(
    client: &RunningService<RoleClient, Recorder>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .expect("a tool call is answered with a result, never a JSON-RPC error")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn find<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("`{name}` is listed"))
}

#[tokio::test]
async fn tools_are_listed_with_schema_description_and_annotations() {
    let client = connect(McpServer::new(registry())).await;
    let info = client.peer_info().expect("the server introduced itself");
    assert_eq!(info.server_info.as_ref().unwrap().name, "eugene");
    let tools_capability = info.capabilities.tools.as_ref().expect("tools capability");
    assert_eq!(tools_capability.list_changed, Some(true));

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "shout",
            "wipe",
            "tool_search",
            "chatter",
            "report",
            "scribble",
            "stall"
        ],
        "deferred `launch` is not listed before tool_search loads it"
    );
    let shout = find(&tools, "shout");
    assert_eq!(shout.description.as_deref(), Some("Shout the text."));
    assert_eq!(shout.input_schema["required"], json!(["text"]));
    assert_eq!(
        shout.input_schema["properties"]["text"]["description"],
        "What to shout."
    );
    let annotations = shout.annotations.as_ref().unwrap();
    assert_eq!(
        (annotations.read_only_hint, annotations.destructive_hint),
        (Some(true), Some(false))
    );
    let annotations = find(&tools, "wipe").annotations.as_ref().unwrap();
    assert_eq!(
        (annotations.read_only_hint, annotations.destructive_hint),
        (Some(false), Some(true))
    );
    let annotations = find(&tools, "scribble").annotations.as_ref().unwrap();
    assert_eq!(
        (annotations.read_only_hint, annotations.destructive_hint),
        (Some(false), Some(false))
    );
}

#[tokio::test]
async fn calls_answer_results_and_every_failure_is_an_error_result() {
    let client = connect(McpServer::new(registry())).await;

    let ok = call(&client, "shout", json!({"text": "hi"})).await;
    assert_eq!((text(&ok), ok.is_error), ("HI".to_owned(), Some(false)));

    let refused = call(&client, "wipe", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(text(&refused), "refused for safety: not on this machine");

    let unknown = call(&client, "shuot", json!({"text": "hi"})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).contains("did you mean `shout`"),
        "{}",
        text(&unknown)
    );

    let bad = call(&client, "shout", json!({"txt": "hi"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text(&bad).starts_with("invalid arguments: `"),
        "{}",
        text(&bad)
    );
}

#[tokio::test]
async fn calls_go_through_hooks_timeouts_and_truncation() {
    let client = connect(McpServer::new(registry())).await;

    let denied = call(&client, "scribble", json!({})).await;
    assert_eq!(denied.is_error, Some(true));
    assert!(
        text(&denied).starts_with("denied: permission to run `scribble` was not granted"),
        "{}",
        text(&denied)
    );

    let long = call(&client, "chatter", json!({})).await;
    assert_eq!(long.is_error, Some(false));
    assert!(text(&long).starts_with("blah blah"));
    assert!(text(&long).contains("[output truncated"), "{}", text(&long));
    assert!(text(&long).len() < 500);

    let stalled = call(&client, "stall", json!({})).await;
    assert_eq!(stalled.is_error, Some(true));
    assert!(
        text(&stalled).starts_with("timed out after 100ms"),
        "{}",
        text(&stalled)
    );
}

#[tokio::test]
async fn json_objects_are_also_structured_content() {
    let client = connect(McpServer::new(registry())).await;
    let report = call(&client, "report", json!({})).await;
    assert_eq!(
        report.structured_content,
        Some(json!({"status": "green", "count": 3}))
    );
    assert_eq!(text(&report), r#"{"status":"green","count":3}"#);
}

#[tokio::test]
async fn tool_search_loads_deferred_skills_and_notifies_list_changed() {
    let shared = Arc::new(registry());
    let client = connect(McpServer::new(shared.clone()).context(SkillContext::new("."))).await;
    let other = connect(McpServer::new(shared).context(SkillContext::new("."))).await;

    let found = call(&client, "tool_search", json!({"query": "rocket"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    tokio::time::timeout(Duration::from_secs(30), client.service().notify.notified())
        .await
        .expect("notifications/tools/list_changed arrives");
    assert_eq!(client.service().list_changed.load(Ordering::SeqCst), 1);

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        find(&tools, "launch").input_schema["required"],
        json!(["target"])
    );
    let launched = call(&client, "launch", json!({"target": "mars"})).await;
    assert_eq!(text(&launched), "launched to mars");

    // Another connection has a session of its own.
    let tools = other.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "launch"));

    // A search that loads nothing new sends no notification.
    let again = call(&client, "tool_search", json!({"query": "rocket"})).await;
    assert_eq!(again.is_error, Some(false));
    let _ = call(&client, "shout", json!({"text": "sync"})).await;
    assert_eq!(client.service().list_changed.load(Ordering::SeqCst), 1);
}

async fn http_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // `McpSkills::connect_http` sends no token: a loopback server without authentication.
    // (tests/http_security.rs covers the token.)
    tokio::spawn(
        McpServer::new(registry())
            .without_auth()
            .serve_http_on(listener),
    );
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn http_serves_our_registry_to_mcp_skills_with_a_session_per_client() {
    let url = http_server().await;
    let remote = McpSkills::connect_http(url.as_str())
        .await
        .expect("connects over HTTP")
        .with_prefix("remote_");
    let mut registry = Registry::new();
    let names = remote.add_to(&mut registry).unwrap();
    assert!(names.contains(&"remote_shout".to_owned()), "{names:?}");
    assert!(registry.metadata("remote_shout").unwrap().is_read_only);
    assert!(registry.metadata("remote_wipe").unwrap().is_destructive);

    let ctx = SkillContext::default();
    let call = |name: &str, args: Value| agent_core::ToolCall::new("c", name, args);
    let shouted = registry
        .run_one(&call("remote_shout", json!({"text": "http"})), &ctx)
        .await;
    assert_eq!(shouted.content(), "HTTP");
    // A remote destructive tool waits for a person here, as a local one would: not sent.
    let asked = registry
        .run_one(&call("remote_wipe", json!({})), &ctx)
        .await;
    assert!(
        matches!(asked.output, Err(SkillError::ApprovalRequired(_))),
        "{:?}",
        asked.output
    );
    registry.destructive_calls(agent_core::DestructiveCalls::Allow);
    let wiped = registry
        .run_one(&call("remote_wipe", json!({})), &ctx)
        .await;
    assert!(wiped.is_error());
    assert_eq!(wiped.content(), "refused for safety: not on this machine");

    // Loading a deferred skill in one HTTP session leaves the others alone.
    let searched = registry
        .run_one(
            &call("remote_tool_search", json!({"query": "rocket"})),
            &ctx,
        )
        .await;
    assert!(!searched.is_error(), "{}", searched.content());
    let first = ()
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            url.as_str(),
        ))
        .await
        .unwrap();
    let second = ()
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            url.as_str(),
        ))
        .await
        .unwrap();
    let loaded = first
        .call_tool(
            CallToolRequestParams::new("tool_search")
                .with_arguments(json!({"query": "rocket"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(loaded.is_error, Some(false));
    assert!(
        first
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "launch")
    );
    assert!(
        second
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .all(|t| t.name != "launch")
    );
}

#[tokio::test]
async fn http_answers_404_off_the_mcp_path() {
    let url = http_server().await;
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(
            format!("GET /other HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    assert!(response.contains("/mcp"));
}

/// An agent used as a skill is served like any skill: its goal schema listed, its answer the
/// call's result; one that pauses for a decision is an error result naming the inner call (an
/// MCP client cannot continue it).
#[tokio::test]
async fn an_agent_used_as_a_skill_is_served_like_any_skill() {
    use agent_core::ToolCall;
    use agent_llm::{MockProvider, MockReply};
    use agent_runtime::AgentRuntime;

    let mut tools = Registry::new();
    tools.add(ShoutSkill).add(WipeSkill);
    let child = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("c1", "shout", json!({"text": "hi"}))]),
            MockReply::text("It said HI."),
            MockReply::tool_calls([ToolCall::new("c2", "wipe", json!({}))]),
        ]),
        tools,
    );
    let mut registry = Registry::new();
    registry.add(child.into_skill("helper", "Shouts for you."));
    let client = connect(McpServer::new(registry)).await;
    let listed = client.list_all_tools().await.unwrap();
    let helper = listed.iter().find(|t| t.name == "helper").unwrap();
    assert_eq!(
        Value::Object((*helper.input_schema).clone())["required"],
        json!(["goal"])
    );
    let answered = call(&client, "helper", json!({"goal": "Shout hi."})).await;
    assert_eq!(
        (text(&answered), answered.is_error),
        ("It said HI.".to_owned(), Some(false))
    );
    let paused = call(&client, "helper", json!({"goal": "Wipe it."})).await;
    assert_eq!(paused.is_error, Some(true));
    assert!(
        text(&paused).contains("waiting for approval of calls made inside this call: `wipe` (c2)"),
        "{}",
        text(&paused)
    );
}
