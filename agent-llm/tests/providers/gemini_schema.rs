//! Each rule of the conversion from JSON Schema to the schema Gemini's function declarations
//! and `responseSchema` accept (listed in `agent-llm/src/llm/gemini/schema.rs`), seen in the
//! request body, and a typed run's strict schema as a whole.

use agent_core::ToolDefinition;
use agent_llm::{ChatRequest, GeminiProvider, Message, ResponseSchema};
use serde_json::{Value, json};

/// The `parameters` sent for a tool whose input schema is `schema`.
fn parameters(schema: Value) -> Value {
    let tools = [ToolDefinition {
        name: "t".into(),
        description: "A tool.".into(),
        input_schema: schema,
        output_schema: None,
    }];
    let transcript = [Message::user("hi")];
    let request = ChatRequest::new(&transcript).tools(&tools);
    let body = GeminiProvider::new("k", "m").request_body(&request, false);
    body["tools"][0]["functionDeclarations"][0]["parameters"].clone()
}

/// The `parameters` of an object with one property `p` of schema `property`.
fn property(property: Value) -> Value {
    parameters(json!({"type": "object", "properties": {"p": property}}))["properties"]["p"].clone()
}

#[test]
fn rule_1_type_names_are_upper_case() {
    assert_eq!(
        parameters(json!({"type": "object", "properties": {
            "s": {"type": "string"}, "n": {"type": "number"}, "i": {"type": "integer"},
            "b": {"type": "boolean"}, "a": {"type": "array", "items": {"type": "string"}},
        }})),
        json!({"type": "OBJECT", "properties": {
            "s": {"type": "STRING"}, "n": {"type": "NUMBER"}, "i": {"type": "INTEGER"},
            "b": {"type": "BOOLEAN"}, "a": {"type": "ARRAY", "items": {"type": "STRING"}},
        }})
    );
}

#[test]
fn rule_2_a_type_list_with_null_is_nullable_and_several_types_are_any_of() {
    assert_eq!(
        property(json!({"type": ["string", "null"], "description": "A name."})),
        json!({"type": "STRING", "nullable": true, "description": "A name."})
    );
    assert_eq!(
        property(json!({"type": ["string", "integer"], "description": "An id."})),
        json!({"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}], "description": "An id."})
    );
}

#[test]
fn rule_3_any_of_and_one_of_with_a_null_branch_are_nullable_and_one_branch_is_unwrapped() {
    assert_eq!(
        property(json!({"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "Age."})),
        json!({"type": "INTEGER", "nullable": true, "description": "Age."})
    );
    assert_eq!(
        property(json!({"oneOf": [{"type": "string"}, {"type": "boolean"}]})),
        json!({"anyOf": [{"type": "STRING"}, {"type": "BOOLEAN"}]})
    );
}

#[test]
fn rule_4_references_are_inlined_and_recursion_stops_at_an_object() {
    let schema = json!({
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Place", "description": "Where they live."},
            "tree": {"$ref": "#/definitions/Node"},
        },
        "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "definitions": {"Node": {
            "type": "object",
            "description": "A node.",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}},
        }},
    });
    assert_eq!(
        parameters(schema),
        json!({"type": "OBJECT", "properties": {
            "home": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "description": "Where they live."},
            "tree": {"type": "OBJECT", "description": "A node.", "properties": {
                "children": {"type": "ARRAY", "items": {"type": "OBJECT", "description": "A node."}},
            }},
        }})
    );
}

#[test]
fn rule_5_all_of_is_merged() {
    assert_eq!(
        parameters(json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ], "description": "Both."})),
        json!({
            "type": "OBJECT",
            "description": "Both.",
            "properties": {"a": {"type": "STRING"}, "b": {"type": "INTEGER"}},
            "required": ["a", "b"],
        })
    );
}

#[test]
fn rule_6_const_is_a_one_value_enum_and_enums_of_other_values_are_dropped() {
    assert_eq!(
        property(json!({"const": "fixed"})),
        json!({"type": "STRING", "enum": ["fixed"]})
    );
    assert_eq!(
        property(json!({"type": "string", "enum": ["red", "green"]})),
        json!({"type": "STRING", "enum": ["red", "green"]})
    );
    assert_eq!(
        property(json!({"type": "integer", "enum": [1, 2, 3]})),
        json!({"type": "INTEGER"})
    );
}

