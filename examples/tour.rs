//! A tour of the registry, offline and without a key: two skills, their definitions (what a model
//! is shown), and one turn of tool calls as a model would send it — run concurrently where safe,
//! answered in call order, with an unknown name, bad arguments and a call a hook denies.
//!
//! `cargo run --example tour`

use eugene::{PermissionGate, Registry, SkillContext, SkillError, ToolCall, skill};
use serde_json::json;

/// Count the words in a text.
///
/// # Arguments
/// * `text` - The text to count words in.
#[skill(read_only, aliases = ["wc"])]
async fn word_count(text: String) -> Result<String, SkillError> {
    Ok(text.split_whitespace().count().to_string())
}

/// Delete a file from the workspace.
///
/// # Arguments
/// * `path` - The file to delete, relative to the workspace.
#[skill(destructive)]
async fn delete_file(path: String) -> Result<String, SkillError> {
    // Never reached in the tour: the permission gate below refuses destructive skills.
    Ok(format!("deleted {path}"))
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
