// The smallest skill: a doc comment, no parameters, a plain `Result`.
use eugene::{Registry, SkillError, skill};
use serde_json::json;

/// Tell the time of day.
#[skill]
async fn now() -> Result<&'static str, SkillError> {
    Ok("noon")
}

fn main() {
    let mut registry = Registry::new();
    registry.add(NowSkill);
    let def = &registry.definitions()[0];
    assert_eq!((def.name.as_str(), def.description.as_str()), ("now", "Tell the time of day."));
    assert_eq!(def.input_schema, json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}));
    let md = registry.metadata("now").unwrap();
    assert!(!md.is_read_only && !md.is_destructive && !md.is_concurrency_safe && !md.should_defer);
}
