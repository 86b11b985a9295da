//! The published skill-creator, loaded from its folder, read through the registry with the
//! default output budget: its instructions (a SKILL.md of 33 KB) and its largest file
//! (`eval-viewer/viewer.html`, 45 KB) come whole, in pieces that each fit the budget, following
//! the `offset` each piece ends with. The registry's truncation used to drop everything after
//! the first 16,000 characters, with no way to read the rest.

use std::path::{Path, PathBuf};

use agent_core::registry::DEFAULT_OUTPUT_BUDGET;
use agent_core::{Registry, SkillContext, ToolCall};
use agent_std_tools::AgentSkills;
use serde_json::{Value, json};

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/agent-skills/anthropics")
}

fn registry() -> Registry {
    let loaded = AgentSkills::load(folder()).unwrap();
    let mut registry = Registry::new();
    registry.add_agent_skills(loaded.skills).unwrap();
    registry
}

/// Every piece of `args`, from line 1 on, put together; and how many there were.
async fn read_whole(registry: &Registry, args: Value) -> (String, usize) {
    let mut whole = String::new();
    let mut offset = None;
    let mut pieces = 0;
    loop {
        let mut args = args.clone();
        if let Some(offset) = offset {
            args["offset"] = json!(offset);
        }
        let call = ToolCall::new("1", "load_skill", args);
        let result = registry.run_one(&call, &SkillContext::default()).await;
        let piece = result.content().into_owned();
        assert!(!result.is_error(), "{piece}");
        assert!(
            piece.chars().count() <= DEFAULT_OUTPUT_BUDGET,
            "{} characters",
            piece.chars().count()
        );
        assert!(!piece.contains("[output truncated"), "cut by the registry");
        pieces += 1;
        assert!(pieces < 100, "no end in sight");
        let Some(at) = piece.rfind("\n\n[lines ") else {
            whole.push_str(&piece);
            return (whole, pieces);
        };
        whole.push_str(&piece[..at]);
        let notice = &piece[at..];
        match notice.split("offset=").nth(1) {
            Some(rest) => offset = Some(rest.split(' ').next().unwrap().parse::<usize>().unwrap()),
            None => {
                assert!(notice.ends_with(": the end]"), "{notice}");
                return (whole, pieces);
            }
        }
    }
}

#[tokio::test]
async fn skill_creators_instructions_read_whole_in_pieces() {
    let file = std::fs::read_to_string(folder().join("skill-creator/SKILL.md")).unwrap();
    // The instructions: SKILL.md after its front matter.
    let end = file[3..].find("\n---").unwrap() + 3 + "\n---".len();
    let body = file[end..].trim_start_matches(['\r', '\n']);
    assert!(
        body.chars().count() > 2 * DEFAULT_OUTPUT_BUDGET,
        "{}",
        body.len()
    );

    let (whole, pieces) = read_whole(&registry(), json!({"name": "skill-creator"})).await;
    assert!(pieces >= 3, "{pieces} pieces");
    let header = whole
        .find("\n\n")
        .map(|at| &whole[..at + 2])
        .unwrap_or_default();
    assert!(
        header.starts_with("Skill `skill-creator` (folder: "),
        "{header}"
    );
    assert_eq!(&whole[header.len()..], body);
}

#[tokio::test]
async fn a_file_over_the_budget_reads_back_byte_for_byte_in_pieces() {
    let path = "eval-viewer/viewer.html";
    let file = std::fs::read_to_string(folder().join("skill-creator").join(path)).unwrap();
    assert!(file.chars().count() > 2 * DEFAULT_OUTPUT_BUDGET);
    let args = json!({"name": "skill-creator", "file": path});
    let (whole, pieces) = read_whole(&registry(), args).await;
    assert!(pieces >= 3, "{pieces} pieces");
    assert_eq!(whole, file);
}
