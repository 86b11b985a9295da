//! A server that changes its tools while a runtime holds the registry: the tools it adds are
//! offered and called in the same run, the ones it removes are no longer offered, a resource it
//! adds is listed by the `read_resource` skill, and a change it makes on its own (no call
//! waiting) reaches the registry too. The sets follow the server
//! without keeping its process alive.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{SkillContext, ToolCall};
use agent_llm::{MockProvider, MockReply};
use agent_mcp::McpSkills;
use agent_runtime::{AgentRuntime, FinishReason};
use serde_json::json;

use super::{SERVER, http_server, python, registry_of, server, tool_results};

/// The names of the tools each model call of the run was shown.
fn offered(model: &MockProvider) -> Vec<Vec<String>> {
    model
        .requests()
        .into_iter()
        .map(|r| r.tools.into_iter().map(|t| t.name).collect())
        .collect()
}

fn call(id: &str, name: &str, args: serde_json::Value) -> MockReply {
    MockReply::tool_calls(vec![ToolCall::new(id, name, args)])
}

/// One run, with a runtime built before any change: `add_note` adds `read_groceries`,
/// which is called at once; `forget_note` removes it, and calling it again fails.
async fn add_call_remove(skills: &McpSkills) {
    let model = MockProvider::new([
        call(
            "a",
            "add_note",
            json!({"name": "groceries", "text": "milk"}),
        ),
        call("r", "read_groceries", json!({})),
        call("f", "forget_note", json!({"name": "groceries"})),
        call("again", "read_groceries", json!({})),
        MockReply::text("Done."),
    ]);
    let runtime = AgentRuntime::new(model.clone(), registry_of(skills));
    let done = runtime.run("Note milk, read it, forget it.").await.unwrap();
    assert!(
        matches!(done.finish, FinishReason::NoMoreToolCalls),
        "{:?}",
        done.finish
    );

    let results = tool_results(&done);
    assert_eq!(
        results[0].1,
        json!({"result": "added groceries"}).to_string()
    );
    assert_eq!(
        (results[1].1.as_str(), results[1].2),
        (
            json!({"result": "the note groceries says: milk"})
                .to_string()
                .as_str(),
            false
        ),
        "the new tool ran in the same run"
    );
    assert_eq!(
        results[2].1,
        json!({"result": "forgot groceries"}).to_string()
    );
    assert!(
        results[3].2,
        "a removed tool is not called: {:?}",
        results[3]
    );
    assert!(results[3].1.contains("unknown skill"), "{}", results[3].1);

    let shown = offered(&model);
    let has = |turn: usize| shown[turn].contains(&"read_groceries".to_owned());
    assert!(!has(0), "not there before: {:?}", shown[0]);
    assert!(
        has(1),
        "offered from the turn after the call that added it: {:?}",
        shown[1]
    );
    assert!(has(2));
    assert!(
        !has(3),
        "gone from the turn after the call that removed it: {:?}",
        shown[3]
    );
    assert!(shown[3].contains(&"add_note".to_owned()), "the others stay");
}

#[tokio::test]
async fn a_tool_the_server_adds_during_a_run_is_offered_and_called_in_that_run_over_stdio() {
    add_call_remove(&server().await).await;
}

#[tokio::test]
async fn a_tool_the_server_adds_during_a_run_is_offered_and_called_in_that_run_over_http() {
    let http = http_server().await;
    add_call_remove(&http.skills).await;
}

#[tokio::test]
async fn the_read_resource_skill_lists_a_resource_the_server_adds_from_the_next_turn() {
    let skills = server().await.with_resource_skill().await.unwrap();
    let model = MockProvider::new([
        call(
            "a",
            "add_note",
            json!({"name": "groceries", "text": "milk"}),
        ),
        MockReply::text("Done."),
    ]);
    let runtime = AgentRuntime::new(model.clone(), registry_of(&skills));
    runtime.run("Note milk.").await.unwrap();
    let description = |turn: usize| {
        model.requests()[turn]
            .tools
            .iter()
            .find(|t| t.name == "read_resource")
            .map(|t| t.description.clone())
            .unwrap()
    };
    assert!(
        description(0).contains("notes://index"),
        "{}",
        description(0)
    );
    assert!(!description(0).contains("notes://fixed/groceries"));
    assert!(
        description(1).contains("notes://fixed/groceries"),
        "the server's new resource is listed from the next turn: {}",
        description(1)
    );
}

#[tokio::test]
async fn a_change_the_server_makes_on_its_own_reaches_a_registry_already_in_use() {
    let skills = server().await;
    let registry = Arc::new(registry_of(&skills));
    let started = registry
        .run_one(
            &ToolCall::new(
                "l",
                "add_note_later",
                json!({"name": "later", "text": "soon"}),
            ),
            &SkillContext::default(),
        )
        .await;
    assert!(!started.is_error(), "{}", started.content());
    assert!(
        !registry.contains("read_later"),
        "the server adds it only after answering"
    );
    // The server announces the change about 0.3 s later, with no call waiting on it.
    let mut waited = Duration::ZERO;
    while !registry.contains("read_later") && waited < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += Duration::from_millis(20);
    }
    let names: Vec<String> = registry.definitions().into_iter().map(|d| d.name).collect();
    assert!(names.contains(&"read_later".to_owned()), "{names:?}");
    let read = registry
        .run_one(
            &ToolCall::new("r", "read_later", json!({})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(read.content(), "the note later says: soon");
}

/// Whether a process whose command line holds `marker` is running.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
    })
}

#[tokio::test]
async fn a_set_that_follows_the_server_does_not_keep_its_process_alive() {
    let marker = format!("--marker-{}", std::process::id());
    let mut skills = McpSkills::connect_stdio(python(), [SERVER, marker.as_str()])
        .await
        .unwrap();
    let registry = registry_of(&skills);
    let live = skills.live_skills().unwrap();
    let added = registry
        .run_one(
            &ToolCall::new("a", "add_note", json!({"name": "n", "text": "t"})),
            &SkillContext::default(),
        )
        .await;
    assert!(!added.is_error(), "{}", added.content());
    assert!(
        live.names().contains(&"read_n".to_owned()),
        "{:?}",
        live.names()
    );
    assert_eq!(skills.refresh_tools().await.unwrap(), ["read_n"]);
    assert!(running(&marker));

    drop((skills, registry, live));
    let mut waited = Duration::ZERO;
    while running(&marker) && waited < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += Duration::from_millis(50);
    }
    assert!(
        !running(&marker),
        "the server process outlived every handle to its tools"
    );
}
