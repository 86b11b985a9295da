// The user's own structs and enums as parameters.
use eugene::{Registry, SkillContext, SkillError, ToolCall, skill};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// How thorough to be.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "snake_case")]
enum Depth {
    Shallow,
    Deep,
}

/// Where to look.
#[derive(Deserialize, JsonSchema, Debug)]
struct Scope {
    /// Directories to search.
    dirs: Vec<String>,
    /// Skip hidden files.
    skip_hidden: bool,
}

/// Survey a part of the project.
///
/// # Arguments
/// - `depth`: How thorough to be.
/// - `scope`: Where to look; the whole project
///   when absent.
#[skill(read_only)]
async fn survey(depth: Depth, scope: Option<Scope>) -> Result<String, SkillError> {
    Ok(format!("{depth:?} {:?}", scope.map(|s| (s.dirs, s.skip_hidden))))
}

#[tokio::main]
async fn main() {
    let mut registry = Registry::new();
    registry.add(SurveySkill);
    assert_eq!(
        registry.definitions()[0].input_schema,
        json!({
            "type": "object",
            "properties": {
                "depth": {"type": "string", "enum": ["shallow", "deep"], "description": "How thorough to be."},
                "scope": {
                    "type": ["object", "null"],
                    "description": "Where to look; the whole project when absent.",
                    "properties": {
                        "dirs": {"type": "array", "items": {"type": "string"}, "description": "Directories to search."},
                        "skip_hidden": {"type": "boolean", "description": "Skip hidden files."}
                    },
                    "required": ["dirs", "skip_hidden"]
                }
            },
            "required": ["depth"],
            "additionalProperties": false
        })
    );
    let result = registry
        .run_one(&ToolCall::new("1", "survey", json!({"depth": "deep", "scope": {"dirs": ["src"], "skip_hidden": true}})), &SkillContext::default())
        .await;
    assert_eq!(result.content(), r#"Deep Some((["src"], true))"#);
}
