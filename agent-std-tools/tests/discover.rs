//! A binary that links the crate (and names nothing else from it) finds all ten skills with
//! `Registry::discover()`, with the arguments and flags the issue promises the model.

#![cfg(feature = "web")] // the list includes web_fetch, a default feature

use agent_core::Registry;
use agent_std_tools as _;
use serde_json::{Value, json};

#[test]
fn discover_finds_exactly_the_ten_skills_and_tool_search() {
    let registry = Registry::discover().unwrap();
    let mut names: Vec<String> = registry.names().collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "apply_patch",
            "delete_file",
            "list_dir",
            "read_file",
            "recall",
            "remember",
            "run_shell",
            "search_files",
            "tool_search",
            "web_fetch",
            "write_file",
        ]
    );
    let mut own: Vec<&str> = agent_std_tools::SKILL_NAMES.to_vec();
    own.push("tool_search");
    own.sort_unstable();
    assert_eq!(names, own);
    assert!(registry.contains("remove_file"), "delete_file's alias");
}

#[test]
fn add_all_builds_the_same_registry_by_hand() {
    let mut registry = Registry::new();
    agent_std_tools::add_all(&mut registry);
    let mut by_hand: Vec<String> = registry.names().collect();
    let mut discovered: Vec<String> = Registry::discover().unwrap().names().collect();
    by_hand.sort();
    discovered.sort();
    assert_eq!(by_hand, discovered);
}

/// (name, read_only, destructive, deferred)
const FLAGS: [(&str, bool, bool, bool); 10] = [
    ("read_file", true, false, false),
    ("write_file", false, false, false),
    ("apply_patch", false, false, false),
    ("list_dir", true, false, false),
    ("run_shell", false, true, false),
    ("search_files", true, false, false),
    ("web_fetch", true, false, false),
    ("remember", false, false, false),
    ("recall", true, false, false),
    ("delete_file", false, true, true),
];

#[test]
fn flags_are_the_ones_in_the_issue() {
    let registry = Registry::discover().unwrap();
    for (name, read_only, destructive, deferred) in FLAGS {
        let meta = registry.metadata(name).unwrap();
        assert_eq!(meta.is_read_only, read_only, "{name} read_only");
        assert_eq!(meta.is_destructive, destructive, "{name} destructive");
        assert_eq!(meta.should_defer, deferred, "{name} deferred");
    }
    let delete = registry.metadata("delete_file").unwrap();
    assert_eq!(delete.aliases.len(), 1);
    assert_eq!(&*delete.aliases[0], "remove_file");
    assert!(delete.search_hint.as_deref().unwrap().contains("remove"));
}

#[test]
fn argument_names_are_the_contract_the_model_sees() {
    let registry = Registry::discover().unwrap();
    let session = agent_core::RunScope::new();
    session.load("delete_file");
    let definitions = registry.definitions_for(&session);
    let shape = |name: &str| -> (Vec<String>, Value) {
        let def = definitions.iter().find(|d| d.name == name).unwrap();
        let properties = def.input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        (properties, def.input_schema["required"].clone())
    };
    let expected: [(&str, &[&str], Value); 10] = [
        ("read_file", &["path", "offset", "limit"], json!(["path"])),
        (
            "write_file",
            &["path", "content"],
            json!(["path", "content"]),
        ),
        ("apply_patch", &["patch"], json!(["patch"])),
        ("list_dir", &["path", "depth"], json!([])),
        ("run_shell", &["command", "timeout_ms"], json!(["command"])),
        (
            "search_files",
            &["pattern", "path", "glob", "max_results"],
            json!(["pattern"]),
        ),
        ("web_fetch", &["url"], json!(["url"])),
        ("remember", &["key", "value"], json!(["key", "value"])),
        ("recall", &["key", "query"], json!([])),
        ("delete_file", &["path", "recursive"], json!(["path"])),
    ];
    for (name, properties, required) in expected {
        let (got, got_required) = shape(name);
        assert_eq!(got, properties, "{name} properties");
        assert_eq!(got_required, required, "{name} required");
    }
    // Every argument is described for the model.
    for def in &definitions {
        for (arg, schema) in def.input_schema["properties"].as_object().unwrap() {
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{}.{arg} has no description",
                def.name
            );
        }
    }
}
