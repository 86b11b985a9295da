//! Agent Skills loaded from folders at run time: the published skills load, a bad skill is
//! reported with its file, line and rule while the others load, the strict form fails, and level 3
//! (`load_skill { name, file }`) is attacked the ways a hostile model or skill would: `..`,
//! absolute paths, symbolic links planted before and after loading, another skill's file, a huge
//! file, a pipe. Real files in temporary folders; the secret's text never comes back.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use agent_core::{AgentSkill, Registry, SkillContext, SkillError, ToolCall};
use agent_std_tools::{AgentSkills, AgentSkillsError, ShellConfig};
use serde_json::json;

/// The text no refusal may ever return.
const SECRET: &str = "TOP-SECRET-7f3a9c";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nFollow the steps.\n")
}

// ---------------------------------------------------------------- loading

fn published() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/agent-skills/anthropics")
}

#[test]
fn the_published_skills_load_without_a_violation_and_every_file_reads_back() {
    let loaded = AgentSkills::load(published()).unwrap();
    assert!(
        loaded.invalid.is_empty(),
        "{}",
        loaded
            .invalid
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(loaded.unreadable.is_empty(), "{:?}", loaded.unreadable);
    assert!(loaded.all_loaded());
    let mut folders: Vec<String> = std::fs::read_dir(published())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().join("SKILL.md").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let names: Vec<&str> = loaded.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, folders);
    assert!(names.len() >= 5, "{names:?}");
    for skill in &loaded.skills {
        assert!(!skill.description.trim().is_empty(), "{}", skill.name);
        assert!(!skill.instructions.trim().is_empty(), "{}", skill.name);
        let folder = skill.files.folder().expect("a skill on disk has a folder");
        assert!(folder.is_absolute() && folder.ends_with(&skill.name));
        assert!(!skill.files.list().is_empty(), "{}", skill.name);
        assert!(!skill.files.list().iter().any(|f| f == "SKILL.md"));
        // Every listed file reads back as it is on disk.
        for file in skill.files.list() {
            let bytes = skill.files.read(file).unwrap();
            assert_eq!(bytes, std::fs::read(folder.join(file)).unwrap(), "{file}");
        }
    }
    // And the strict form agrees.
    assert_eq!(
        AgentSkills::load_strict(published()).unwrap().len(),
        names.len()
    );
}

/// A folder with a good skill and a bad one (its name has an upper-case letter and an
/// underscore, and differs from its folder's).
fn good_and_bad() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("good/SKILL.md"),
        &skill_md("good", "Does good things."),
    );
    write(&dir.path().join("good/references/notes.md"), "notes\n");
    write(
        &dir.path().join("bad/SKILL.md"),
        "---\ndescription: Does bad things.\nname: Bad_Skill\n---\nBody.\n",
    );
    // Not skills: a folder without SKILL.md, a hidden folder, a file.
    write(&dir.path().join("not-a-skill/README.md"), "hello\n");
    write(
        &dir.path().join(".hidden/SKILL.md"),
        &skill_md("hidden", "Hidden."),
    );
    write(&dir.path().join("loose.md"), "loose\n");
    dir
}

#[test]
fn one_bad_skill_is_reported_with_file_line_and_rule_and_the_good_one_loads() {
    let dir = good_and_bad();
    let loaded = AgentSkills::load(dir.path()).unwrap();
    let names: Vec<&str> = loaded.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    assert_eq!(loaded.skills[0].files.list(), ["references/notes.md"]);
    assert_eq!(loaded.invalid.len(), 1);
    let bad = &loaded.invalid[0];
    assert_eq!(bad.file, dir.path().join("bad/SKILL.md"));
    let rules: Vec<(usize, &str)> = bad
        .violations
        .iter()
        .map(|v| (v.line, v.rule.id()))
        .collect();
    assert!(rules.contains(&(3, "name-characters")), "{rules:?}");
    assert!(rules.contains(&(3, "name-matches-folder")), "{rules:?}");
    let shown = bad.to_string();
    let file = dir.path().join("bad/SKILL.md");
    assert!(
        shown.contains(&format!("{}:3: ", file.display()))
            && shown.contains("(rule `name-characters`)"),
        "{shown}"
    );
    assert!(!loaded.all_loaded());
}

