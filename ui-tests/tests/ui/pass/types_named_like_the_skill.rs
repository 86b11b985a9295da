// The natural names for a skill's own types are free: a skill `forecast` returning a `Forecast`, a
// skill `query` taking a `Query`, a skill `user` returning a `User`. Nor can the user's names meet
// the hidden items: a parameter type named like the input struct (`LookupSkillInput`), a default
// calling a function named like the generated default helper.
use eugene::{Registry, SkillContext, SkillError, ToolCall, skill};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A weather forecast.
#[derive(Serialize, JsonSchema)]
pub struct Forecast {
    pub celsius: f64,
}

/// Forecast tomorrow's weather.
#[skill(read_only)]
pub async fn forecast() -> Result<Forecast, SkillError> {
    Ok(Forecast { celsius: 21.5 })
}

/// A search query.
#[derive(Deserialize, JsonSchema)]
pub struct Query {
    /// The words to look for.
    pub words: String,
}

/// Run a query.
///
/// # Arguments
/// * `query` - What to look for.
#[skill(read_only)]
pub async fn query(query: Query) -> Result<String, SkillError> {
    Ok(format!("results for {}", query.words))
}

/// A user of the system.
#[derive(Debug, Serialize, JsonSchema)]
pub struct User {
    pub name: String,
}

/// Look a user up by id.
#[skill(read_only)]
pub async fn user(#[arg(undocumented)] id: u32) -> Result<User, SkillError> {
    Ok(User {
        name: format!("user {id}"),
    })
}

/// A type named exactly like the input struct `#[skill]` would hide for `lookup`.
#[derive(Deserialize, JsonSchema)]
pub struct LookupSkillInput {
    /// The key.
    pub key: String,
}

fn __default_limit() -> u32 {
    3
}

/// Look a key up.
///
/// # Arguments
/// * `input` - What to look up.
/// * `limit` - How many answers.
#[skill(read_only)]
pub async fn lookup(
    input: LookupSkillInput,
    #[arg(default = __default_limit())] limit: u32,
) -> Result<String, SkillError> {
    Ok(format!("{} x{limit}", input.key))
}

#[tokio::main]
async fn main() {
    let mut registry = Registry::new();
    registry
        .add(ForecastSkill)
        .add(QuerySkill)
        .add(UserSkill)
        .add(LookupSkill);
    let ctx = SkillContext::default();
    for (name, args, expected) in [
        ("forecast", json!({}), r#"{"celsius":21.5}"#),
        (
            "query",
            json!({"query": {"words": "rust"}}),
            "results for rust",
        ),
        ("user", json!({"id": 7}), r#"{"name":"user 7"}"#),
        ("lookup", json!({"input": {"key": "k"}}), "k x3"),
    ] {
        let result = registry
            .run_one(&ToolCall::new("1", name, args), &ctx)
            .await;
        assert_eq!(result.content(), expected, "{name}");
    }
    let lookup = &registry.definitions()[3];
    assert_eq!(
        lookup.input_schema["properties"]["input"]["properties"]["key"]["type"],
        "string"
    );
    assert_eq!(lookup.input_schema["required"], json!(["input"]));

    // The functions and the user's types are untouched.
    assert_eq!(forecast().await.unwrap().celsius, 21.5);
    assert_eq!(user(1).await.unwrap().name, "user 1");
    let _: Query = Query {
        words: String::new(),
    };
}
