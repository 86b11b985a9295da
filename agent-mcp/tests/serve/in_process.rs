//! rmcp's client, in process over a duplex pipe: cancellation, limits and refusals that no
//! Python program needs to show.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{AgentSkill, AgentSkillFiles, Registry, SkillContext, SkillError, skill};
use agent_mcp::McpServer;
use agent_mcp::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientRequest, ElicitRequestParams, ElicitResult,
    ErrorCode, GetPromptRequestParams, Implementation, InitializeRequestParams,
    ReadResourceRequestParams, Request,
};
use agent_mcp::rmcp::service::{PeerRequestOptions, RequestContext, RunningService};
use agent_mcp::rmcp::{ClientHandler, ErrorData, RoleClient, ServerHandler, ServiceExt};
use agent_mcp::server::{MAX_PROMPT_ARGUMENT_BYTES, MAX_RESOURCE_BYTES, client_of};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::fixtures;

/// A client that declares elicitation and never answers one: it waits until the request is
/// withdrawn (its token cancelled by `notifications/cancelled`) and records that.
#[derive(Clone, Default)]
struct Silent {
    asked: Arc<Notify>,
    asked_count: Arc<AtomicUsize>,
    withdrawn: Arc<Notify>,
}

impl ClientHandler for Silent {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked_count.fetch_add(1, Ordering::SeqCst);
        self.asked.notify_one();
        context.ct.cancelled().await;
        self.withdrawn.notify_one();
        Err(ErrorData::internal_error("withdrawn", None))
    }

    fn get_info(&self) -> InitializeRequestParams {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        InitializeRequestParams::new(capabilities, Implementation::new("silent", "1"))
    }
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

/// How long a test waits for something that should happen at once (a bound against hangs, not
/// a timing assertion).
const PATIENCE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn cancelling_the_tool_call_withdraws_the_elicitation_it_waits_on() {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    // A long client timeout: what withdraws the request here is the cancellation.
    let server = fixtures::server(skills.path()).client_request_timeout(Duration::from_secs(3600));
    let silent = Silent::default();
    let client = connect(server, silent.clone()).await;
    let call =
        ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("ask_forever")));
    let handle = client
        .send_cancellable_request(call, PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::timeout(PATIENCE, silent.asked.notified())
        .await
        .expect("the skill asks the client");
    handle
        .cancel(Some("the user stopped it".into()))
        .await
        .unwrap();
    tokio::time::timeout(PATIENCE, silent.withdrawn.notified())
        .await
        .expect("the server sent notifications/cancelled for its elicitation");
}

#[tokio::test]
async fn cancelling_the_servers_token_withdraws_the_elicitation_and_cancels_the_call() {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    let token = tokio_util::sync::CancellationToken::new();
    let server = fixtures::server(skills.path())
        .client_request_timeout(Duration::from_secs(3600))
        .context(SkillContext::new(skills.path()).with_cancellation(token.clone()));
    let silent = Silent::default();
    let client = connect(server, silent.clone()).await;
    let peer = client.peer().clone();
    let call = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("ask_forever"))
            .await
            .unwrap()
    });
    tokio::time::timeout(PATIENCE, silent.asked.notified())
        .await
        .expect("the skill asks the client");
    token.cancel();
    tokio::time::timeout(PATIENCE, silent.withdrawn.notified())
        .await
        .expect("the server withdrew its elicitation");
    let result = tokio::time::timeout(PATIENCE, call).await.unwrap().unwrap();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let text = format!("{:?}", result.content);
    assert!(text.contains("cancelled"), "{text}");
}

#[tokio::test]
async fn a_skill_outside_an_mcp_call_is_told_there_is_no_client_to_ask() {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    let server = fixtures::server(skills.path());
    let result = server.call("ask_name", None).await;
    assert_eq!(result.is_error, Some(true));
    let text = format!("{:?}", result.content);
    assert!(
        text.contains("not running as a call of an MCP server"),
        "{text}"
    );
    // And so for a registry used alone, with no server at all.
    let registry = fixtures::registry(skills.path());
    let call = agent_core::ToolCall::new("c1", "ask_model", json!({"question": "?"}));
    let result = registry.run_one(&call, &SkillContext::default()).await;
    let error = result.output.unwrap_err().to_string();
    assert!(
        error.contains("not running as a call of an MCP server"),
        "{error}"
    );
}

/// Ask with a form MCP does not allow (a nested object).
#[skill(read_only, register = false)]
async fn ask_badly(ctx: &SkillContext) -> Result<String, SkillError> {
    let schema = json!({
        "type": "object",
        "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}}
    });
    let answer = client_of(ctx)?.elicit("Where?", schema).await?;
    Ok(format!("{answer:?}"))
}

