//! What the model is shown: schemas (generated once, normalised, strict form), deferred skills and
//! the built-in `tool_search`.

mod common;

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{Registry, Skill, SkillContext, SkillError, SkillOutput, ToolCall, async_trait};
use agent_core::{schemars, serde};
use common::*;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::json;

#[test]
fn definitions_have_object_schemas_with_properties_and_required_and_no_noise() {
    let mut registry = Registry::new();
    registry.add(Echo).add(Big { chars: 1 });
    let defs = registry.definitions();
    assert_eq!(defs.len(), 2);
    assert_eq!(
        (defs[0].name.as_str(), defs[0].description.as_str()),
        ("echo", "Send the text back.")
    );
    assert_eq!(
        defs[0].input_schema,
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text to send back."},
                "times": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "description": "How many times to repeat it."}
            },
            "required": ["text"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        defs[1].input_schema,
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

static SCHEMA_CALLS: AtomicUsize = AtomicUsize::new(0);

/// An input whose schema generation is counted.
#[derive(serde::Deserialize)]
#[serde(crate = "agent_core::serde")]
struct Counted {}

impl JsonSchema for Counted {
    fn schema_name() -> Cow<'static, str> {
        "Counted".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        SCHEMA_CALLS.fetch_add(1, Ordering::SeqCst);
        json_schema!({"type": "object", "properties": {}})
    }
}

struct CountedSkill;

#[async_trait]
impl Skill for CountedSkill {
    type Input = Counted;
    fn name(&self) -> &str {
        "counted"
    }
    fn description(&self) -> &str {
        "Counts schema generations."
    }
    async fn run(&self, _: Counted, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok("ran".into())
    }
}

