// `Option<T>`, `#[arg(default)]`, `#[arg(default = expr)]`, `#[arg(rename = "...")]` and
// `#[arg(undocumented)]` (a field without a description, and no error for it).
use eugene::{Registry, SkillContext, SkillError, ToolCall, skill};
use serde_json::json;

/// List matching lines.
///
/// # Arguments
/// * `query` - What to look for.
/// * `limit` - At most this many lines.
/// * `case_sensitive` - Match case exactly.
/// * `context` - Lines around each match.
#[skill(read_only)]
async fn grep(
    #[arg(rename = "q")] query: String,
    #[arg(default = 10)] limit: u32,
    #[arg(default)] case_sensitive: bool,
    context: Option<u8>,
    #[arg(undocumented, default)] path: Option<String>,
) -> Result<String, SkillError> {
    Ok(format!("{query} {limit} {case_sensitive} {context:?}{}", path.map(|p| format!(" in {p}")).unwrap_or_default()))
}

#[tokio::main]
async fn main() {
    let mut registry = Registry::new();
    registry.add(GrepSkill);
    assert_eq!(
        registry.definitions()[0].input_schema,
        json!({
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "format": "uint32", "minimum": 0, "default": 10, "description": "At most this many lines."},
                "case_sensitive": {"type": "boolean", "default": false, "description": "Match case exactly."},
                "context": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255, "description": "Lines around each match."},
                "path": {"type": ["string", "null"], "default": null}
            },
            "required": ["q"],
            "additionalProperties": false
        })
    );
    let ctx = SkillContext::default();
    let defaults = registry.run_one(&ToolCall::new("1", "grep", json!({"q": "fn"})), &ctx).await;
    assert_eq!(defaults.content(), "fn 10 false None");
    let given = registry
        .run_one(&ToolCall::new("2", "grep", json!({"q": "fn", "limit": 2, "case_sensitive": true, "context": 3})), &ctx)
        .await;
    assert_eq!(given.content(), "fn 2 true Some(3)");
    let in_path = registry.run_one(&ToolCall::new("4", "grep", json!({"q": "fn", "path": "src"})), &ctx).await;
    assert_eq!(in_path.content(), "fn 10 false None in src");
    let old_name = registry.run_one(&ToolCall::new("3", "grep", json!({"query": "fn"})), &ctx).await;
    assert!(old_name.content().starts_with("invalid arguments: `query`: unknown field"), "{}", old_name.content());
}
