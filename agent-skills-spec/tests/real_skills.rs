//! Real public skills (fixtures/agent-skills/anthropics, see PROVENANCE.md there) all load
//! without a violation, and their files can be listed.

use agent_skills_spec::{files, find};
use std::path::Path;

#[test]
fn every_copied_anthropic_skill_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/agent-skills/anthropics");
    let (found, invalid) = find(&dir).unwrap();
    assert!(
        invalid.is_empty(),
        "{}",
        invalid
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(found.len() >= 6, "only {} skills found", found.len());
    let provenance = std::fs::read_to_string(dir.join("PROVENANCE.md")).unwrap();
    for skill in &found {
        let folder = skill.folder.file_name().unwrap().to_str().unwrap();
        assert_eq!(skill.manifest.name, folder);
        assert!(
            !skill.body().trim().is_empty(),
            "{folder} has no instructions"
        );
        assert!(
            provenance.contains(&format!("`{folder}`")),
            "{folder} is not in PROVENANCE.md"
        );
        let listed = files(&skill.folder).unwrap();
        assert!(
            listed.contains(&"LICENSE.txt".to_string()),
            "{folder}: {listed:?}"
        );
    }
    // every folder there is a skill: none was skipped for lack of a SKILL.md
    let folders = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_type().unwrap().is_dir())
        .count();
    assert_eq!(folders, found.len());
}
