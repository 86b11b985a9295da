//! The README's "Getting started" as a newcomer meets it: a crate of its own (its own workspace,
//! so nothing of this one's features or lockfile choices can make up for a missing line), with
//! exactly the README's `[dependencies]` block and `src/main.rs`, built and run by cargo. And no
//! public doc example reaches into `__private`.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The line of the README's block that names eugene, replaced by this checkout's path.
const EUGENE_LINE: &str = r#"eugene = { path = "../eugene" }"#;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The first fenced block of `language` after the heading `## Getting started`.
fn block(readme: &str, language: &str) -> String {
    let section = readme
        .split_once("\n## Getting started\n")
        .expect("the README has a Getting started section")
        .1;
    let section = section.split("\n## ").next().unwrap();
    let fence = format!("```{language}\n");
    let start = section
        .find(&fence)
        .unwrap_or_else(|| panic!("no {language} block in Getting started"))
        + fence.len();
    let end = section[start..].find("```").unwrap() + start;
    section[start..end].to_owned()
}

#[test]
fn the_readmes_getting_started_builds_and_runs_as_a_crate_of_its_own() {
    let readme = readme();
    let dependencies = block(&readme, "toml");
    assert!(
        dependencies.lines().any(|line| line == EUGENE_LINE),
        "the block's eugene line changed; update EUGENE_LINE:\n{dependencies}"
    );
    let repository = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dependencies = dependencies.replace(
        EUGENE_LINE,
        &format!(
            "eugene = {{ path = {:?} }}",
            repository.display().to_string()
        ),
    );
    let main = block(&readme, "rust");

    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("getting-started");
    let krate = root.join("ledger");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"ledger\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             # Not a member of the workspace that holds the target directory.\n[workspace]\n\n\
             {dependencies}"
        ),
    )
    .unwrap();
    std::fs::write(krate.join("src/main.rs"), main).unwrap();
    // The versions this repository was tested with, as a starting point; cargo adds and drops
    // what this crate's own graph needs.
    std::fs::copy(repository.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(&krate)
        .args(["run", "--quiet"])
        // A target directory of its own: the one of this test run is locked by the cargo that
        // runs it. Without debug info, as CI builds, to keep it small.
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("RUSTFLAGS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // Building the stack from nothing on two cores takes minutes; a hang fails after 25.
    let done = support::Running::start(&mut command).finish_within(Duration::from_secs(1500));
    assert!(
        !done.stderr.contains("warning"),
        "a newcomer's first build shows no warnings:\n{}",
        done.stderr
    );
    assert!(
        done.status.success(),
        "the Getting started crate failed ({}):\n{}",
        done.status,
        done.stderr
    );
    assert_eq!(done.stdout, "savings: 1250.00 euros\n", "{}", done.stderr);
}

/// Rust code in doc comments, the README and the guide never names `__private` (the paths generated code
/// uses): an example shows what users should write.
#[test]
fn no_doc_example_writes_private_paths() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    let mut check = |name: String, lines: Vec<String>| {
        let mut in_code = false;
        for (number, line) in lines.iter().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            } else if in_code && line.contains("__private") {
                offenders.push(format!("{name}:{}: {line}", number + 1));
            }
        }
    };
    check(
        "README.md".into(),
        readme().lines().map(str::to_owned).collect(),
    );
    for entry in std::fs::read_dir(repository.join("docs/guide")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        check(
            path.display().to_string(),
            text.lines().map(str::to_owned).collect(),
        );
    }
    let mut files = Vec::new();
    let mut dirs = vec![repository.join("src")];
    for entry in std::fs::read_dir(repository).unwrap() {
        let path = entry.unwrap().path();
        if path.join("Cargo.toml").is_file() && path.join("src").is_dir() {
            dirs.push(path.join("src"));
        }
    }
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
                files.push(path);
            }
        }
    }
    assert!(
        files.len() > 50,
        "the walk found only {} files",
        files.len()
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let docs: Vec<String> = text
            .lines()
            .map(|line| {
                let trimmed = line.trim_start();
                trimmed
                    .strip_prefix("///")
                    .or_else(|| trimmed.strip_prefix("//!"))
                    .map(str::to_owned)
                    .unwrap_or_default()
            })
            .collect();
        let shown = file.strip_prefix(repository).unwrap().display().to_string();
        if shown.ends_with(".md") {
            check(shown, text.lines().map(str::to_owned).collect());
        } else {
            check(shown, docs);
        }
    }
    assert!(
        offenders.is_empty(),
        "doc examples that name `__private`:\n{}",
        offenders.join("\n")
    );
}

/// The README stays an entrance: what eugene is, the two commands, getting started and a map; at
/// most 20 KB. The manual is the guide, and every chapter of it (`docs/guide/`) is a page of the
/// crate's docs, so its examples run as doctests, and is on the README's map.
#[test]
fn the_readme_fits_on_a_screen_and_every_guide_chapter_is_in_the_docs_and_on_the_map() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = readme();
    assert!(
        readme.len() <= 20 * 1024,
        "the README is {} bytes, over 20 KB: move the detail into a chapter of docs/guide/",
        readme.len()
    );
    let guide = std::fs::read_to_string(repository.join("src/guide.rs")).unwrap();
    let mut chapters = 0;
    for entry in std::fs::read_dir(repository.join("docs/guide")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".md") {
            continue;
        }
        chapters += 1;
        assert!(
            guide.contains(&format!("include_str!(\"../docs/guide/{name}\")")),
            "docs/guide/{name} is not a page of the guide (src/guide.rs): its examples would not run"
        );
        assert!(
            readme.contains(&format!("(docs/guide/{name})")),
            "docs/guide/{name} is not on the README's map"
        );
    }
    assert!(chapters >= 7, "{chapters} chapters");
}
