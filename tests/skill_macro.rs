//! `#[skill]` end to end: generated structs, schemas, flags, defaults, renames, conversions and
//! discovery, through the facade as a user would use it.

use std::time::Duration;

use eugene::{Registry, Skill, SkillContext, SkillError, SkillOutput, ToolCall, skill};
use serde_json::json;

/// Search the project for a regular expression.
///
/// Longer prose here is part of the description the model sees.
///
/// # Arguments
/// * `pattern` - A Rust regex.
/// * `max_results` - Stop after this many hits.
#[skill(read_only, aliases = ["grep", "rg"], search_hint = "find text regex", timeout = "30s")]
pub async fn search_files(
    ctx: &SkillContext,
    pattern: String,
    max_results: Option<u32>,
) -> Result<String, SkillError> {
    Ok(format!(
        "{pattern} in {} (max {max_results:?})",
        ctx.workspace_root().display()
    ))
}

#[tokio::test]
async fn the_generated_skill_describes_and_runs_the_function() {
    let skill = SearchFiles;
    assert_eq!(Skill::name(&skill), "search_files");
    assert_eq!(
        Skill::description(&skill),
        "Search the project for a regular expression.\n\nLonger prose here is part of the description the model sees."
    );
    assert!(skill.is_read_only() && skill.is_concurrency_safe() && !skill.is_destructive());
    assert_eq!(skill.aliases(), ["grep", "rg"]);
    assert_eq!(skill.search_hint(), Some("find text regex"));
    assert_eq!(Skill::timeout(&skill), Some(Duration::from_secs(30)));

    let mut registry = Registry::new();
    registry.add(SearchFiles);
    assert_eq!(
        registry.definitions()[0].input_schema,
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A Rust regex."},
                "max_results": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "description": "Stop after this many hits."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    );
    let result = registry
        .run_one(
            &ToolCall::new("1", "rg", json!({"pattern": "fn main"})),
            &SkillContext::new("/work"),
        )
        .await;
    assert_eq!(result.content(), "fn main in /work (max None)");
}

#[tokio::test]
async fn the_function_stays_callable() {
    let out = search_files(&SkillContext::new("/x"), "a".into(), Some(3))
        .await
        .unwrap();
    assert_eq!(out, "a in /x (max Some(3))");
    let _: SkillOutput = out.into();
}
