// `struct_name` names the generated unit struct; the default, `{Function}Skill`, is then free for a
// type of the user's. Two skills in one module whose names differ only in case style.
mod tools {
    use eugene::{SkillError, skill};

    /// The user's own type, named like the struct `#[skill]` would generate for `forecast`.
    pub struct ForecastSkill {
        pub days: u32,
    }

    /// Forecast the weather.
    #[skill(read_only, struct_name = Forecaster)]
    pub(crate) async fn forecast() -> Result<String, SkillError> {
        Ok(format!("sunny for {} days", ForecastSkill { days: 3 }.days))
    }

    /// Get a user, in snake case.
    #[skill(read_only)]
    pub async fn get_user(#[arg(undocumented)] id: u32) -> Result<String, SkillError> {
        Ok(format!("get_user {id}"))
    }

    /// Get a user, in camel case.
    #[skill(read_only, name = "getUser")]
    pub async fn get_user_camel(#[arg(undocumented)] id: u32) -> Result<String, SkillError> {
        Ok(format!("getUser {id}"))
    }
}

use eugene::{Registry, Skill, SkillContext, ToolCall};
use serde_json::json;

#[tokio::main]
async fn main() {
    assert_eq!(Skill::name(&tools::Forecaster), "forecast");
    let mut registry = Registry::new();
    registry
        .add(tools::Forecaster)
        .add(tools::GetUserSkill)
        .add(tools::GetUserCamelSkill);
    let ctx = SkillContext::default();
    let forecast = registry
        .run_one(&ToolCall::new("1", "forecast", json!({})), &ctx)
        .await;
    assert_eq!(forecast.content(), "sunny for 3 days");
    let snake = registry
        .run_one(&ToolCall::new("2", "get_user", json!({"id": 1})), &ctx)
        .await;
    let camel = registry
        .run_one(&ToolCall::new("3", "getUser", json!({"id": 2})), &ctx)
        .await;
    assert_eq!(
        (&*snake.content(), &*camel.content()),
        ("get_user 1", "getUser 2")
    );

    // Registered for discovery under their own names, side by side.
    let discovered = Registry::discover().unwrap();
    assert!(
        ["forecast", "get_user", "getUser"]
            .iter()
            .all(|n| discovered.contains(n))
    );
}
