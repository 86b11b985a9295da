// The struct takes the function's visibility; raw identifiers work as names and parameters.
mod tools {
    use eugene::{SkillError, skill};

    /// Classify a thing.
    ///
    /// # Arguments
    /// * `type` - The kind of thing.
    #[skill(read_only)]
    pub(crate) async fn r#match(r#type: String) -> Result<String, SkillError> {
        Ok(format!("matched {}", r#type))
    }
}

use eugene::{Registry, SkillContext, ToolCall};
use serde_json::json;

#[tokio::main]
async fn main() {
    let mut registry = Registry::new();
    registry.add(tools::MatchSkill);
    let def = &registry.definitions()[0];
    assert_eq!(def.name, "match");
    assert_eq!(def.description, "Classify a thing.");
    assert_eq!(
        def.input_schema,
        json!({
            "type": "object",
            "properties": {"type": {"type": "string", "description": "The kind of thing."}},
            "required": ["type"],
            "additionalProperties": false
        })
    );
    let result = registry.run_one(&ToolCall::new("1", "match", json!({"type": "fruit"})), &SkillContext::default()).await;
    assert_eq!(result.content(), "matched fruit");
}