#[test]
fn rule_7_formats_gemini_does_not_know_are_dropped_and_bounds_stay() {
    // What schemars writes for a `u8`, a timestamp, an `f64` and an e-mail address.
    assert_eq!(
        property(json!({"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255})),
        json!({"type": "INTEGER", "minimum": 0, "maximum": 255})
    );
    assert_eq!(
        property(json!({"type": "string", "format": "date-time"})),
        json!({"type": "STRING", "format": "date-time"})
    );
    assert_eq!(
        property(json!({"type": "number", "format": "double"})),
        json!({"type": "NUMBER", "format": "double"})
    );
    assert_eq!(
        property(json!({"type": "string", "format": "email"})),
        json!({"type": "STRING"})
    );
}

#[test]
fn rule_8_keywords_outside_the_subset_are_dropped_and_examples_give_an_example() {
    assert_eq!(
        parameters(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:x",
            "title": "Args",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 2, "default": 4},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3},
                "code": {"type": "string", "pattern": "^[a-z]+$", "examples": ["abc", "de"], "not": {"const": "x"}},
            },
            "required": ["n"],
        })),
        json!({
            "title": "Args",
            "type": "OBJECT",
            "properties": {
                "n": {"type": "INTEGER", "default": 4},
                "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": 3},
                "code": {"type": "STRING", "pattern": "^[a-z]+$", "example": "abc"},
            },
            "required": ["n"],
        })
    );
}

#[test]
fn rule_9_a_missing_type_is_inferred() {
    assert_eq!(
        property(json!({"properties": {"x": {"type": "number"}}})),
        json!({"type": "OBJECT", "properties": {"x": {"type": "NUMBER"}}})
    );
    assert_eq!(
        property(json!({"items": {"type": "boolean"}})),
        json!({"type": "ARRAY", "items": {"type": "BOOLEAN"}})
    );
    assert_eq!(
        property(json!({"enum": ["a", "b"]})),
        json!({"type": "STRING", "enum": ["a", "b"]})
    );
    assert_eq!(property(json!(true)), json!({}), "anything: unconstrained");
}

#[test]
fn rule_10_a_tuple_is_an_array_of_its_item_schemas_of_its_length() {
    let expected = json!({
        "type": "ARRAY",
        "items": {"anyOf": [{"type": "NUMBER"}, {"type": "STRING"}]},
        "minItems": 2,
        "maxItems": 2,
    });
    assert_eq!(
        property(json!({"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]})),
        expected
    );
    assert_eq!(
        property(json!({"type": "array", "items": [{"type": "number"}, {"type": "string"}]})),
        expected
    );
}

#[test]
fn a_typed_runs_strict_schema_becomes_a_response_schema_gemini_reads() {
    // A typed run's schema in strict form: closed objects, every property required, the
    // optional one nullable, a nested type by reference.
    let schema = ResponseSchema {
        name: "final_answer".into(),
        schema: json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "title": {"type": "string"},
                "priority": {"type": "integer", "format": "uint8", "minimum": 0},
                "labels": {"type": ["array", "null"], "items": {"type": "string"}},
                "owner": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]},
            },
            "required": ["title", "priority", "labels", "owner"],
            "$defs": {"Person": {"type": "object", "additionalProperties": false,
                "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        }),
    };
    let transcript = [Message::user("File a ticket.")];
    let request = ChatRequest::new(&transcript).response_schema(&schema);
    let body = GeminiProvider::new("k", "m").request_body(&request, false);
    assert_eq!(
        body["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert_eq!(
        body["generationConfig"]["responseSchema"],
        json!({
            "type": "OBJECT",
            "properties": {
                "title": {"type": "STRING"},
                "priority": {"type": "INTEGER", "minimum": 0},
                "labels": {"type": "ARRAY", "items": {"type": "STRING"}, "nullable": true},
                "owner": {"type": "OBJECT", "properties": {"name": {"type": "STRING"}}, "required": ["name"], "nullable": true},
            },
            "required": ["title", "priority", "labels", "owner"],
        })
    );
}
