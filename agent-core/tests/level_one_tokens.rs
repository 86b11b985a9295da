//! Level 1 of Agent Skills (every skill's name and description, always in the model's context):
//! where it goes, decided by counting tokens. Three ways of offering 50 skills, each counted with
//! OpenAI's `o200k_base` tokenizer over what is sent (tool definitions as Chat Completions JSON,
//! plus any system prompt text):
//!
//! - **in the tool's description** (what eugene does): one `load_skill` tool whose description
//!   lists the skills;
//! - **in the system prompt**: the same list in the instructions, and a `load_skill` tool with a
//!   short description (the tool is needed anyway, for levels 2 and 3);
//! - **one tool per skill**: each skill its own tool, as some frameworks offer them.
//!
//! The 50 descriptions are the real ones of `fixtures/agent-skills/anthropics` (8 skills), cycled,
//! with numbered names. `cargo test -p agent-core --test level_one_tokens -- --nocapture` prints
//! the counts recorded in docs/PERFORMANCE.md §8.

use agent_core::{AgentSkill, Registry};
use serde_json::{Value, json};

/// The real skills' names and descriptions, from their front matter.
fn real_skills() -> Vec<(String, String)> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/agent-skills/anthropics"
    );
    let mut skills = Vec::new();
    let mut folders: Vec<_> = std::fs::read_dir(dir)
        .expect("the fixture skills are in the repository")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("SKILL.md").is_file())
        .collect();
    folders.sort();
    for folder in folders {
        let text = std::fs::read_to_string(folder.join("SKILL.md")).unwrap();
        let front = text.split("---").nth(1).expect("front matter");
        let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).unwrap();
        skills.push((
            yaml["name"].as_str().unwrap().to_owned(),
            yaml["description"].as_str().unwrap().to_owned(),
        ));
    }
    assert!(skills.len() >= 6, "found {} fixture skills", skills.len());
    skills
}

/// 50 skills: the real descriptions, cycled, with numbered names.
fn fifty() -> Vec<AgentSkill> {
    let real = real_skills();
    (0..50)
        .map(|i| {
            let (name, description) = &real[i % real.len()];
            AgentSkill::new(format!("{name}-{i}"), description.clone(), "…")
        })
        .collect()
}

/// A tool as the Chat Completions API receives it.
fn tool(name: &str, description: &str, parameters: &Value) -> Value {
    json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
}

/// Tokens of `text` (the tokenizer is built once: that takes most of the test's time).
fn tokens(text: &str) -> usize {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().unwrap())
        .encode_with_special_tokens(text)
        .len()
}

#[test]
fn one_listing_tool_costs_about_what_the_prompt_does_and_far_less_than_a_tool_per_skill() {
    let skills = fifty();
    let mut registry = Registry::new();
    registry.add_agent_skills(skills.clone()).unwrap();
    let definition = &registry.definitions()[0];
    let schema = &definition.input_schema;

    // eugene: one tool, the list in its description.
    let in_description =
        tokens(&tool(&definition.name, &definition.description, schema).to_string());

    // The list in the system prompt, and the tool with its description's first paragraph only.
    let intro = definition.description.split("\n\nSkills:").next().unwrap();
    let list = &definition.description[intro.len()..];
    let in_prompt = tokens(list) + tokens(&tool(&definition.name, intro, schema).to_string());

    // One tool per skill, taking the optional `file`.
    let per_skill_schema = json!({
        "type": "object",
        "properties": {"file": {"type": "string", "description": "One of the skill's files to read instead of its instructions."}},
        "additionalProperties": false
    });
    let per_skill: usize = skills
        .iter()
        .map(|s| tokens(&tool(&s.name, &s.description, &per_skill_schema).to_string()))
        .sum();

    println!("level 1 for {} skills (o200k_base tokens):", skills.len());
    println!("  in load_skill's description: {in_description}");
    println!("  in the system prompt:        {in_prompt}");
    println!("  one tool per skill:          {per_skill}");
    println!(
        "  per skill, in the description: {:.1}",
        in_description as f64 / skills.len() as f64
    );

    assert!(
        in_description < per_skill,
        "one listing tool ({in_description}) must cost less than a tool per skill ({per_skill})"
    );
    // The system prompt saves only the JSON escaping of the list (newlines as `\n`): within 5 %.
    assert!(
        (in_description as f64) < in_prompt as f64 * 1.05,
        "the list in the description ({in_description}) should cost about what it costs in the prompt ({in_prompt})"
    );
}