#[test]
fn the_strict_form_fails_on_the_bad_skill_naming_its_file_line_and_rule() {
    let dir = good_and_bad();
    let err = AgentSkills::load_strict(dir.path()).unwrap_err();
    assert!(matches!(err, AgentSkillsError::Invalid(_)), "{err:?}");
    let shown = err.to_string();
    assert!(
        shown.contains("bad/SKILL.md:3: ") && shown.contains("(rule `name-matches-folder`)"),
        "{shown}"
    );
    // Without the bad skill it loads.
    std::fs::remove_dir_all(dir.path().join("bad")).unwrap();
    let skills = AgentSkills::load_strict(dir.path()).unwrap();
    assert_eq!(skills.len(), 1);
}

#[test]
fn a_missing_directory_is_an_error_and_a_skill_folder_given_directly_loads_alone() {
    let dir = good_and_bad();
    let err = AgentSkills::load(dir.path().join("nowhere")).unwrap_err();
    assert!(
        matches!(err, AgentSkillsError::Dir { .. }) && err.to_string().contains("nowhere"),
        "{err}"
    );
    let err = AgentSkills::load(dir.path().join("loose.md")).unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");
    let loaded = AgentSkills::load(dir.path().join("good")).unwrap();
    assert_eq!(loaded.skills.len(), 1);
    assert_eq!(loaded.skills[0].name, "good");
    let loaded = AgentSkills::load(dir.path().join("bad")).unwrap();
    assert!(loaded.skills.is_empty() && loaded.invalid.len() == 1);
}

// ---------------------------------------------------------------- level 3 attacked

/// `root/secret.txt` (the secret, outside every skill), `root/skills/alpha` (the skill under
/// attack) and `root/skills/beta` (another skill, with a secret of its own).
struct Attack {
    root: tempfile::TempDir,
    alpha: AgentSkill,
    registry: Registry,
}