#[tokio::test]
async fn a_form_mcp_does_not_allow_is_a_tool_error_and_the_client_is_not_asked() {
    let mut registry = Registry::new();
    registry.add(AskBadlySkill);
    let silent = Silent::default();
    let client = connect(McpServer::new(registry), silent.clone()).await;
    let result = client
        .call_tool(CallToolRequestParams::new("ask_badly"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = format!("{:?}", result.content);
    assert!(text.contains("form mode allows"), "{text}");
    // Silent never answers: had the server asked it, the call would not have returned.
    assert_eq!(
        silent.asked_count.load(Ordering::SeqCst),
        0,
        "the client was never asked"
    );
}

#[tokio::test]
async fn capabilities_are_advertised_only_when_there_is_something_behind_them() {
    let bare = McpServer::new(Registry::new()).get_info().capabilities;
    assert!(bare.tools.is_some());
    assert!(
        bare.resources.is_none() && bare.prompts.is_none(),
        "{bare:?}"
    );
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    let full = fixtures::server(skills.path()).get_info().capabilities;
    assert!(
        full.resources.is_some() && full.prompts.is_some(),
        "{full:?}"
    );
    // A client asking a bare server for them gets "method not found".
    let client = connect(McpServer::new(Registry::new()), ()).await;
    let error = client.list_resources(None).await.unwrap_err();
    assert!(
        format!("{error:?}").contains("-32601") || format!("{error}").contains("not found"),
        "{error}"
    );
}

/// Files that claim to hold one file larger than a server serves.
struct Huge(Vec<String>);

impl AgentSkillFiles for Huge {
    fn folder(&self) -> Option<&Path> {
        None
    }
    fn list(&self) -> &[String] {
        &self.0
    }
    fn read(&self, _path: &str) -> Result<Vec<u8>, SkillError> {
        Ok(vec![b'x'; MAX_RESOURCE_BYTES + 1])
    }
}

fn code_of(error: &agent_mcp::rmcp::ServiceError) -> Option<ErrorCode> {
    match error {
        agent_mcp::rmcp::ServiceError::McpError(data) => Some(data.code),
        _ => None,
    }
}

#[tokio::test]
async fn resources_past_the_size_limit_and_uris_never_listed_are_refused() {
    let mut registry = Registry::new();
    registry
        .add_agent_skills([AgentSkill::new("big", "A big one.", "Read data.txt.\n")
            .with_files(Arc::new(Huge(vec!["data.txt".into()])))])
        .unwrap();
    let client = connect(McpServer::new(registry), ()).await;
    let listed: Vec<String> = client
        .list_resources(None)
        .await
        .unwrap()
        .resources
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(listed, ["skill://big/SKILL.md", "skill://big/data.txt"]);
    let error = client
        .read_resource(ReadResourceRequestParams::new("skill://big/data.txt"))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains(&format!("{}", MAX_RESOURCE_BYTES + 1)),
        "{error}"
    );
    for uri in [
        "skill://big/../big/SKILL.md",
        "skill://big/%2E%2E/SKILL.md",
        "skill://other/SKILL.md",
        "file:///etc/passwd",
        "",
    ] {
        let error = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap_err();
        assert_eq!(code_of(&error), Some(ErrorCode(-32002)), "{uri}: {error}");
    }
    let text = client
        .read_resource(ReadResourceRequestParams::new("skill://big/SKILL.md"))
        .await
        .unwrap();
    let body = serde_json::to_value(&text.contents[0]).unwrap();
    assert_eq!(
        body["text"],
        Value::from("---\nname: \"big\"\ndescription: \"A big one.\"\n---\nRead data.txt.\n")
    );
}

#[tokio::test]
async fn prompt_arguments_past_the_size_limit_or_not_strings_are_refused() {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    let client = connect(fixtures::server(skills.path()), ()).await;
    for (arguments, needle) in [
        (
            json!({"path": "x".repeat(MAX_PROMPT_ARGUMENT_BYTES + 1)}),
            "more than".to_string(),
        ),
        (json!({"path": 7}), "must be a string".to_string()),
    ] {
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let error = client
            .get_prompt(GetPromptRequestParams::new("review").with_arguments(arguments))
            .await
            .unwrap_err();
        assert_eq!(code_of(&error), Some(ErrorCode(-32602)), "{error}");
        assert!(error.to_string().contains(&needle), "{error}");
    }
    let error = client
        .get_prompt(GetPromptRequestParams::new("nope"))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("`review`"), "{error}");
}
