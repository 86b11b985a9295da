//! Tool definitions and their JSON Schemas: what the model is shown of each skill.
//!
//! A skill's input schema is generated once, when the skill enters a registry, with schemars
//! (JSON Schema 2020-12) and then normalised for model APIs:
//!
//! - the root is always an object schema with `properties` and `required` (both present, maybe empty);
//! - no `$schema`, and no root `title` or `description` (the input struct's name and doc comment:
//!   noise the model pays tokens for; the skill's own description is sent beside the schema);
//! - subschemas are **inlined**: a parameter of the user's own struct or enum type appears in place.
//!   Only a recursive type cannot be inlined; its definition stays under `$defs` at the root and is
//!   referenced with `$ref`, which every provider accepts.
//!
//! OpenAI's strict mode wants more: [`ToolDefinition::openai_strict_schema`] derives it.
//!
//! A skill that returns a typed value also has an **output schema**, generated once too, by
//! [`schema_for_output`]: what the value serializes to, left as schemars writes it (subschemas
//! inlined, no `$schema`), since no model API takes it. It is in
//! [`ToolDefinition::output_schema`] and [`SkillMetadata::output_schema`](crate::SkillMetadata::output_schema);
//! MCP serves it as a tool's `outputSchema`.
//!
//! ```
//! use agent_core::ToolDefinition;
//! use serde_json::json;
//!
//! let def = ToolDefinition {
//!     name: "read_file".into(),
//!     description: "Read a file.".into(),
//!     input_schema: json!({
//!         "type": "object",
//!         "properties": { "path": {"type": "string"}, "limit": {"type": ["integer", "null"]} },
//!         "required": ["path"]
//!     }),
//!     output_schema: None,
//! };
//! let strict = def.openai_strict_schema();
//! assert_eq!(strict["required"], json!(["path", "limit"]));
//! assert_eq!(strict["additionalProperties"], json!(false));
//! ```

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// A skill as the model sees it: name, description and the JSON Schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name the model calls the skill by.
    pub name: String,
    /// What the skill does.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub input_schema: Value,
    /// JSON Schema of the structured value the skill answers with, when it declares one (a
    /// `#[skill]` returning a typed value does). Model APIs take no output schema, so providers do
    /// not send it; MCP serves it as `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl ToolDefinition {
    /// A definition without an output schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
        }
    }

    /// The input schema in the form OpenAI's strict mode (`"strict": true`) requires: every object
    /// has `additionalProperties: false` and lists all its properties as required; a property that
    /// was optional becomes nullable instead (`["integer", "null"]`, or `anyOf` with `null`).
    pub fn openai_strict_schema(&self) -> Value {
        let mut schema = self.input_schema.clone();
        make_strict(&mut schema);
        schema
    }
}

/// Generates the normalised input schema of `T` (see the module docs).
pub fn schema_for_input<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .for_deserialize()
        .into_generator();
    normalise_root(generator.into_root_schema_for::<T>().to_value())
}

/// Generates the output schema of `T`: the JSON Schema of what `T` serializes to (JSON Schema
/// 2020-12, in schemars' serialize mode: a field serde always writes is required, one it may skip
/// is not), with subschemas inlined and no `$schema`. Otherwise faithful: the root keeps its
/// `title` and `description`, and is whatever `T` is (an object for a struct, an array for a
/// `Vec`, `oneOf` for an enum); a recursive type keeps its definition under `$defs`.
///
/// `#[skill]` calls it once, when the skill enters a registry, for a typed return value.
///
/// ```
/// use agent_core::schema::schema_for_output;
/// use agent_core::schemars::{self, JsonSchema};
///
/// #[derive(JsonSchema)]
/// #[schemars(crate = "agent_core::schemars")]
/// struct Forecast {
///     celsius: f64,
///     summary: Option<String>,
/// }
///
/// let schema = schema_for_output::<Forecast>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["celsius", "summary"]));
/// assert_eq!(schema_for_output::<Vec<u8>>()["type"], "array");
/// ```
pub fn schema_for_output<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .for_serialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    schema
}

/// Makes sure the root is an object schema with `properties` and `required`, and drops noise.
/// A schema that accepts anything (`true` or `{}`) becomes an open object schema.
pub(crate) fn normalise_root(schema: Value) -> Value {
    let mut map = match schema {
        Value::Object(map) => map,
        Value::Bool(true) => Map::new(),
        other => return other,
    };
    map.remove("$schema");
    map.remove("title");
    map.remove("description");
    if map.is_empty() {
        map.insert("type".into(), json!("object"));
    }
    if map.get("type") == Some(&json!("object")) {
        map.entry("properties").or_insert_with(|| json!({}));
        map.entry("required").or_insert_with(|| json!([]));
    }
    Value::Object(map)
}

/// Whether a normalised root schema describes a JSON object (the runtime wraps a typed output
/// whose schema is not one, since tool inputs must be objects).
pub fn is_object_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("object"))
}

fn make_strict(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let required: Vec<String> = match map.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let is_object = map.get("type") == Some(&json!("object"));
    let listed = match map.get_mut("properties") {
        Some(Value::Object(props)) => Some(
            props
                .iter_mut()
                .map(|(name, prop)| {
                    make_strict(prop);
                    if !required.contains(name) {
                        make_nullable(prop);
                    }
                    Value::String(name.clone())
                })
                .collect::<Vec<_>>(),
        ),
        _ if is_object => {
            map.insert("properties".into(), json!({}));
            Some(Vec::new())
        }
        _ => None,
    };
    if let Some(all) = listed {
        map.insert("required".into(), Value::Array(all));
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    for key in ["items", "additionalItems", "not"] {
        if let Some(child) = map.get_mut(key) {
            make_strict(child);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children.iter_mut().for_each(make_strict);
        }
    }
    if let Some(Value::Object(defs)) = map.get_mut("$defs") {
        defs.values_mut().for_each(make_strict);
    }
}

fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    match map.get_mut("type") {
        Some(Value::String(t)) if t == "null" => {}
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(json!("null"));
            }
        }
        _ => {
            if let Some(Value::Array(options)) = map.get_mut("anyOf")
                && options
                    .iter()
                    .any(|o| o.get("type") == Some(&json!("null")))
            {
                return;
            }
            let inner = std::mem::take(map);
            map.insert(
                "anyOf".into(),
                json!([Value::Object(inner), {"type": "null"}]),
            );
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}
