//! JSON Schema to the schema Gemini's `parameters` and `responseSchema` accept: a subset of
//! OpenAPI 3.0's, with upper-case type names and `nullable` instead of a `null` type.
//!
//! The rules, each pinned by a test in `agent-llm/tests/providers/gemini_schema.rs`:
//! 1. `type` names are upper-cased (`string` → `STRING`).
//! 2. A type list with `null` is its other type and `nullable: true`; several other types are
//!    an `anyOf` of each.
//! 3. `anyOf` and `oneOf` become `anyOf`; a `{"type": "null"}` branch becomes `nullable: true`,
//!    and a single branch left is the schema itself.
//! 4. A `$ref` into the root's `$defs` (or `definitions`) is replaced by what it names, with the
//!    `$ref`'s own `description` kept; a reference to a schema it is inside of (recursion,
//!    which Gemini cannot express) becomes a plain `OBJECT`.
//! 5. `allOf` is merged into one schema (properties and `required` joined).
//! 6. `const` becomes a one-value `enum`; an `enum` whose values are not all strings is dropped
//!    (Gemini's enums are strings), the type kept.
//! 7. A `format` Gemini does not know for the type is dropped (it knows `date-time` and `enum`
//!    for strings, `int32`/`int64` for integers, `float`/`double` for numbers), e.g. the
//!    `uint8` schemars writes for a `u8`; its `minimum` stays.
//! 8. Keywords outside the subset are dropped: `$schema`, `$id`, `$defs`, `additionalProperties`,
//!    `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `uniqueItems`, `not`, `if` and
//!    the like; `examples` gives its first value as `example`.
//! 9. A schema without a `type` gets `OBJECT` when it has `properties`, `ARRAY` when it has
//!    `items`, `STRING` when it has an `enum`.
//! 10. A tuple (`prefixItems`, or `items` as a list) is an array of `anyOf` its item schemas,
//!     with as many items as it has.

use serde_json::{Map, Value, json};

/// Keywords copied as they are.
const KEPT: [&str; 15] = [
    "description",
    "title",
    "nullable",
    "default",
    "example",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];

/// `schema` in the form Gemini's `parameters` and `responseSchema` accept (see the module docs).
pub(super) fn to_gemini(schema: &Value) -> Value {
    convert(schema, schema, &mut Vec::new())
}

/// `schema`, converted, with `root` for resolving references and `inside` the references being
/// resolved (to stop at recursion).
fn convert(schema: &Value, root: &Value, inside: &mut Vec<String>) -> Value {
    let Value::Object(map) = schema else {
        // `true` (anything) and `false` have no equivalent: an unconstrained schema.
        return json!({});
    };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        return resolve(reference, map, root, inside);
    }
    if let Some(branches) = map
        .get("anyOf")
        .or_else(|| map.get("oneOf"))
        .and_then(Value::as_array)
    {
        let mut out = union(branches.iter(), root, inside);
        copy_kept(map, &mut out);
        return Value::Object(out);
    }
    if let Some(parts) = map.get("allOf").and_then(Value::as_array) {
        let mut out = Map::new();
        for part in parts {
            if let Value::Object(part) = convert(part, root, inside) {
                merge(&mut out, part);
            }
        }
        let mut rest = map.clone();
        rest.remove("allOf");
        if let Value::Object(rest) = convert(&Value::Object(rest), root, inside) {
            merge(&mut out, rest);
        }
        return Value::Object(out);
    }
    match map.get("type") {
        Some(Value::Array(types)) => {
            let others: Vec<&Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .collect();
            let nullable = others.len() < types.len();
            let mut out = if others.len() == 1 {
                let mut single = map.clone();
                single.insert("type".into(), others[0].clone());
                as_map(convert(&Value::Object(single), root, inside))
            } else {
                let branches = others.iter().map(|t| {
                    let mut single = map.clone();
                    single.insert("type".into(), (*t).clone());
                    single.remove("description");
                    Value::Object(single)
                });
                let mut out = union(branches.collect::<Vec<_>>().iter(), root, inside);
                copy_kept(map, &mut out);
                out
            };
            if nullable {
                out.insert("nullable".into(), json!(true));
            }
            Value::Object(out)
        }
        _ => Value::Object(plain(map, root, inside)),
    }
}