#[tokio::test]
async fn schemas_are_generated_once_when_the_skill_enters_the_registry() {
    let mut registry = Registry::new();
    registry.add(CountedSkill);
    assert_eq!(SCHEMA_CALLS.load(Ordering::SeqCst), 1);
    for _ in 0..10 {
        assert_eq!(
            registry.definitions()[0].input_schema,
            json!({"type": "object", "properties": {}, "required": []})
        );
    }
    let result = registry
        .run_one(
            &ToolCall::new("1", "counted", json!({})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(result.content(), "ran");
    assert_eq!(
        SCHEMA_CALLS.load(Ordering::SeqCst),
        1,
        "neither definitions() nor a call regenerates it"
    );
}

// The user's own types as parameters: inlined, except a recursive one.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", rename_all = "snake_case")]
#[schemars(crate = "agent_core::schemars")]
#[allow(dead_code)]
enum Mode {
    Fast,
    Thorough,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
#[allow(dead_code)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
#[allow(dead_code)]
struct RichInput {
    mode: Mode,
    tree: Option<Tree>,
}

struct Rich;

#[async_trait]
impl Skill for Rich {
    type Input = RichInput;
    fn name(&self) -> &str {
        "rich"
    }
    fn description(&self) -> &str {
        "Takes an enum and a recursive struct."
    }
    async fn run(&self, input: RichInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok(format!("{} children", input.tree.map_or(0, |t| t.children.len())).into())
    }
}

#[tokio::test]
async fn user_types_are_inlined_and_recursive_ones_kept_under_defs() {
    let mut registry = Registry::new();
    registry.add(Rich);
    let schema = &registry.definitions()[0].input_schema;
    assert_eq!(
        schema["properties"]["mode"],
        json!({"type": "string", "enum": ["fast", "thorough"]})
    );
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    // The recursive type stays referenced, and the reference resolves inside the schema.
    let tree = &schema["properties"]["tree"];
    let reference = tree.to_string();
    assert!(reference.contains("#/$defs/Tree"), "{tree}");
    assert_eq!(
        schema["$defs"]["Tree"]["required"],
        json!(["label", "children"])
    );
    let result = registry
        .run_one(&ToolCall::new("1", "rich", json!({"mode": "fast", "tree": {"label": "a", "children": [{"label": "b", "children": []}]}})), &SkillContext::default())
        .await;
    assert_eq!(result.content(), "1 children");
}

#[test]
fn openai_strict_form_requires_everything_and_makes_optional_fields_nullable() {
    let mut registry = Registry::new();
    registry.add(Echo).add(Rich);
    let echo = registry.definitions()[0].openai_strict_schema();
    assert_eq!(echo["required"], json!(["text", "times"]));
    assert_eq!(echo["additionalProperties"], json!(false));
    assert_eq!(
        echo["properties"]["times"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(echo["properties"]["text"]["type"], json!("string"));

    let rich = registry.definitions()[1].openai_strict_schema();
    assert_eq!(rich["required"], json!(["mode", "tree"]));
    assert_eq!(rich["$defs"]["Tree"]["additionalProperties"], json!(false));
    fn every_object_is_closed(schema: &serde_json::Value) -> bool {
        match schema {
            serde_json::Value::Object(map) => {
                (map.get("properties").is_none()
                    || map.get("additionalProperties") == Some(&json!(false)))
                    && map.values().all(every_object_is_closed)
            }
            serde_json::Value::Array(items) => items.iter().all(every_object_is_closed),
            _ => true,
        }
    }
    assert!(every_object_is_closed(&rich), "{rich:#}");
}

#[test]
fn an_optional_field_without_a_type_becomes_any_of_with_null() {
    let def = agent_core::ToolDefinition {
        name: "x".into(),
        description: "x".into(),
        input_schema: json!({"type": "object", "properties": {"tree": {"$ref": "#/$defs/Tree"}}, "required": []}),
        output_schema: None,
    };
    assert_eq!(
        def.openai_strict_schema()["properties"]["tree"],
        json!({"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]})
    );
}

struct NotAnObject;

#[async_trait]
impl Skill for NotAnObject {
    type Input = String;
    fn name(&self) -> &str {
        "stringly"
    }
    fn description(&self) -> &str {
        "Takes a bare string."
    }
    async fn run(&self, _: String, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok("".into())
    }
}

#[test]
fn an_input_that_is_not_an_object_is_refused_with_its_schema() {
    let mut registry = Registry::new();
    let error = registry.try_add(NotAnObject).expect_err("refused");
    assert_eq!(
        error.to_string(),
        r#"the input of skill `stringly` must be a struct (a JSON object), but its schema is {"type":"string"}"#
    );
}

/// Deferred and visible skills; the destructive `shred_file` runs its calls (what these tests
/// check is what the model is offered, not who approves).
fn deferred_registry(runs: &Arc<AtomicUsize>) -> Registry {
    let mut registry = Registry::new();
    registry
        .add(Echo)
        .add(Shred { runs: runs.clone() })
        .add(Translate)
        .destructive_calls(agent_core::DestructiveCalls::Allow);
    registry
}

fn names(defs: &[agent_core::ToolDefinition]) -> Vec<&str> {
    defs.iter().map(|d| d.name.as_str()).collect()
}

#[test]
fn deferred_skills_are_hidden_and_tool_search_is_added() {
    let registry = deferred_registry(&Arc::default());
    assert_eq!(names(&registry.definitions()), ["echo", "tool_search"]);
    assert!(registry.contains("shred_file") && registry.contains("wipe"));
    let search = registry.metadata("tool_search").unwrap();
    assert!(search.is_read_only && search.is_concurrency_safe && !search.should_defer);

    let mut plain = Registry::new();
    plain.add(Echo);
    assert!(
        !plain.contains("tool_search"),
        "no deferred skill, no tool_search"
    );
}

#[tokio::test]
async fn tool_search_loads_matches_into_the_calling_session_only() {
    let registry = deferred_registry(&Arc::default());
    let session_a = SkillContext::default();
    let session_b = SkillContext::default();
    let result = registry
        .run_one(
            &ToolCall::new("1", "tool_search", json!({"query": "erase a file"})),
            &session_a,
        )
        .await;
    assert_eq!(
        result.content(),
        "Loaded 1 tool; call it like any other tool:\n- shred_file: Overwrite a file with zeros, then remove it."
    );
    assert_eq!(
        names(&registry.definitions_for(session_a.scope())),
        ["echo", "shred_file", "tool_search"]
    );
    assert_eq!(
        names(&registry.definitions_for(session_b.scope())),
        ["echo", "tool_search"]
    );
    assert_eq!(names(&registry.definitions()), ["echo", "tool_search"]);
}

#[tokio::test]
async fn tool_search_matches_names_aliases_descriptions_and_hints() {
    let registry = deferred_registry(&Arc::default());
    for (query, expected) in [
        ("translate_text", "translate_text"),
        ("wipe", "shred_file"),
        ("language", "translate_text"),
        ("destroy", "shred_file"),
    ] {
        let ctx = SkillContext::default();
        let result = registry
            .run_one(
                &ToolCall::new("1", "tool_search", json!({ "query": query })),
                &ctx,
            )
            .await;
        assert_eq!(
            ctx.scope().loaded(),
            [expected],
            "query {query:?}: {}",
            result.content()
        );
    }
}

#[tokio::test]
async fn tool_search_without_a_match_lists_what_can_be_loaded() {
    let registry = deferred_registry(&Arc::default());
    let ctx = SkillContext::default();
    let result = registry
        .run_one(
            &ToolCall::new("1", "tool_search", json!({"query": "quantum teleport"})),
            &ctx,
        )
        .await;
    assert_eq!(
        result.content(),
        "No tool matches `quantum teleport`. Tools that can be loaded: shred_file, translate_text."
    );
    assert!(ctx.scope().loaded().is_empty());
    let empty = registry
        .run_one(
            &ToolCall::new("2", "tool_search", json!({"query": "  "})),
            &ctx,
        )
        .await;
    assert!(matches!(empty.output, Err(SkillError::BadArgs { ref path, .. }) if path == "query"));
}

#[tokio::test]
async fn a_deferred_skill_called_directly_still_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = deferred_registry(&runs);
    let result = registry
        .run_one(
            &ToolCall::new("1", "shred_file", json!({"path": "x"})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(result.content(), "shredded x");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
