//! The incremental JSON reader behind typed runs' partial answers: any split of valid JSON ends
//! as serde_json reads it whole, the value so far holds complete values only, a change is
//! reported once, malformed text stops it with the value so far kept, and nesting is bounded.

use agent_runtime::runtime::{MAX_PARTIAL_DEPTH as MAX_DEPTH, PartialJson};
use serde_json::{Value, json};

/// Reads `text` in pieces of `size` characters, none of them an error.
fn read_in_pieces(text: &str, size: usize) -> PartialJson {
    let mut json = PartialJson::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(size) {
        json.push(&piece.iter().collect::<String>());
        assert!(json.error().is_none(), "{:?} in {text}", json.error());
    }
    json
}

#[test]
fn any_split_of_valid_json_ends_as_serde_json_reads_it() {
    let texts = [
        r#"{"a": 1, "b": [true, false, null, -2.5e3], "c": {"d": "e\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}}"#,
        r#"[1, [2, [3, {"x": []}]], {}, "", 0]"#,
        r#"  {"nested": {"deeper": {"deepest": [1, 2, 3]}}, "after": "yes"}  "#,
        r#"{"k": 1, "k": 2}"#,
    ];
    for text in texts {
        let whole: Value = serde_json::from_str(text).unwrap();
        for size in [1, 2, 3, 7, 1000] {
            let json = read_in_pieces(text, size);
            assert!(json.is_complete(), "{text} in pieces of {size}");
            assert_eq!(json.value(), Some(&whole), "{text} in pieces of {size}");
        }
    }
}

#[test]
fn the_value_so_far_holds_complete_members_only() {
    let mut json = PartialJson::new();
    json.push(r#"Here it is: ```json {"name": "Ad"#);
    assert_eq!(json.value(), Some(&json!({})), "the string is not done");
    json.push(r#"a", "age": 3"#);
    assert_eq!(
        json.value(),
        Some(&json!({"name": "Ada"})),
        "3 may go on: 36"
    );
    json.push(r#"6, "langs": [{"n": "ML", "y": 19"#);
    assert_eq!(
        json.value(),
        Some(&json!({"name": "Ada", "age": 36, "langs": [{"n": "ML"}]}))
    );
    json.push("73}]} ``` done");
    assert!(json.is_complete());
    assert!(json.error().is_none(), "what follows the value is skipped");
    assert_eq!(json.value().unwrap()["langs"][0]["y"], 1973);
}

#[test]
fn changes_are_reported_once_per_added_value() {
    let mut json = PartialJson::new();
    json.push("prose");
    assert!(!json.take_changed());
    json.push(r#"{"a": "x"#);
    assert!(json.take_changed(), "the object opened");
    json.push("yz");
    assert!(!json.take_changed(), "a string in progress adds nothing");
    json.push(r#"", "#);
    assert!(json.take_changed());
    assert!(!json.take_changed());
}

#[test]
fn malformed_text_stops_the_parser_and_keeps_the_value_so_far() {
    for (text, kept) in [
        (r#"{"a": 1, "b": tru, "c": 2}"#, json!({"a": 1})),
        (r#"{"a": 1,, "b": 2}"#, json!({"a": 1})),
        (r#"{"a": 1 "b": 2}"#, json!({"a": 1})),
        (r#"{"a": "\x"}"#, json!({})),
        (r#"{"a": "\ud800x"}"#, json!({})),
        (r#"{"a": [1, ]}"#, json!({"a": [1]})),
        ("{\"a\": \"line\nbreak\"}", json!({})),
        (r#"{"a": 1.2.3}"#, json!({})),
    ] {
        let mut json = PartialJson::new();
        json.push(text);
        assert!(json.error().is_some(), "{text}");
        json.push(r#", "more": 1}"#);
        assert_eq!(json.value(), Some(&kept), "{text}");
    }
}

#[test]
fn nesting_past_the_limit_is_refused_not_followed() {
    let mut json = PartialJson::new();
    json.push(&"[".repeat(MAX_DEPTH + 10));
    assert!(
        json.error().unwrap().contains("deeper"),
        "{:?}",
        json.error()
    );
}
