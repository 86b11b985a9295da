//! The MCP form of a skill's result: text, `isError`, `structuredContent`, media (a
//! [`SkillOutput::Content`] as image, audio, embedded resource and resource-link blocks, in
//! order, as [`crate::media`] maps them), and output schemas whose root is not an object,
//! wrapped.

use agent_core::{SkillOutput, ToolResult};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::media::content_blocks;

/// The MCP form of a result of a skill without an output schema: its text (what a model would
/// read), `isError` for every [`SkillError`](agent_core::SkillError), JSON objects also as
/// `structuredContent`, and [`Content`](agent_core::content::Content) as one block per part
/// ([`crate::media::content_blocks`]).
pub fn to_call_tool_result(result: &ToolResult) -> CallToolResult {
    to_call_tool_result_for(result, None)
}

/// The MCP form of a result of a skill with the output schema `output_schema` (as the skill
/// declares it, before [`mcp_output_schema`]): see the [module docs](super). With `None`, the
/// same as [`to_call_tool_result`].
pub fn to_call_tool_result_for(
    result: &ToolResult,
    output_schema: Option<&Value>,
) -> CallToolResult {
    let text = vec![ContentBlock::text(result.content().into_owned())];
    let structured = match (&result.output, output_schema) {
        (Err(_), _) => return CallToolResult::error(text),
        // Text cannot follow an output schema: a failed call, not a protocol violation.
        (Ok(SkillOutput::Text(_)), Some(_)) => return CallToolResult::error(text),
        (Ok(SkillOutput::Text(_)), None) => None,
        (Ok(SkillOutput::Json(value)), Some(schema)) if !is_object_root(schema) => {
            let mut wrapped = Map::new();
            wrapped.insert(RESULT_KEY.into(), value.clone());
            Some(Value::Object(wrapped))
        }
        (Ok(SkillOutput::Json(value @ Value::Object(_))), _) => Some(value.clone()),
        (Ok(SkillOutput::Json(_)), Some(_)) => {
            // An object schema and a value that is not an object (a hook or a skill written by
            // hand can do that): it cannot follow the schema either.
            return CallToolResult::error(text);
        }
        (Ok(SkillOutput::Json(_)), None) => None,
        // Media cannot follow an output schema either.
        (Ok(SkillOutput::Content(_)), Some(_)) => return CallToolResult::error(text),
        (Ok(SkillOutput::Content(content)), None) => {
            return CallToolResult::success(content_blocks(content));
        }
    };
    let mut answer = CallToolResult::success(text);
    answer.structured_content = structured;
    answer
}

/// The property a non-object output is wrapped in: `{"result": VALUE}`.
pub const RESULT_KEY: &str = "result";

/// A skill's output schema as MCP serves it, as `outputSchema`: an object schema as it is; any
/// other (an array, a number, `oneOf`...) wrapped as the schema of `{"result": VALUE}`, with its
/// `$defs` moved to the new root and its references to its own root (`"$ref": "#"`, which a
/// recursive type's schema has) pointed at `#/properties/result`, so that every `$ref` still
/// resolves.
///
/// ```
/// use serde_json::json;
///
/// let point = json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]});
/// assert_eq!(agent_mcp::server::mcp_output_schema(point.clone()), point.as_object().unwrap().clone());
///
/// let wrapped = agent_mcp::server::mcp_output_schema(json!({"type": "array", "items": {"type": "string"}}));
/// assert_eq!(
///     serde_json::Value::Object(wrapped),
///     json!({
///         "type": "object",
///         "properties": {"result": {"type": "array", "items": {"type": "string"}}},
///         "required": ["result"]
///     })
/// );
/// ```
pub fn mcp_output_schema(schema: Value) -> Map<String, Value> {
    if is_object_root(&schema)
        && let Value::Object(map) = schema
    {
        return map;
    }
    let mut inner = schema;
    let mut defs = match &mut inner {
        Value::Object(map) => map.remove("$defs"),
        _ => None,
    };
    retarget_root_refs(&mut inner);
    if let Some(defs) = &mut defs {
        retarget_root_refs(defs);
    }
    let mut properties = Map::new();
    properties.insert(RESULT_KEY.into(), inner);
    let mut root = Map::new();
    root.insert("type".into(), Value::from("object"));
    root.insert("properties".into(), Value::Object(properties));
    root.insert("required".into(), Value::from(vec![RESULT_KEY]));
    if let Some(defs) = defs {
        root.insert("$defs".into(), defs);
    }
    root
}

/// Points every `$ref` into the schema's own root, other than into its `$defs`, at the same place
/// under `#/properties/result`. Values that are data (`const`, `enum`, `default`, `examples`)
/// are left alone.
fn retarget_root_refs(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    ("$ref", Value::String(target))
                        if target.starts_with('#') && !target.starts_with("#/$defs/") =>
                    {
                        *target = format!("#/properties/{RESULT_KEY}{}", &target[1..]);
                    }
                    ("const" | "enum" | "default" | "examples", _) => {}
                    // Maps of names to schemas: a property called `const` is a schema too.
                    (
                        "properties" | "patternProperties" | "$defs" | "definitions"
                        | "dependentSchemas",
                        Value::Object(schemas),
                    ) => schemas.values_mut().for_each(retarget_root_refs),
                    (_, value) => retarget_root_refs(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(retarget_root_refs),
        _ => {}
    }
}

/// Whether a schema's root is an object schema (`"type": "object"`), as MCP requires of
/// `outputSchema`.
fn is_object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}
