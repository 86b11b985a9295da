//! A tour of the registry, offline and without a key: two skills, their definitions (what a model
//! is shown), and one turn of tool calls as a model would send it — run concurrently where safe,
//! answered in call order, with an unknown name, bad arguments and a call a hook denies.
//!
//! `cargo run --example tour`
//!
//! (The `#[skill]` attribute will replace the hand-written `impl Skill` blocks below.)

use eugene::__private::{schemars, serde};
use eugene::{
    PermissionGate, Registry, Skill, SkillContext, SkillError, SkillOutput, ToolCall, async_trait,
};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "eugene::__private::serde", deny_unknown_fields)]
#[schemars(crate = "eugene::__private::schemars")]
struct WordCountInput {
    /// The text to count words in.
    text: String,
}

/// Counts words. Read-only, so several calls run at once.
struct WordCount;

#[async_trait]
impl Skill for WordCount {
    type Input = WordCountInput;
    fn name(&self) -> &str {
        "word_count"
    }
    fn description(&self) -> &str {
        "Count the words in a text."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn aliases(&self) -> &[&'static str] {
        &["wc"]
    }
    async fn run(
        &self,
        input: WordCountInput,
        _: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        Ok(input.text.split_whitespace().count().to_string().into())
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "eugene::__private::serde", deny_unknown_fields)]
#[schemars(crate = "eugene::__private::schemars")]
struct DeleteInput {
    /// The file to delete, relative to the workspace.
    path: String,
}

/// Would delete a file: destructive, so the permission gate below refuses it.
struct DeleteFile;

#[async_trait]
impl Skill for DeleteFile {
    type Input = DeleteInput;
    fn name(&self) -> &str {
        "delete_file"
    }
    fn description(&self) -> &str {
        "Delete a file from the workspace."
    }
    fn is_destructive(&self) -> bool {
        true
    }
    async fn run(&self, input: DeleteInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok(format!("deleted {}", input.path).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut registry = Registry::new();
    registry
        .add(WordCount)
        .add(DeleteFile)
        .with_hook(PermissionGate::new(|_name, metadata| {
            !metadata.is_destructive
        }));

    println!("== What the model is shown");
    for definition in registry.definitions() {
        println!("{}: {}", definition.name, definition.description);
        println!("{:#}\n", definition.input_schema);
    }

    println!("== One turn of tool calls");
    let calls = [
        ToolCall::new(
            "call_1",
            "word_count",
            json!({"text": "skills are async fns"}),
        ),
        ToolCall::new("call_2", "wc", json!({"text": "one attribute"})),
        ToolCall::new("call_3", "word_cont", json!({"text": "typo in the name"})),
        ToolCall::new(
            "call_4",
            "word_count",
            json!({"txt": "typo in an argument"}),
        ),
        ToolCall::new("call_5", "delete_file", json!({"path": "Cargo.toml"})),
    ];
    for result in registry.run_many(&calls, &SkillContext::default()).await {
        let status = if result.is_error() { "error" } else { "ok" };
        println!(
            "{} {} [{status}] {}",
            result.call_id,
            result.name,
            result.content()
        );
    }
}
