//! `run_code` served over MCP: its calls go through the server's registry, and a program that
//! would wait for a person is an error result naming the call (MCP has no pause).

mod common;

use std::time::Duration;

use agent_mcp::McpServer;
use serde_json::{Map, Value, json};

fn arguments(code: &str) -> Option<Map<String, Value>> {
    json!({ "code": code }).as_object().cloned()
}

#[tokio::test]
async fn a_program_runs_through_the_servers_registry() {
    let ran = std::sync::Arc::new(common::Ran::default());
    let server = McpServer::new(common::registry(Duration::from_secs(5)))
        .context(agent_core::SkillContext::new(".").with_extension(ran.clone()));
    let result = server
        .call(
            "run_code",
            arguments("return (await add({ a: 2, b: 3 })).sum;"),
        )
        .await;
    let text = serde_json::to_string(&result).unwrap();
    assert_ne!(result.is_error, Some(true), "{text}");
    assert!(text.contains(r#"\"value\":5"#), "{text}");
    assert_eq!(ran.count("add"), 1);

    let waits = server
        .call(
            "run_code",
            arguments("return await delete_branch({ name: 'main' });"),
        )
        .await;
    let text = serde_json::to_string(&waits).unwrap();
    assert_eq!(waits.is_error, Some(true), "{text}");
    assert!(text.contains("delete_branch"), "{text}");
    assert_eq!(ran.count("delete main"), 0);
}