impl Attack {
    fn new() -> Attack {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(&r.join("secret.txt"), SECRET);
        write(&r.join("outside/notes.md"), SECRET);
        let alpha = r.join("skills/alpha");
        write(
            &alpha.join("SKILL.md"),
            &skill_md("alpha", "The skill under attack."),
        );
        write(&alpha.join("references/guide.md"), "# Guide\nstep one\n");
        write(&alpha.join("scripts/run.sh"), "echo hi\n");
        // One byte over the 1 MiB cap.
        write(&alpha.join("assets/huge.txt"), &"x".repeat(1024 * 1024 + 1));
        // Links planted before loading, leading out: relative, absolute, to a folder.
        symlink("../../../secret.txt", alpha.join("references/leak.md")).unwrap();
        symlink(r.join("secret.txt"), alpha.join("abs-leak.md")).unwrap();
        symlink(r.join("outside"), alpha.join("linked")).unwrap();
        let beta = r.join("skills/beta");
        write(&beta.join("SKILL.md"), &skill_md("beta", "Another skill."));
        write(&beta.join("references/private.md"), SECRET);

        let loaded = AgentSkills::load(r.join("skills")).unwrap();
        assert!(loaded.all_loaded(), "{:?}", loaded.invalid);
        let mut registry = Registry::new();
        registry.add_agent_skills(loaded.skills.clone()).unwrap();
        let alpha = loaded
            .skills
            .into_iter()
            .find(|s| s.name == "alpha")
            .unwrap();
        Attack {
            root,
            alpha,
            registry,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// `load_skill { name: alpha, file }` through the registry, as the model calls it: the
    /// result's text and whether it is an error.
    async fn load(&self, file: &str) -> (String, bool) {
        let ctx = SkillContext::new(self.path("skills"));
        let call = ToolCall::new("c1", "load_skill", json!({"name": "alpha", "file": file}));
        let results = self.registry.run_many(&[call], &ctx).await;
        (results[0].content().into_owned(), results[0].is_error())
    }

    /// Asserts that reading `file` is refused, directly and through `load_skill`, with a message
    /// containing `words`, and that the secret never comes back; returns the direct error.
    async fn refused(&self, file: &str, words: &str) -> SkillError {
        let err = self
            .alpha
            .files
            .read(file)
            .expect_err(&format!("`{file}` was read"));
        let shown = err.to_string();
        assert!(shown.contains(words), "`{file}`: {shown}");
        assert!(!shown.contains(SECRET), "`{file}`: {shown}");
        let (text, is_error) = self.load(file).await;
        assert!(is_error, "`{file}` through load_skill: {text}");
        assert!(text.contains(words), "`{file}` through load_skill: {text}");
        assert!(
            !text.contains(SECRET),
            "`{file}` through load_skill: {text}"
        );
        err
    }
}

#[tokio::test]
async fn the_listed_files_read_and_level_two_shows_the_folder_and_no_link() {
    let attack = Attack::new();
    let files = attack.alpha.files.list();
    assert_eq!(
        files,
        ["assets/huge.txt", "references/guide.md", "scripts/run.sh"]
    );
    let folder = attack.alpha.files.folder().unwrap();
    assert_eq!(folder, attack.path("skills/alpha").canonicalize().unwrap());
    let (text, is_error) = attack.load("references/guide.md").await;
    assert!(!is_error, "{text}");
    assert_eq!(text, "# Guide\nstep one\n");
    // `./` and doubled slashes name the same file.
    assert_eq!(
        attack.alpha.files.read("./references//guide.md").unwrap(),
        b"# Guide\nstep one\n"
    );
    let ctx = SkillContext::new(attack.path("skills"));
    let call = ToolCall::new("c1", "load_skill", json!({"name": "alpha"}));
    let level_two = attack.registry.run_many(&[call], &ctx).await[0]
        .content()
        .into_owned();
    assert!(
        level_two.contains(&format!("folder: {}", folder.display())),
        "{level_two}"
    );
    assert!(level_two.contains("references/guide.md"), "{level_two}");
    assert!(!level_two.contains("leak"), "{level_two}");
}

#[tokio::test]
async fn parent_paths_are_refused_for_safety_before_anything_is_opened() {
    let attack = Attack::new();
    for path in [
        "../../secret.txt",
        "../../../secret.txt",
        "references/../../../secret.txt",
        "references/../guide.md",
        "..",
        "../beta/references/private.md",
    ] {
        let err = attack.refused(path, "contains `..`").await;
        assert!(matches!(err, SkillError::Safety(_)), "{path}: {err:?}");
    }
}

#[tokio::test]
async fn absolute_paths_are_refused_even_inside_the_skills_own_folder() {
    let attack = Attack::new();
    let secret = attack.path("secret.txt");
    let own = attack.path("skills/alpha/references/guide.md");
    let other = attack.path("skills/beta/references/private.md");
    for path in [secret, own, other, PathBuf::from("/etc/passwd")] {
        let path = path.to_str().unwrap();
        let err = attack.refused(path, "is an absolute path").await;
        assert!(matches!(err, SkillError::Safety(_)), "{path}: {err:?}");
    }
}

#[tokio::test]
async fn a_symbolic_link_planted_before_loading_is_not_a_file_of_the_skill() {
    let attack = Attack::new();
    for path in [
        "references/leak.md",
        "abs-leak.md",
        "linked/notes.md",
        "linked",
    ] {
        attack
            .refused(path, "is not one of skill `alpha`'s files")
            .await;
    }
}

#[tokio::test]
async fn a_symbolic_link_swapped_in_after_loading_is_refused_by_the_capability() {
    let attack = Attack::new();
    // A listed file replaced by a link to the secret, relative and absolute.
    let guide = attack.path("skills/alpha/references/guide.md");
    std::fs::remove_file(&guide).unwrap();
    symlink("../../../secret.txt", &guide).unwrap();
    let err = attack
        .refused(
            "references/guide.md",
            "leads outside skill `alpha`'s folder",
        )
        .await;
    assert!(matches!(err, SkillError::Safety(_)), "{err:?}");
    std::fs::remove_file(&guide).unwrap();
    symlink(attack.path("secret.txt"), &guide).unwrap();
    attack
        .refused(
            "references/guide.md",
            "leads outside skill `alpha`'s folder",
        )
        .await;
    // A listed file's folder replaced by a link to a folder outside holding the same name.
    let scripts = attack.path("skills/alpha/scripts");
    std::fs::remove_dir_all(&scripts).unwrap();
    write(&attack.path("outside/run.sh"), SECRET);
    symlink(attack.path("outside"), &scripts).unwrap();
    attack
        .refused("scripts/run.sh", "leads outside skill `alpha`'s folder")
        .await;
}

#[tokio::test]
async fn another_skills_file_is_not_reachable_by_any_name() {
    let attack = Attack::new();
    for path in [
        "beta/references/private.md",
        "skills/beta/references/private.md",
        "references/private.md",
        "SKILL.md",
    ] {
        attack
            .refused(path, "is not one of skill `alpha`'s files")
            .await;
    }
    // Beta's own file reads as beta's.
    let ctx = SkillContext::new(attack.path("skills"));
    let call = ToolCall::new(
        "c1",
        "load_skill",
        json!({"name": "beta", "file": "references/private.md"}),
    );
    let result = &attack.registry.run_many(&[call], &ctx).await[0];
    assert!(!result.is_error() && result.content() == SECRET);
}

#[tokio::test]
async fn a_file_past_the_size_cap_is_refused_with_its_size() {
    let attack = Attack::new();
    attack
        .refused(
            "assets/huge.txt",
            "is 1048577 bytes, more than the 1048576 bytes",
        )
        .await;
    // A lower cap applies to every file.
    let skills = AgentSkills::new()
        .max_file_bytes(4)
        .load_dir_strict(attack.path("skills"))
        .unwrap();
    let alpha = skills.iter().find(|s| s.name == "alpha").unwrap();
    let err = alpha.files.read("scripts/run.sh").unwrap_err();
    assert!(
        err.to_string()
            .contains("is 8 bytes, more than the 4 bytes"),
        "{err}"
    );
    // And the default cap reads the same file.
    assert_eq!(
        attack.alpha.files.read("scripts/run.sh").unwrap(),
        b"echo hi\n"
    );
}

#[tokio::test]
async fn a_pipe_swapped_in_for_a_listed_file_is_refused_without_waiting() {
    let attack = Attack::new();
    let guide = attack.path("skills/alpha/references/guide.md");
    std::fs::remove_file(&guide).unwrap();
    let c_path = std::ffi::CString::new(guide.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    attack
        .refused("references/guide.md", "is not a regular file")
        .await;
}

#[tokio::test]
async fn a_nul_byte_is_refused_for_safety() {
    let attack = Attack::new();
    let err = attack
        .refused("references/guide.md\0../../secret.txt", "NUL byte")
        .await;
    assert!(matches!(err, SkillError::Safety(_)), "{err:?}");
}

// ---------------------------------------------------------------- the shell's sandbox

#[test]
fn the_shell_may_read_each_skill_folder_once_and_nothing_else_is_added() {
    let attack = Attack::new();
    let loaded = AgentSkills::load(attack.path("skills")).unwrap();
    let compiled_in = AgentSkill::new("inline", "No folder.", "Do it.");
    let all: Vec<&AgentSkill> = loaded
        .skills
        .iter()
        .chain([&compiled_in])
        .chain(loaded.skills.iter())
        .collect();
    let config = ShellConfig {
        read_paths: vec![PathBuf::from("/opt/tools")],
        ..ShellConfig::default()
    }
    .with_agent_skills(all);
    let skills = attack.path("skills").canonicalize().unwrap();
    assert_eq!(
        config.read_paths,
        [
            PathBuf::from("/opt/tools"),
            skills.join("alpha"),
            skills.join("beta")
        ]
    );
    assert!(config.write_paths.is_empty());
}
