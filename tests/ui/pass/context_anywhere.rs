// The context may be anywhere in the parameter list, under any path, or absent.
use eugene::{Registry, SkillContext, SkillError, ToolCall, skill};
use serde_json::json;

/// Join a name to the workspace root.
///
/// # Arguments
/// * `name` - A file name.
/// * `suffix` - Appended to the name.
#[skill(read_only)]
async fn join(name: String, ctx: &eugene::SkillContext, suffix: String) -> Result<String, SkillError> {
    Ok(format!("{}/{name}{suffix}", ctx.workspace_root().display()))
}

/// Echo without a context.
///
/// # Arguments
/// * `text` - Sent back.
#[skill(read_only)]
async fn echo(text: String) -> Result<String, SkillError> {
    Ok(text)
}

#[tokio::main]
async fn main() {
    let mut registry = Registry::new();
    registry.add(Join).add(Echo);
    let schema = &registry.definitions()[0].input_schema;
    assert_eq!(schema["required"], json!(["name", "suffix"]));
    assert!(schema["properties"].get("ctx").is_none());
    let calls = [
        ToolCall::new("1", "join", json!({"name": "a", "suffix": ".rs"})),
        ToolCall::new("2", "echo", json!({"text": "hi"})),
    ];
    let results = registry.run_many(&calls, &SkillContext::new("/ws")).await;
    assert_eq!(results[0].content(), "/ws/a.rs");
    assert_eq!(results[1].content(), "hi");
}
