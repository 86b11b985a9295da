//! An Agent Skill loaded at run time, used through a whole agent run: the model's choices are
//! scripted (`MockProvider`), everything else is real — the skill folder on disk (copied from
//! `tests/fixtures/agent-skills-run/shout` to a temporary folder outside the workspace), the
//! registry with `load_skill`, `read_file` and `run_shell`, the permission rule, and the script
//! run by `sh` in `run_shell`'s Landlock sandbox.
//!
//! The model sees the skill in `load_skill`'s description, loads it, reads a reference, runs the
//! script and gets its real output; its attempts to read outside the skill's folder are refused
//! and the run goes on. With a rule that denies `run_shell` the script never runs: it would have
//! left a marker file in the workspace.

use std::path::{Path, PathBuf};

use agent_std_tools::{AgentSkills, ReadFileSkill, RunShellSkill, ShellConfig};
use eugene::{
    AgentRuntime, FinishReason, Message, MockProvider, MockReply, PermissionGate, Registry,
    RunOutcome, SkillContext, ToolCall,
};
use serde_json::json;

/// Text beside the skill's folder that no result may contain.
const SECRET: &str = "SECRET-BESIDE-THE-SKILL-41d2";

/// A workspace, and the skill copied into another temporary folder (`<skills>/shout`), with a
/// secret file beside it.
struct Setup {
    workspace: tempfile::TempDir,
    skills: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let workspace = tempfile::tempdir().unwrap();
        let skills = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent-skills-run");
        copy_dir(&fixture, skills.path());
        std::fs::write(skills.path().join("secret.txt"), SECRET).unwrap();
        assert!(!skills.path().starts_with(workspace.path()));
        Setup { workspace, skills }
    }

    /// The skill's folder as the loader reports it (canonical).
    fn folder(&self) -> PathBuf {
        self.skills.path().join("shout").canonicalize().unwrap()
    }

    fn marker(&self) -> PathBuf {
        self.workspace.path().join("shout.marker")
    }

    /// A runtime over the loaded skills, `read_file` and `run_shell`, with `rule` deciding which
    /// calls may run and the shell's sandbox configured by `shell`.
    fn runtime(
        &self,
        provider: MockProvider,
        allow_shell: bool,
        shell: impl FnOnce(ShellConfig, &Registry) -> ShellConfig,
    ) -> AgentRuntime {
        let loaded = AgentSkills::load(self.skills.path()).unwrap();
        assert!(loaded.all_loaded(), "{:?}", loaded.invalid);
        let mut registry = Registry::new();
        registry.add(ReadFileSkill).add(RunShellSkill);
        registry.add_agent_skills(loaded.skills).unwrap();
        registry.with_hook(PermissionGate::new(move |name, metadata| {
            metadata.is_read_only || (allow_shell && name == "run_shell")
        }));
        let config = shell(ShellConfig::default(), &registry);
        let context = SkillContext::new(self.workspace.path()).with_extension(config);
        AgentRuntime::new(provider, registry)
            .context(context)
            .max_steps(10)
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

/// The result of call `id` in the run's transcript.
fn result<'a>(outcome: &'a RunOutcome, id: &str) -> &'a Message {
    outcome
        .transcript
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some(id))
        .unwrap_or_else(|| panic!("no result for {id}: {:#?}", outcome.transcript))
}

/// The command that runs the skill's script on `word`.
fn shout(folder: &Path, word: &str) -> String {
    format!("sh {}/scripts/shout.sh {word}", folder.display())
}

