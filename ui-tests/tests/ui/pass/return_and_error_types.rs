// Every `Ok` type that converts into `SkillOutput`, and every kind of error: `SkillError` itself
// (kept as is), types with `Into<SkillError>`, and any `std::error::Error` or boxed error.
use std::fmt;

use eugene::{Registry, SkillContext, SkillError, SkillOutput, ToolCall, skill};
use serde_json::{Value, json};

/// Returns a JSON value.
#[skill]
async fn as_json() -> Result<Value, SkillError> {
    Ok(json!({"ok": true}))
}

/// Returns a `SkillOutput`.
#[skill]
async fn as_output() -> Result<SkillOutput, String> {
    Ok(SkillOutput::Text("out".into()))
}

/// Fails transiently, and stays transient.
#[skill]
async fn busy() -> Result<String, SkillError> {
    Err(SkillError::Transient("try later".into()))
}

/// Fails with an I/O error.
#[skill]
async fn io_failure() -> Result<String, std::io::Error> {
    Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
}

#[derive(Debug)]
struct MyError;

impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("my error")
    }
}

impl std::error::Error for MyError {}

/// Fails with an error type of the user's, which knows nothing of `SkillError`.
#[skill]
async fn custom_failure() -> Result<String, MyError> {
    Err(MyError)
}

/// Fails with a boxed error, as `anyhow`-style code does.
#[skill]
async fn boxed_failure() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Err("boxed".into())
}

/// Uses a `Result` alias with one parameter.
#[skill]
async fn aliased() -> std::io::Result<String> {
    Ok("aliased".into())
}

#[tokio::main]
async fn main() {
    let mut registry = Registry::new();
    registry
        .with_retry_policy(eugene::skills::RetryPolicy::none())
        .add(AsJsonSkill)
        .add(AsOutputSkill)
        .add(BusySkill)
        .add(IoFailureSkill)
        .add(CustomFailureSkill)
        .add(BoxedFailureSkill)
        .add(AliasedSkill);
    let names = ["as_json", "as_output", "busy", "io_failure", "custom_failure", "boxed_failure", "aliased"];
    let calls: Vec<ToolCall> = names.iter().map(|n| ToolCall::new(*n, *n, json!({}))).collect();
    let empty = json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false});
    assert!(registry.definitions().iter().all(|d| d.input_schema == empty));
    let results = registry.run_many(&calls, &SkillContext::default()).await;
    let contents: Vec<String> = results.iter().map(|r| r.content().into_owned()).collect();
    assert_eq!(contents, [r#"{"ok":true}"#, "out", "temporary failure: try later", "no such file", "my error", "boxed", "aliased"]);
    assert!(matches!(results[2].output, Err(SkillError::Transient(_))));
    assert!(results[3..6].iter().all(|r| matches!(r.output, Err(SkillError::Tool { .. }))));
}
