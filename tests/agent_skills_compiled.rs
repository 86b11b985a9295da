//! `agent_skills!` end to end: the public skills of `fixtures/agent-skills/anthropics` compiled
//! into this test binary, found by `Registry::discover()`, served by `load_skill` exactly as they
//! are on disk, and tracked by cargo (every embedded file is in this binary's dep-info, so editing
//! one rebuilds it).

#![cfg(feature = "agent-skills")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use eugene::{AgentSkill, Registry, SkillContext, ToolCall, agent_skills};
use serde_json::json;

// Relative to this file, as `include_str!` resolves paths.
agent_skills!("../fixtures/agent-skills/anthropics");

/// The folder the call names.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agent-skills/anthropics")
}

/// The skill folders on disk (every folder of the fixtures with a `SKILL.md`), by name.
fn skills_on_disk() -> Vec<(String, PathBuf)> {
    let mut skills: Vec<(String, PathBuf)> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("SKILL.md").is_file())
        .map(|path| (path.file_name().unwrap().to_str().unwrap().to_owned(), path))
        .collect();
    skills.sort();
    assert!(
        skills.len() >= 6,
        "the fixtures hold {} skills",
        skills.len()
    );
    skills
}

/// Every regular file under `folder` but its `SKILL.md`, `/`-separated and sorted (symbolic links
/// are not embedded, so not listed).
fn files_on_disk(folder: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = format!("{prefix}{}", entry.file_name().to_str().unwrap());
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                walk(&entry.path(), &format!("{name}/"), out);
            } else if kind.is_file() && name != "SKILL.md" {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    walk(folder, "", &mut out);
    out.sort();
    out
}

/// The Markdown body of a `SKILL.md`: what follows the line that closes its front matter.
fn body(text: &str) -> &str {
    let after_open = text.strip_prefix("---").unwrap();
    let close = after_open.find("\n---").unwrap() + "\n---".len();
    let rest = &after_open[close..];
    &rest[rest.find('\n').map_or(rest.len(), |i| i + 1)..]
}

/// The discovered registry, with room for every fixture file in one result.
fn registry() -> Registry {
    let mut registry = Registry::discover().unwrap();
    registry.with_output_budget(1_000_000);
    registry
}

/// `load_skill` with these arguments: its text, or the error it answered.
async fn load_skill(registry: &Registry, arguments: serde_json::Value) -> Result<String, String> {
    let call = ToolCall::new("1", "load_skill", arguments);
    let result = registry.run_one(&call, &SkillContext::new(".")).await;
    let text = result.content().into_owned();
    if result.is_error() {
        Err(text)
    } else {
        Ok(text)
    }
}

/// `discover()` offers every skill of the folder through `load_skill`, whose description lists
/// each by name and description (level 1).
#[test]
fn discover_offers_every_skill_through_load_skill() {
    let registry = registry();
    let names: Vec<String> = registry
        .agent_skills()
        .iter()
        .map(|s| s.name.clone())
        .collect();
    let on_disk: Vec<String> = skills_on_disk().into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, on_disk);

    let load_skill = registry
        .definitions()
        .into_iter()
        .find(|d| d.name == "load_skill")
        .expect("load_skill is offered");
    for skill in registry.agent_skills() {
        let one_line = skill.description.split_whitespace().collect::<Vec<_>>();
        let entry = format!("\n- {}: {}", skill.name, one_line.join(" "));
        assert!(
            load_skill.description.contains(&entry),
            "`{}` is not listed: {}",
            skill.name,
            load_skill.description
        );
    }
}

/// `load_skill { name }` answers each skill's instructions (the body of its `SKILL.md`, as on
/// disk) and lists its files (level 2).
#[tokio::test]
async fn load_skill_returns_the_instructions_and_the_file_list() {
    let registry = registry();
    for (name, folder) in skills_on_disk() {
        let text = std::fs::read_to_string(folder.join("SKILL.md")).unwrap();
        let answer = load_skill(&registry, json!({"name": name})).await.unwrap();
        let instructions = body(&text).trim_start_matches(['\r', '\n']);
        assert!(
            answer.ends_with(instructions) && !instructions.is_empty(),
            "{name}: the answer does not end with the body of its SKILL.md:\n{answer}"
        );
        let files = files_on_disk(&folder);
        if !files.is_empty() {
            assert!(
                answer.contains(&files.join(", ")),
                "{name}: the answer does not list {files:?}:\n{answer}"
            );
        }
    }
}