/// A schema with a single type (or none): its keywords one by one.
fn plain(map: &Map<String, Value>, root: &Value, inside: &mut Vec<String>) -> Map<String, Value> {
    let mut out = Map::new();
    copy_kept(map, &mut out);
    if let Some(kind) = map.get("type").and_then(Value::as_str) {
        out.insert("type".into(), json!(kind.to_ascii_uppercase()));
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array)
        && values.iter().all(Value::is_string)
    {
        out.insert("enum".into(), Value::Array(values.clone()));
    }
    if let Some(value @ Value::String(_)) = map.get("const") {
        out.insert("enum".into(), json!([value]));
    }
    if let Some(example) = map
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        out.entry("example").or_insert_with(|| example.clone());
    }
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        let converted = properties
            .iter()
            .map(|(name, schema)| (name.clone(), convert(schema, root, inside)))
            .collect();
        out.insert("properties".into(), Value::Object(converted));
    }
    if let Some(required) = map.get("required").filter(|r| r.is_array()) {
        out.insert("required".into(), required.clone());
    }
    let tuple = map
        .get("prefixItems")
        .or_else(|| map.get("items").filter(|i| i.is_array()))
        .and_then(Value::as_array);
    if let Some(items) = tuple {
        out.insert(
            "items".into(),
            Value::Object(union(items.iter(), root, inside)),
        );
        out.insert("minItems".into(), json!(items.len()));
        out.insert("maxItems".into(), json!(items.len()));
    } else if let Some(items) = map.get("items") {
        out.insert("items".into(), convert(items, root, inside));
    }
    if !out.contains_key("type") {
        let inferred = if out.contains_key("properties") {
            Some("OBJECT")
        } else if out.contains_key("items") {
            Some("ARRAY")
        } else if out.contains_key("enum") {
            Some("STRING")
        } else {
            None
        };
        if let Some(kind) = inferred {
            out.insert("type".into(), json!(kind));
        }
    }
    if let Some(format) = map.get("format").and_then(Value::as_str) {
        let known = match out.get("type").and_then(Value::as_str) {
            Some("STRING") => ["date-time", "enum"].contains(&format),
            Some("INTEGER") => ["int32", "int64"].contains(&format),
            Some("NUMBER") => ["float", "double"].contains(&format),
            _ => false,
        };
        if known {
            out.insert("format".into(), json!(format));
        }
    }
    out
}

/// The branches of an `anyOf`: `null` ones make it nullable, a single other one is the schema.
fn union<'v>(
    branches: impl Iterator<Item = &'v Value>,
    root: &Value,
    inside: &mut Vec<String>,
) -> Map<String, Value> {
    let mut nullable = false;
    let mut others = Vec::new();
    for branch in branches {
        if branch.get("type").and_then(Value::as_str) == Some("null") {
            nullable = true;
        } else {
            others.push(convert(branch, root, inside));
        }
    }
    let mut out = if others.len() == 1 {
        as_map(others.pop().unwrap_or_default())
    } else {
        let mut out = Map::new();
        out.insert("anyOf".into(), Value::Array(others));
        out
    };
    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    out
}

/// What `reference` names in `root`, converted, with the referring schema's description.
fn resolve(
    reference: &str,
    map: &Map<String, Value>,
    root: &Value,
    inside: &mut Vec<String>,
) -> Value {
    let target = reference
        .strip_prefix('#')
        .and_then(|pointer| root.pointer(pointer));
    let mut out = match target {
        _ if inside.iter().any(|r| r == reference) => {
            let mut recursive = Map::new();
            recursive.insert("type".into(), json!("OBJECT"));
            if let Some(description) = target.and_then(|t| t.get("description")) {
                recursive.insert("description".into(), description.clone());
            }
            recursive
        }
        Some(target) => {
            inside.push(reference.to_owned());
            let converted = convert(target, root, inside);
            inside.pop();
            as_map(converted)
        }
        None => Map::new(),
    };
    copy_kept(map, &mut out);
    Value::Object(out)
}

/// The keywords of [`KEPT`] that `from` has, into `into` (replacing what is there).
fn copy_kept(from: &Map<String, Value>, into: &mut Map<String, Value>) {
    for key in KEPT {
        if let Some(value) = from.get(key) {
            into.insert(key.into(), value.clone());
        }
    }
}

/// `part` merged into `into`: properties and `required` joined, other keywords replaced.
fn merge(into: &mut Map<String, Value>, part: Map<String, Value>) {
    for (key, value) in part {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(existing)), Value::Object(more)) => {
                existing.extend(more);
            }
            ("required", Some(Value::Array(existing)), Value::Array(more)) => {
                for name in more {
                    if !existing.contains(&name) {
                        existing.push(name);
                    }
                }
            }
            (_, _, value) => {
                into.insert(key, value);
            }
        }
    }
}

fn as_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
