//! Agent Skills in a registry: level 1 in `load_skill`'s description, level 2 and 3 on call, and
//! the errors a model can act on.

use std::path::Path;
use std::sync::Arc;

use agent_core::{AgentSkill, AgentSkillFiles, Registry, SkillContext, SkillError, ToolCall};
use serde_json::json;

/// Files kept in memory, for skills made by hand.
struct Memory(Vec<(String, Vec<u8>)>, Vec<String>);

impl Memory {
    fn new(files: &[(&str, &[u8])]) -> Arc<Memory> {
        let files: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect();
        let list = files.iter().map(|(p, _)| p.clone()).collect();
        Arc::new(Memory(files, list))
    }
}

impl AgentSkillFiles for Memory {
    fn folder(&self) -> Option<&Path> {
        Some(Path::new("/skills/release-notes"))
    }
    fn list(&self) -> &[String] {
        &self.1
    }
    fn read(&self, path: &str) -> Result<Vec<u8>, SkillError> {
        self.0
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, b)| b.clone())
            .ok_or_else(|| SkillError::bad_args("file", format!("`{path}` is not a file of it")))
    }
}

fn registry() -> Registry {
    let notes = AgentSkill::new(
        "release-notes",
        "Write release notes\n  from the commits since the last tag.",
        "\n# Release notes\n\nRead `references/style.md` first.\n",
    )
    .with_files(Memory::new(&[
        ("references/style.md", b"Use the past tense."),
        ("assets/logo.png", &[0x89, b'P', b'N', b'G', 0xff, 0xfe]),
    ]));
    let review = AgentSkill::new("code-review", "Review a diff for bugs.", "Look for bugs.");
    let mut registry = Registry::new();
    registry.add_agent_skills([notes, review]).unwrap();
    registry
}

async fn call(registry: &Registry, args: serde_json::Value) -> (bool, String) {
    let result = registry
        .run_one(
            &ToolCall::new("1", "load_skill", args),
            &SkillContext::default(),
        )
        .await;
    (result.is_error(), result.content().to_string())
}

#[test]
fn level_one_lists_every_skill_on_one_line_each_in_the_tools_description() {
    let registry = registry();
    let definitions = registry.definitions();
    assert_eq!(
        definitions.len(),
        1,
        "one tool, whatever the number of skills"
    );
    let description = &definitions[0].description;
    assert!(
        description.ends_with(
            "Skills:\n- code-review: Review a diff for bugs.\n- release-notes: Write release notes from the commits since the last tag."
        ),
        "{description}"
    );
    let names: Vec<&str> = registry
        .agent_skills()
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["code-review", "release-notes"]);
}

#[tokio::test]
async fn level_two_gives_the_folder_the_files_and_the_instructions() {
    let (error, text) = call(&registry(), json!({"name": "release-notes"})).await;
    assert!(!error, "{text}");
    assert!(
        text.starts_with("Skill `release-notes` (folder: /skills/release-notes;"),
        "{text}"
    );
    assert!(
        text.contains("references/style.md, assets/logo.png"),
        "{text}"
    );
    assert!(
        text.ends_with("# Release notes\n\nRead `references/style.md` first.\n"),
        "{text}"
    );
}

#[tokio::test]
async fn level_three_reads_a_text_file_and_refuses_a_binary_or_unknown_one() {
    let registry = registry();
    let (error, text) = call(
        &registry,
        json!({"name": "release-notes", "file": "references/style.md"}),
    )
    .await;
    assert!(!error, "{text}");
    assert_eq!(text, "Use the past tense.");

    let (error, text) = call(
        &registry,
        json!({"name": "release-notes", "file": "assets/logo.png"}),
    )
    .await;
    assert!(error);
    assert!(text.contains("is not text (6 bytes)"), "{text}");

    let (error, text) = call(
        &registry,
        json!({"name": "release-notes", "file": "../../etc/passwd"}),
    )
    .await;
    assert!(error);
    assert!(
        text.contains("`../../etc/passwd` is not a file of it"),
        "{text}"
    );
}

#[tokio::test]
async fn an_unknown_skill_is_answered_with_the_names_there_are() {
    let (error, text) = call(&registry(), json!({"name": "release"})).await;
    assert!(error);
    assert!(
        text.contains("no skill is called `release`; the skills are: code-review, release-notes"),
        "{text}"
    );
}

#[test]
fn a_second_skill_with_a_taken_name_is_refused_and_nothing_changes() {
    let mut registry = registry();
    let error = registry
        .add_agent_skills([
            AgentSkill::new("changelog", "Keep a changelog.", "…"),
            AgentSkill::new("code-review", "Another.", "…"),
        ])
        .unwrap_err();
    assert!(error.to_string().contains("code-review"), "{error}");
    assert_eq!(registry.agent_skills().len(), 2, "nothing was added");
    assert!(!registry.definitions()[0].description.contains("changelog"));
}

#[test]
fn skills_added_later_are_listed_too() {
    let mut registry = registry();
    registry
        .add_agent_skills([AgentSkill::new("changelog", "Keep a changelog.", "…")])
        .unwrap();
    assert_eq!(registry.len(), 1, "still one load_skill");
    assert!(
        registry.definitions()[0]
            .description
            .contains("\n- changelog: Keep a changelog.\n")
    );
}

#[test]
fn an_empty_registry_offers_no_load_skill() {
    let mut registry = Registry::new();
    registry.add_agent_skills([]).unwrap();
    assert!(registry.is_empty());
}
