// Every key of the attribute at once.
use std::time::Duration;

use eugene::{Registry, Skill, SkillError, skill};
use serde_json::json;

#[skill(
    name = "lookup-word",
    description = "Look a word up in the dictionary.",
    read_only,
    idempotent = false,
    concurrency_safe = false,
    defer,
    aliases = ["define", "dict"],
    search_hint = "dictionary meaning definition",
    timeout = "500ms",
    crate = eugene,
    register = true,
    struct_name = WordLookup
)]
pub async fn lookup(#[arg(undocumented)] word: String) -> Result<String, SkillError> {
    Ok(format!("{word}: a word"))
}

fn main() {
    let skill = WordLookup;
    assert_eq!(Skill::name(&skill), "lookup-word");
    assert_eq!(Skill::description(&skill), "Look a word up in the dictionary.");
    assert!(skill.is_read_only() && !skill.is_concurrency_safe() && skill.should_defer());
    // Read-only skills are idempotent unless the key says otherwise.
    assert!(!skill.is_idempotent());
    assert_eq!(skill.aliases(), ["define", "dict"]);
    assert_eq!(skill.search_hint(), Some("dictionary meaning definition"));
    assert_eq!(Skill::timeout(&skill), Some(Duration::from_millis(500)));

    let registry = Registry::discover().unwrap();
    assert!(registry.contains("dict"));
    let location = registry.location("lookup-word").unwrap();
    assert!(location.file.ends_with("every_key.rs"), "{}", location.file);
    // Deferred: only tool_search is shown until it loads the skill.
    let names: Vec<String> = registry.definitions().into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["tool_search"]);
    let schema = &registry.definitions_for(&{
        let session = eugene::skills::RunScope::new();
        session.load("lookup-word");
        session
    })[0].input_schema;
    assert_eq!(*schema, json!({
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
        "additionalProperties": false
    }));
}