/// The Landlock ABI the kernel offers; fails the test, saying what is missing, without one.
fn require_landlock() {
    // SAFETY: asks the kernel for its Landlock ABI version; no memory is passed.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    assert!(
        abi >= 1,
        "this test needs the kernel's Landlock LSM (got {abi}): Linux 5.13+ with `landlock` in \
         the `lsm=` boot parameter"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_finds_loads_reads_and_runs_a_skill_and_cannot_read_beside_it() {
    let setup = Setup::new();
    let folder = setup.folder();
    let provider = MockProvider::new([
        MockReply::tool_calls([call("l1", "load_skill", json!({"name": "shout"}))]),
        MockReply::tool_calls([call(
            "l2",
            "load_skill",
            json!({"name": "shout", "file": "references/style.md"}),
        )]),
        MockReply::tool_calls([call(
            "s1",
            "run_shell",
            json!({"command": shout(&folder, "hello")}),
        )]),
        MockReply::tool_calls([
            call(
                "x1",
                "load_skill",
                json!({"name": "shout", "file": "../secret.txt"}),
            ),
            call(
                "x2",
                "read_file",
                json!({"path": folder.join("references/style.md")}),
            ),
            call(
                "x3",
                "load_skill",
                json!({"name": "shout", "file": setup.skills.path().join("secret.txt")}),
            ),
        ]),
        MockReply::text("*** HELLO! (5 letters) ***"),
    ]);
    let runtime = setup.runtime(provider.clone(), true, |config, registry| {
        config.with_agent_skills(registry.agent_skills())
    });
    let outcome = runtime.run("Shout hello, please.").await.unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::NoMoreToolCalls,
        "{outcome:#?}"
    );
    assert_eq!(
        outcome.final_text.as_deref(),
        Some("*** HELLO! (5 letters) ***")
    );

    // (1) Level 1: the model saw the skill, by name and description, in load_skill's description.
    let requests = provider.requests();
    assert_eq!(requests.len(), 5);
    let load_skill = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "load_skill")
        .expect("load_skill is offered");
    assert!(
        load_skill
            .description
            .contains("- shout: Shout a word in capitals, in the house style."),
        "{}",
        load_skill.description
    );
    assert!(requests[0].tool_names().contains(&"run_shell"));

    // (2) Level 2: the instructions, the folder (outside the workspace) and the files.
    let instructions = result(&outcome, "l1");
    assert!(!instructions.is_error, "{}", instructions.content);
    for expected in [
        format!("folder: {}", folder.display()),
        "references/style.md, scripts/shout.sh".to_owned(),
        "Requires: needs sh and tr".to_owned(),
        "# Shouting".to_owned(),
    ] {
        assert!(
            instructions.content.contains(&expected),
            "{expected:?} missing from {}",
            instructions.content
        );
    }
    assert!(
        !instructions.content.contains("name: shout"),
        "no front matter"
    );

    // (3) Level 3: a reference, as it is on disk.
    let reference = result(&outcome, "l2");
    assert!(!reference.is_error);
    assert_eq!(
        reference.content,
        std::fs::read_to_string(folder.join("references/style.md")).unwrap()
    );

    // (4) The script ran in the confined shell, read its own folder, and the model got its output.
    let ran = result(&outcome, "s1");
    assert!(!ran.is_error, "{}", ran.content);
    assert!(
        ran.content.contains("*** HELLO! (5 letters) ***"),
        "{}",
        ran.content
    );
    assert_eq!(std::fs::read_to_string(setup.marker()).unwrap(), "hello\n");
    // The model read that result on its next turn.
    let next = requests[3].messages.last().unwrap();
    assert!(next.content.contains("HELLO!"), "{next:?}");

    // (5) Outside the skill's folder: refused, the run went on, and the secret never came back.
    for (id, words) in [
        ("x1", "contains `..`"),
        ("x2", "is an absolute path"),
        ("x3", "is an absolute path"),
    ] {
        let refused = result(&outcome, id);
        assert!(refused.is_error, "{id}: {}", refused.content);
        assert!(refused.content.contains(words), "{id}: {}", refused.content);
    }
    let everything = serde_json::to_string(&outcome.transcript).unwrap();
    assert!(!everything.contains(SECRET));
    assert_eq!(requests[4].messages.len(), outcome.transcript.len() - 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_that_denies_run_shell_keeps_the_script_from_running() {
    let setup = Setup::new();
    let folder = setup.folder();
    let provider = MockProvider::new([
        MockReply::tool_calls([call("l1", "load_skill", json!({"name": "shout"}))]),
        MockReply::tool_calls([call(
            "s1",
            "run_shell",
            json!({"command": shout(&folder, "hello")}),
        )]),
        MockReply::text("I may not run the script."),
    ]);
    let runtime = setup.runtime(provider.clone(), false, |config, registry| {
        config.with_agent_skills(registry.agent_skills())
    });
    let outcome = runtime.run("Shout hello, please.").await.unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::NoMoreToolCalls,
        "{outcome:#?}"
    );
    // Loading the skill is read-only, so the rule lets it through.
    assert!(!result(&outcome, "l1").is_error);
    let denied = result(&outcome, "s1");
    assert!(denied.is_error, "{}", denied.content);
    assert!(
        denied.content.contains("denied") && denied.content.contains("run_shell"),
        "{}",
        denied.content
    );
    assert!(!denied.content.contains("HELLO"), "{}", denied.content);
    assert!(
        !setup.marker().exists(),
        "the script ran: it left its marker"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_skill_folders_in_read_paths_the_confined_shell_cannot_read_the_script() {
    require_landlock();
    let setup = Setup::new();
    let folder = setup.folder();
    let provider = MockProvider::new([
        MockReply::tool_calls([call(
            "s1",
            "run_shell",
            json!({"command": shout(&folder, "hello")}),
        )]),
        MockReply::text("It failed."),
    ]);
    // The default configuration: the sandbox reads the system's folders and the workspace only.
    let runtime = setup.runtime(provider, true, |config, _| config);
    let outcome = runtime.run("Shout hello, please.").await.unwrap();
    let ran = &result(&outcome, "s1").content;
    assert!(
        ran.contains("Permission denied") && !ran.contains("HELLO"),
        "{ran}"
    );
    assert!(!setup.marker().exists(), "{ran}");
}
