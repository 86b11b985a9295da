//! A tour, offline and without a key: two skills written with `#[skill]`, their definitions (what a
//! model is shown), one turn of tool calls run by the registry — concurrently where safe, answered
//! in call order, with an unknown name, bad arguments and a call a hook denies — and then the real
//! agent loop against a scripted model, printing its event stream. Last, an Agent Skill compiled
//! in from `examples/skills/` (checked at compile time), loaded by the model a level at a time.
//!
//! `cargo run --example tour`

use eugene::{
    AgentEvent, AgentRuntime, AgentSkill, MockProvider, MockReply, PermissionGate, Registry,
    SkillContext, SkillError, ToolCall, agent_skills, skill,
};
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

// Every skill folder under examples/skills/, embedded in the binary and checked against the Agent
// Skills specification while this file compiles.
agent_skills!("skills");

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut registry = Registry::new();
    registry
        .add(WordCountSkill)
        .add(DeleteFileSkill)
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

    println!("\n== The agent loop, with a scripted model");
    let model = MockProvider::new([
        // Two read-only calls (run together) and a destructive one (the gate denies it).
        MockReply::text_and_tool_calls(
            "Counting both texts, and tidying up.",
            [
                ToolCall::new("t1", "word_count", json!({"text": "one two three"})),
                ToolCall::new("t2", "wc", json!({"text": "four five"})),
                ToolCall::new("t3", "delete_file", json!({"path": "Cargo.lock"})),
            ],
        ),
        // A mistake in the arguments...
        MockReply::tool_calls([ToolCall::new("t4", "word_count", json!({"txt": "six"}))]),
        // ...corrected after reading the error.
        MockReply::tool_calls([ToolCall::new(
            "t5",
            "word_count",
            json!({"text": "six seven"}),
        )]),
        MockReply::text("The texts have 3, 2 and 2 words; I was not allowed to delete Cargo.lock."),
    ]);
    let runtime = AgentRuntime::new(model, registry)
        .max_steps(8)
        .event_sink(print_event);
    let outcome = runtime
        .run("How many words are in these texts? Also delete Cargo.lock.")
        .await
        .unwrap();
    println!("{} steps, {} tokens", outcome.steps, outcome.usage.total());

    println!("\n== An Agent Skill, loaded a level at a time");
    let mut registry = Registry::new();
    registry.add(WordCountSkill);
    registry.add_agent_skills(AgentSkill::embedded()).unwrap();
    let load_skill = registry
        .definitions()
        .into_iter()
        .find(|d| d.name == "load_skill")
        .unwrap();
    println!(
        "level 1, in load_skill's description:\n{}\n",
        load_skill.description
    );
    let headline = "Eight small skills walk into one binary together today";
    let model = MockProvider::new([
        // Level 2: the instructions.
        MockReply::tool_calls([ToolCall::new(
            "s1",
            "load_skill",
            json!({"name": "word-budget"}),
        )]),
        // Level 3: the file they point at.
        MockReply::tool_calls([ToolCall::new(
            "s2",
            "load_skill",
            json!({"name": "word-budget", "file": "references/budgets.md"}),
        )]),
        MockReply::tool_calls([ToolCall::new("s3", "word_count", json!({"text": headline}))]),
        MockReply::text("The headline has 9 words; its budget is 8, so it is one over."),
    ]);
    let runtime = AgentRuntime::new(model, registry)
        .max_steps(6)
        .event_sink(print_event);
    runtime
        .run(format!("Is this headline short enough? {headline}"))
        .await
        .unwrap();
}

/// Prints what happens during a run.
fn print_event(event: &AgentEvent) {
    match event {
        AgentEvent::AssistantText { step, text } => println!("[{step}] model: {text}"),
        AgentEvent::ToolCall { step, call } => println!(
            "[{step}] call {} {}({})",
            call.id, call.name, call.arguments
        ),
        AgentEvent::ToolResult { step, result } => {
            let status = if result.is_error() { "error" } else { "ok" };
            println!(
                "[{step}] result {} [{status}] {}",
                result.call_id,
                result.content()
            )
        }
        AgentEvent::TurnFinished {
            step,
            finish: Some(finish),
        } => println!("[{step}] finished: {finish:?}"),
        _ => {}
    }
}
