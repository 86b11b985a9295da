//! The functions a program can call, as the model reads them: one TypeScript-style declaration
//! per skill, generated from its input and output schemas. The text depends only on the skills
//! (sorted by name, properties in schema order), so it is the same byte for byte on every turn and
//! a cached prompt prefix that holds it survives.

use serde_json::Value;

use agent_core::schema::ToolDefinition;

/// The declarations of `definitions` (all but `skip`), sorted by name.
pub(crate) fn declarations(definitions: &[ToolDefinition], skip: &str) -> String {
    let mut definitions: Vec<&ToolDefinition> =
        definitions.iter().filter(|d| d.name != skip).collect();
    definitions.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = String::new();
    for definition in definitions {
        let summary = definition.description.lines().next().unwrap_or("").trim();
        if !summary.is_empty() {
            out.push_str("/** ");
            out.push_str(&summary.replace("*/", "* /"));
            out.push_str(" */\n");
        }
        let returns = match &definition.output_schema {
            Some(schema) => ts_type(schema, 0),
            None => "string".to_owned(),
        };
        let call = if is_identifier(&definition.name) {
            definition.name.clone()
        } else {
            format!("tools[\"{}\"]", definition.name)
        };
        out.push_str(&format!(
            "async function {call}(args: {}): Promise<{returns}>;\n",
            ts_type(&definition.input_schema, 0)
        ));
    }
    out
}

/// Whether `name` can be a JavaScript global's name as it is.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// The deepest a schema is followed; below it, a value is `any`.
const MAX_DEPTH: usize = 6;

/// A JSON Schema as a TypeScript type: objects, arrays, the scalar types, `enum` and `const`,
/// `anyOf`/`oneOf` as unions, a list of types, `nullable`; anything else (references, schemas
/// deeper than [`MAX_DEPTH`]) is `any`.
pub(crate) fn ts_type(schema: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "any".into();
    }
    let Some(object) = schema.as_object() else {
        // `true` accepts anything; `false` nothing.
        return if schema == &Value::Bool(false) {
            "never".into()
        } else {
            "any".into()
        };
    };
    if let Some(value) = object.get("const") {
        return value.to_string();
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        return union(values.iter().map(Value::to_string).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = object.get(key) {
            return union(options.iter().map(|o| ts_type(o, depth + 1)).collect());
        }
    }
    let nullable = object.get("nullable") == Some(&Value::Bool(true));
    let typed = match object.get("type") {
        Some(Value::String(kind)) => of_kind(kind, object, depth),
        Some(Value::Array(kinds)) => union(
            kinds
                .iter()
                .filter_map(Value::as_str)
                .map(|kind| of_kind(kind, object, depth))
                .collect(),
        ),
        _ if object.contains_key("properties") => of_kind("object", object, depth),
        _ => "any".into(),
    };
    if nullable {
        union(vec![typed, "null".into()])
    } else {
        typed
    }
}

fn of_kind(kind: &str, object: &serde_json::Map<String, Value>, depth: usize) -> String {
    match kind {
        "string" => "string".into(),
        "integer" | "number" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" => {
            let items = object
                .get("items")
                .map_or_else(|| "any".into(), |items| ts_type(items, depth + 1));
            if items.contains(' ') {
                format!("Array<{items}>")
            } else {
                format!("{items}[]")
            }
        }
        "object" => {
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let Some(Value::Object(properties)) = object.get("properties") else {
                return "Record<string, any>".into();
            };
            if properties.is_empty() {
                return "{}".into();
            }
            let fields: Vec<String> = properties
                .iter()
                .map(|(name, schema)| {
                    let key = if is_identifier(name) {
                        name.clone()
                    } else {
                        Value::String(name.clone()).to_string()
                    };
                    let optional = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    format!("{key}{optional}: {}", ts_type(schema, depth + 1))
                })
                .collect();
            format!("{{ {} }}", fields.join("; "))
        }
        _ => "any".into(),
    }
}

fn union(mut types: Vec<String>) -> String {
    types.dedup();
    match types.len() {
        0 => "never".into(),
        1 => types.remove(0),
        _ => types.join(" | "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_become_typescript_types() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": ["integer", "null"]},
                "mode": {"enum": ["fast", "slow"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "pairs": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
                "two words": {"type": "boolean"},
                "anything": {}
            },
            "required": ["path"]
        });
        assert_eq!(
            ts_type(&schema, 0),
            "{ path: string; limit?: number | null; mode?: \"fast\" | \"slow\"; tags?: string[]; \
             pairs?: Array<string | number>; \"two words\"?: boolean; anything?: any }"
        );
    }

    #[test]
    fn declarations_are_sorted_and_the_same_every_time() {
        let definitions = vec![
            ToolDefinition::new(
                "zeta",
                "Last.\nMore.",
                json!({"type": "object", "properties": {}}),
            ),
            ToolDefinition::new("run_code", "Itself.", json!({})),
            ToolDefinition::new(
                "web-fetch",
                "Fetch a page.",
                json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
            ),
        ];
        let text = declarations(&definitions, "run_code");
        assert_eq!(
            text,
            "/** Fetch a page. */\nasync function tools[\"web-fetch\"](args: { url: string }): \
             Promise<string>;\n/** Last. */\nasync function zeta(args: {}): Promise<string>;\n"
        );
        let mut reversed = definitions.clone();
        reversed.reverse();
        assert_eq!(declarations(&reversed, "run_code"), text);
    }

    #[test]
    fn a_deep_or_odd_schema_ends_in_any() {
        let mut schema = json!({"type": "string"});
        for _ in 0..20 {
            schema = json!({"type": "array", "items": schema});
        }
        assert!(ts_type(&schema, 0).contains("any"));
        assert_eq!(ts_type(&json!({"$ref": "#/x"}), 0), "any");
        assert_eq!(ts_type(&json!(false), 0), "never");
    }
}