/// Every file of every skill folder is compiled in, byte for byte; `load_skill { name, file }`
/// answers each text file exactly as it is on disk (level 3), among them the `scripts/` and
/// `reference/` or `references/` files.
#[tokio::test]
async fn every_file_is_embedded_byte_for_byte() {
    let registry = registry();
    let embedded = AgentSkill::embedded();
    let mut scripts_and_references = 0;
    for (name, folder) in skills_on_disk() {
        let skill = embedded.iter().find(|s| s.name == name).unwrap();
        let files = files_on_disk(&folder);
        assert_eq!(skill.files.list(), files, "{name}: the embedded files");
        assert!(skill.files.folder().is_none(), "{name}: compiled in");
        for path in &files {
            let bytes = std::fs::read(folder.join(path)).unwrap();
            assert_eq!(skill.files.read(path).unwrap(), bytes, "{name}/{path}");
            let answer = load_skill(&registry, json!({"name": name, "file": path})).await;
            match String::from_utf8(bytes) {
                Ok(text) => {
                    assert_eq!(answer.as_deref(), Ok(text.as_str()), "{name}/{path}");
                    if ["scripts/", "reference/", "references/"]
                        .iter()
                        .any(|dir| path.starts_with(dir))
                    {
                        scripts_and_references += 1;
                    }
                }
                Err(_) => assert!(
                    answer.as_ref().is_err_and(|e| e.contains("is not text")),
                    "{name}/{path}: {answer:?}"
                ),
            }
        }
    }
    assert!(scripts_and_references >= 10, "{scripts_and_references}");

    let mcp_builder = load_skill(
        &registry,
        json!({"name": "mcp-builder", "file": "reference/mcp_best_practices.md"}),
    )
    .await
    .unwrap();
    let on_disk =
        std::fs::read_to_string(fixtures().join("mcp-builder/reference/mcp_best_practices.md"))
            .unwrap();
    assert_eq!(mcp_builder, on_disk);
}

/// The front matter checked at compile time is carried as it was read: each skill's description
/// is the one in its `SKILL.md`, and the folder is named as the call named it.
#[test]
fn the_front_matter_is_carried() {
    let linked: Vec<&eugene::EmbeddedAgentSkill> =
        eugene::__private::inventory::iter::<eugene::EmbeddedAgentSkill>().collect();
    for (name, folder) in skills_on_disk() {
        let skill = linked.iter().find(|s| s.name == name).unwrap();
        let text = std::fs::read_to_string(folder.join("SKILL.md")).unwrap();
        assert_eq!(skill.skill_md, text, "{name}: SKILL.md as on disk");
        assert_eq!(&skill.skill_md[skill.body_offset..], body(&text), "{name}");
        assert!(
            text.contains(skill.description.lines().next().unwrap()),
            "{name}: {}",
            skill.description
        );
        assert_eq!(
            skill.source,
            format!("../fixtures/agent-skills/anthropics/{name}")
        );
        let front_matter = &text[..text.len() - body(&text).len()];
        let license = front_matter
            .lines()
            .find_map(|line| line.strip_prefix("license: "));
        assert_eq!(skill.license, license, "{name}");
    }
}

/// Cargo tracks every embedded file: this test binary's dep-info (the `.d` file rustc wrote
/// beside it, which cargo reads to decide what to rebuild) lists every `SKILL.md` and every other
/// file of every skill, so editing any of them rebuilds the binary and checks the skills again.
#[test]
fn cargo_tracks_every_embedded_file() {
    let exe = std::env::current_exe().unwrap();
    let dep_info = exe.with_extension("d");
    let text = std::fs::read_to_string(&dep_info).unwrap_or_else(|e| {
        panic!(
            "no dep-info beside the test binary at {}: {e}",
            dep_info.display()
        )
    });
    // Make-style rules, `target: dep dep ...`, spaces in paths escaped; relative paths start at
    // the workspace's root, where cargo runs rustc.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed: BTreeSet<PathBuf> = text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split_once(": ").map(|(_, deps)| deps))
        .flat_map(|deps| {
            deps.replace("\\ ", "\u{0}")
                .split(' ')
                .map(|dep| dep.replace('\u{0}', " "))
                .collect::<Vec<_>>()
        })
        .filter(|dep| !dep.is_empty())
        .filter_map(|dep| root.join(dep).canonicalize().ok())
        .collect();
    let mut expected = 0;
    for (name, folder) in skills_on_disk() {
        let mut paths = vec!["SKILL.md".to_owned()];
        paths.extend(files_on_disk(&folder));
        for path in paths {
            let file = folder.join(&path).canonicalize().unwrap();
            assert!(
                listed.contains(&file),
                "{name}/{path} is not in {}: cargo would not rebuild when it changes",
                dep_info.display()
            );
            expected += 1;
        }
    }
    assert!(expected > 50, "{expected} files checked");
    // Not vacuous: the folder's own LICENSE, beside the skill folders and in no skill, is not
    // embedded, so not listed.
    let beside = fixtures().join("LICENSE").canonicalize().unwrap();
    assert!(!listed.contains(&beside), "{} is listed", beside.display());
}
