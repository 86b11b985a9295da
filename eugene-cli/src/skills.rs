//! Agent Skills loaded at start: `<workspace>/.agents/skills/` when it exists, then each
//! `--skills DIR`, added to the registry (the model meets them through `load_skill`), and their
//! folders given to `run_shell`'s sandbox to read.

use std::path::{Path, PathBuf};

use agent_std_tools::{AgentSkills, AgentSkillsError, LoadedAgentSkills, ShellConfig};
use eugene::{AgentSkill, Permission, PermissionGate, Registry};

use crate::cli::Exit;
use crate::output::Style;

/// Where a workspace keeps its own skills.
pub const WORKSPACE_SKILLS: &str = ".agents/skills";

/// Loads the skills of `workspace` and of each `--skills` folder into `registry`, reporting on
/// stderr each skill that is not loaded (the rule it breaks with file and line, a folder that
/// cannot be read, a name already taken). A `--skills` folder that cannot be read at all is the
/// error returned (a configuration error); the workspace's own folder is optional.
///
/// Folders are loaded in that order and the first skill of a name wins, so skills compiled into
/// the program come first, then the workspace's, then each `--skills` in the order given. The
/// same folder given twice is loaded once.
pub async fn add(
    registry: &mut Registry,
    workspace: &Path,
    flags: &[PathBuf],
    style: Style,
) -> Result<(), String> {
    let mut dirs: Vec<(PathBuf, bool)> = Vec::new();
    let own = workspace.join(WORKSPACE_SKILLS);
    if own.is_dir() {
        dirs.push((own, false));
    }
    dirs.extend(flags.iter().map(|dir| (dir.clone(), true)));
    if dirs.is_empty() {
        return Ok(());
    }
    // Loading reads every SKILL.md and lists every folder: blocking work, off the async threads.
    let loaded = tokio::task::spawn_blocking(move || load_all(dirs))
        .await
        .map_err(|e| format!("loading the skills failed: {e}"))??;
    let mut adding: Vec<AgentSkill> = Vec::new();
    for (dir, loaded) in loaded {
        for bad in &loaded.invalid {
            for line in bad.to_string().lines() {
                eprintln!("{} skill not loaded: {line}", style.yellow("eugene:"));
            }
        }
        for bad in &loaded.unreadable {
            eprintln!("{} skill not loaded: {bad}", style.yellow("eugene:"));
        }
        for skill in loaded.skills {
            let taken = registry
                .agent_skills()
                .iter()
                .chain(&adding)
                .find(|s| s.name == skill.name)
                .map(|s| match s.files.folder() {
                    Some(folder) => folder.display().to_string(),
                    None => "the program".to_owned(),
                });
            match taken {
                Some(first) => eprintln!(
                    "{} skill not loaded: `{}` in {}: a skill of that name was loaded from {first}",
                    style.yellow("eugene:"),
                    skill.name,
                    dir.display()
                ),
                None => adding.push(skill),
            }
        }
    }
    registry
        .add_agent_skills(adding)
        .map_err(|e| format!("cannot add the skills: {e}"))?;
    Ok(())
}

/// Each folder's skills, in order, each folder once.
fn load_all(dirs: Vec<(PathBuf, bool)>) -> Result<Vec<(PathBuf, LoadedAgentSkills)>, String> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut all = Vec::new();
    for (dir, given) in dirs {
        let canonical = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical);
        match AgentSkills::load(&dir) {
            Ok(loaded) => all.push((dir, loaded)),
            Err(error @ AgentSkillsError::Dir { .. }) if given => {
                return Err(format!("{error}: give --skills a folder of skill folders"));
            }
            Err(error) => return Err(error.to_string()),
        }
    }
    Ok(all)
}

/// `run_shell`'s settings: the defaults, and the folders of the registry's skills to read, so that
/// a skill's scripts can run from where they are (when `run_shell` is allowed at all).
pub fn shell_config(registry: &Registry) -> ShellConfig {
    ShellConfig::default().with_agent_skills(registry.agent_skills())
}

/// The registry of a run nobody answers at a terminal (`eugene eval`, `eugene console`): the
/// skills linked in and the workspace's Agent Skills, behind a gate that lets a read-only call
/// run (every call with `--yes`) and answers any other with `otherwise` (refused in an eval,
/// asked in the console's page); with `run_shell`'s settings for the run's context.
pub async fn gated(
    workspace: &Path,
    style: Style,
    yes: bool,
    otherwise: impl Fn(&str) -> Permission + Send + Sync + 'static,
) -> Result<(Registry, ShellConfig), (Exit, String)> {
    let mut registry = Registry::discover().map_err(|e| (Exit::Internal, e.to_string()))?;
    add(&mut registry, workspace, &[], style)
        .await
        .map_err(|message| (Exit::Config, message))?;
    let shell = shell_config(&registry);
    registry.with_hook(PermissionGate::with(move |name, metadata| {
        if metadata.is_read_only || yes {
            Permission::Allow
        } else {
            otherwise(name)
        }
    }));
    Ok((registry, shell))
}
