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
    let skill = SearchFilesSkill;
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
    registry.add(SearchFilesSkill);
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

/// Look something up.
///
/// # Arguments
/// * `query` - What to look up.
#[skill(read_only, register = false)]
async fn query(query: String) -> Result<String, SkillError> {
    Ok(format!("looked up {query}"))
}

#[tokio::test]
async fn a_parameter_may_share_the_functions_name() {
    let mut registry = Registry::new();
    registry.add(QuerySkill);
    let result = registry
        .run_one(
            &ToolCall::new("1", "query", json!({"query": "rust"})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(result.content(), "looked up rust");
}

/// Open a file.
///
/// # Arguments
/// * `mode` - How to open it, one of:
///   * `read` - only read;
///   * `write` - truncate and write.
/// * `path` - Which file.
#[skill(register = false)]
async fn open_file(mode: String, path: String) -> Result<String, SkillError> {
    Ok(format!("{mode} {path}"))
}

/// Run a shell script.
///
/// # Arguments
/// * `script` - The script, e.g.
///   ```sh
///   # list the files
///   ls
///   ```
/// * `shell` - The shell to run it with.
#[skill(register = false)]
async fn run_script(script: String, shell: Option<String>) -> Result<String, SkillError> {
    Ok(format!("{script} {shell:?}"))
}

#[test]
fn nested_lists_and_code_blocks_stay_in_their_arguments_description() {
    let mut registry = Registry::new();
    registry.add(OpenFileSkill).add(RunScriptSkill);
    let definitions = registry.definitions();
    let (open, run) = (&definitions[0], &definitions[1]);
    assert_eq!(open.description, "Open a file.");
    assert_eq!(
        open.input_schema["properties"]["mode"]["description"],
        "How to open it, one of:\n* `read` - only read;\n* `write` - truncate and write."
    );
    assert_eq!(run.description, "Run a shell script.");
    assert_eq!(
        run.input_schema["properties"]["script"]["description"],
        "The script, e.g.\n```sh\n# list the files\nls\n```"
    );
    assert_eq!(
        run.input_schema["properties"]["shell"]["description"],
        "The shell to run it with."
    );
}

/// Greet someone.
///
/// # Parameters
/// - `who` - The person to greet.
#[skill(read_only, register = false)]
async fn greet(who: String) -> Result<String, SkillError> {
    Ok(format!("Hello, {who}!"))
}

#[test]
fn a_parameters_heading_is_read_like_arguments() {
    let mut registry = Registry::new();
    registry.add(GreetSkill);
    let definition = &registry.definitions()[0];
    assert_eq!(definition.description, "Greet someone.");
    assert_eq!(
        definition.input_schema["properties"]["who"]["description"],
        "The person to greet."
    );
}
