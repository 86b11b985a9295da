//! `search_files` through the registry against the `rg` binary, on the same large tree, same
//! patterns, same hit counts (checked before timing).
//!
//! The tree is `$EUGENE_BENCH_TREE` if set, else the cargo registry sources
//! (`~/.cargo/registry/src`, hundreds of crates) if present, else a generated tree of 4,000 files.
//! Without `rg` on the PATH only `search_files` is measured (install it with
//! `apt-get install ripgrep`; CI needs it only for this bench, never for tests).
//!
//! ```sh
//! cargo bench -p agent-std-tools --bench search
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agent_core::{Registry, SkillContext, ToolCall};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

const PATTERNS: [(&str, &str); 3] = [
    ("literal", "TODO"),
    ("regex", r"fn\s+[a-z_]+_mut\("),
    ("rare", "ZQXJ-never-there"),
];

fn tree() -> (PathBuf, Option<tempfile::TempDir>) {
    if let Some(path) = std::env::var_os("EUGENE_BENCH_TREE") {
        return (PathBuf::from(path), None);
    }
    if let Some(home) = std::env::var_os("HOME") {
        let registry = Path::new(&home).join(".cargo/registry/src");
        if registry.is_dir() {
            return (registry, None);
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..4_000 {
        let dir = tmp.path().join(format!("m{:02}/s{:02}", i % 40, i % 13));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        for line in 0..200 {
            match (i + line) % 97 {
                0 => text.push_str("    // TODO: handle the error\n"),
                1 => text.push_str("pub fn get_mut(&mut self) -> &mut T {\n"),
                _ => text.push_str("    let value = compute(input, line) + offset;\n"),
            }
        }
        std::fs::write(dir.join(format!("f{i}.rs")), text).unwrap();
    }
    (tmp.path().to_path_buf(), Some(tmp))
}

fn rg_available() -> bool {
    Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `rg` as `search_files` searches: `.gitignore` with or without git, no hidden files, no links.
fn rg(tree: &Path, pattern: &str) -> usize {
    let output = Command::new("rg")
        .args([
            "--no-require-git",
            "--no-config",
            "--line-number",
            "--no-heading",
            "--color",
            "never",
            "-e",
            pattern,
            ".",
        ])
        .current_dir(tree)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    output.stdout.iter().filter(|&&b| b == b'\n').count()
}

async fn search_files(registry: &Registry, ctx: &SkillContext, pattern: &str) -> usize {
    let call = ToolCall::new(
        "1",
        "search_files",
        json!({"pattern": pattern, "max_results": 100_000_000}),
    );
    let results = registry.run_many(&[call], ctx).await;
    let text = results[0].content();
    assert!(!results[0].is_error(), "{text}");
    if text.starts_with("No matches") {
        return 0;
    }
    // Hits are the lines before any notice.
    text.split("\n\n[").next().unwrap().lines().count()
}

fn bench(c: &mut Criterion) {
    let (tree, _keep) = tree();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut registry = Registry::new();
    registry
        .add(agent_std_tools::SearchFilesSkill)
        .with_output_budget(usize::MAX);
    let ctx = SkillContext::new(&tree);
    let with_rg = rg_available();
    if !with_rg {
        eprintln!("`rg` is not installed: measuring search_files alone (apt-get install ripgrep)");
    }

    let mut group = c.benchmark_group(format!("search {}", tree.display()));
    group.sample_size(10);
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_secs(2));
    }
    for (name, pattern) in PATTERNS {
        let ours = runtime.block_on(search_files(&registry, &ctx, pattern));
        if with_rg {
            let theirs = rg(&tree, pattern);
            assert_eq!(
                ours, theirs,
                "`{pattern}`: search_files found {ours} lines, rg {theirs}"
            );
        }
        eprintln!("`{pattern}`: {ours} matching lines");
        group.bench_function(format!("search_files/{name}"), |b| {
            b.to_async(&runtime)
                .iter(|| search_files(&registry, &ctx, pattern))
        });
        if with_rg {
            group.bench_function(format!("rg/{name}"), |b| b.iter(|| rg(&tree, pattern)));
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
