//! A server written with rmcp that changes its tool list in the ways a client must survive: it
//! floods the client with announcements, lists tools no registry takes, or never answers the
//! list it announced. The call that saw the change still comes back, in bounded time, and the
//! registry keeps what it can take.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{Registry, SkillContext, ToolCall};
use agent_mcp::McpSkills;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

/// What the server's second and later `tools/list` answer.
#[derive(Clone, Copy)]
enum Later {
    /// Never: the request hangs.
    Hang,
    /// Tools of which only `kept` can be a skill.
    Bad,
    /// A JSON-RPC error.
    Fail,
}

/// A server whose tool `grow` announces a change of the tool list `announcements` times before
/// it answers; it counts the lists it is asked for.
#[derive(Clone)]
struct Shifty {
    later: Later,
    announcements: usize,
    lists: Arc<AtomicUsize>,
}

fn tool(name: &str, schema: Value) -> Tool {
    Tool::new(
        name.to_owned(),
        "A tool.",
        schema.as_object().unwrap().clone(),
    )
}

impl rmcp::ServerHandler for Shifty {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let object = json!({"type": "object"});
        let grow = tool("grow", object.clone());
        if self.lists.fetch_add(1, Ordering::SeqCst) == 0 {
            return Ok(ListToolsResult::with_all_items(vec![grow]));
        }
        match self.later {
            Later::Hang => std::future::pending().await,
            Later::Fail => Err(ErrorData::internal_error("the list is not ready", None)),
            Later::Bad => Ok(ListToolsResult::with_all_items(vec![
                grow,
                tool("not an object", object.clone()),
                tool("takes_a_string", json!({"type": "string"})),
                tool("kept", object.clone()),
                tool("kept", object),
            ])),
        }
    }

    async fn call_tool(
        &self,
        _: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        for _ in 0..self.announcements {
            context.peer.notify_tool_list_changed().await.unwrap();
        }
        Ok(CallToolResult::success(vec![ContentBlock::text("grown")]).into())
    }
}

async fn shifty(later: Later, announcements: usize) -> (McpSkills, Arc<AtomicUsize>) {
    let lists = Arc::new(AtomicUsize::new(0));
    let server = Shifty {
        later,
        announcements,
        lists: lists.clone(),
    };
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    let skills = McpSkills::connect_transport("shifty", client_end)
        .await
        .expect("connects");
    (skills, lists)
}

fn registry_of(skills: &McpSkills) -> Registry {
    let mut registry = Registry::new();
    registry.destructive_calls(agent_core::DestructiveCalls::Allow);
    skills.add_to(&mut registry).unwrap();
    registry
}

async fn grow(registry: &Registry) -> String {
    let result = registry
        .run_one(
            &ToolCall::new("g", "grow", json!({})),
            &SkillContext::default(),
        )
        .await;
    assert!(!result.is_error(), "{}", result.content());
    result.content().into_owned()
}

#[tokio::test(start_paused = true)]
async fn a_list_the_server_announces_and_never_sends_does_not_hold_the_call_past_five_seconds() {
    let (skills, _) = shifty(Later::Hang, 1).await;
    let registry = registry_of(&skills);
    let started = tokio::time::Instant::now();
    assert_eq!(grow(&registry).await, "grown");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_secs(6),
        "the call waited {waited:?} for the list (the time is the test's clock, paused)"
    );
    assert_eq!(registry.names().collect::<Vec<_>>(), ["grow"], "unchanged");
}

#[tokio::test]
async fn a_list_the_server_fails_to_send_leaves_the_tools_as_they_were() {
    let (skills, lists) = shifty(Later::Fail, 1).await;
    let registry = registry_of(&skills);
    assert_eq!(
        grow(&registry).await,
        "grown",
        "the call's own result is unharmed"
    );
    assert_eq!(lists.load(Ordering::SeqCst), 2, "the list was asked for");
    assert_eq!(registry.names().collect::<Vec<_>>(), ["grow"]);
    assert_eq!(grow(&registry).await, "grown", "and the tool still works");
}

#[tokio::test]
async fn tools_no_registry_takes_are_left_out_and_the_rest_are_offered() {
    let (skills, _) = shifty(Later::Bad, 1).await;
    let registry = registry_of(&skills);
    grow(&registry).await;
    let names: Vec<String> = registry.definitions().into_iter().map(|d| d.name).collect();
    // `not an object` becomes `not_an_object` (a valid name); a string input and a second
    // `kept` are left out.
    assert_eq!(names, ["grow", "not_an_object", "kept"]);
}

#[tokio::test]
async fn a_flood_of_announcements_is_read_once_or_twice_not_once_each() {
    let (skills, lists) = shifty(Later::Bad, 1_000).await;
    let registry = registry_of(&skills);
    grow(&registry).await;
    assert!(registry.contains("kept"), "the change is in place");
    // Give the background reader, woken by the announcements, time to read if it would.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let reads = lists.load(Ordering::SeqCst) - 1;
    eprintln!("1000 announcements, {reads} reads of the list");
    assert!((1..=2).contains(&reads), "{reads} reads");
}

/// A skill that puts `to` in place of a live set's skills when called.
struct Swap {
    name: &'static str,
    live: agent_core::LiveSkills,
    to: Vec<Arc<dyn agent_core::DynSkill>>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

#[agent_core::async_trait]
impl agent_core::Skill for Swap {
    type Input = Nothing;
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Changes the live skills."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    async fn run(
        &self,
        _: Nothing,
        _: &SkillContext,
    ) -> Result<agent_core::SkillOutput, agent_core::SkillError> {
        assert!(self.live.replace(self.to.clone()).is_empty());
        Ok("swapped".into())
    }
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>, Arc<tokio::sync::Notify>);

impl rmcp::ClientHandler for Counter {
    async fn on_tool_list_changed(&self, _: rmcp::service::NotificationContext<rmcp::RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
        self.1.notify_one();
    }
}

#[tokio::test]
async fn a_served_registry_whose_live_set_changed_during_a_call_tells_the_client() {
    let live = agent_core::LiveSkills::default();
    // `extra` changes a set no registry holds: nothing the client is shown.
    let extra = Swap {
        name: "extra",
        live: agent_core::LiveSkills::default(),
        to: Vec::new(),
    };
    let mut registry = Registry::new();
    registry.add(Swap {
        name: "swap",
        live: live.clone(),
        to: vec![Arc::new(extra)],
    });
    registry.add_live(live);
    let server = agent_mcp::McpServer::new(Arc::new(registry)).context(SkillContext::new("."));
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    let counter = Counter::default();
    let client = counter.clone().serve(client_end).await.unwrap();
    let names = |tools: Vec<Tool>| {
        tools
            .into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };
    let call = |name: &'static str| {
        CallToolRequestParams::new(name).with_arguments(serde_json::Map::new())
    };
    assert_eq!(names(client.list_all_tools().await.unwrap()), ["swap"]);

    client.call_tool(call("swap")).await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), counter.1.notified())
        .await
        .expect("notifications/tools/list_changed arrives");
    assert_eq!(
        names(client.list_all_tools().await.unwrap()),
        ["swap", "extra"]
    );

    // A call during which the registry's sets did not change sends none.
    client.call_tool(call("extra")).await.unwrap();
    client.list_all_tools().await.unwrap();
    assert_eq!(counter.0.load(Ordering::SeqCst), 1);
}
