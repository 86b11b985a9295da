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
    registry.add(JoinSkill).add(EchoSkill);
    assert_eq!(
        registry.definitions()[0].input_schema,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "A file name."},
                "suffix": {"type": "string", "description": "Appended to the name."}
            },
            "required": ["name", "suffix"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        registry.definitions()[1].input_schema,
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Sent back."}},
            "required": ["text"],
            "additionalProperties": false
        })
    );
    let calls = [
        ToolCall::new("1", "join", json!({"name": "a", "suffix": ".rs"})),
        ToolCall::new("2", "echo", json!({"text": "hi"})),
    ];
    let results = registry.run_many(&calls, &SkillContext::new("/ws")).await;
    assert_eq!(results[0].content(), "/ws/a.rs");
    assert_eq!(results[1].content(), "hi");
}
