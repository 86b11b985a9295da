// `destructive`, `concurrency_safe` on a skill that writes, and `register = false`.
use eugene::{Registry, Skill, SkillError, skill, skills::RegistryError};

/// Remove every file in the scratch directory.
#[skill(destructive, concurrency_safe, register = false)]
async fn clear_scratch() -> Result<String, SkillError> {
    Ok("cleared".into())
}

fn main() {
    assert!(ClearScratchSkill.is_destructive() && !ClearScratchSkill.is_read_only());
    assert!(ClearScratchSkill.is_concurrency_safe());
    let mut registry = Registry::new();
    registry.add(ClearScratchSkill);
    assert_eq!(
        registry.definitions()[0].input_schema,
        serde_json::json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
    assert!(matches!(Registry::discover(), Err(RegistryError::NothingDiscovered)), "register = false submits nothing");
}
