//! Helpers shared by the integration tests.

#![allow(dead_code)] // each test crate uses some of them

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The path of this crate's example `name`: the one `cargo test` built beside this test binary
/// when it is newer than its source and every `agent_*` library in `deps/`, else built now with
/// the cargo, target directory and profile this test binary was built with.
pub fn example(name: &str) -> PathBuf {
    static BUILD: Mutex<()> = Mutex::new(());
    let _one_at_a_time = BUILD.lock().unwrap_or_else(|p| p.into_inner());
    let exe = std::env::current_exe().expect("the test binary's path");
    // <target>/<profile>/deps/<test binary>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary is in <target>/<profile>/deps");
    let target_dir = profile_dir.parent().expect("a target directory");
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a profile directory");
    let path = profile_dir.join("examples").join(name);
    if is_fresh(&path, &profile_dir.join("deps"), name) {
        return path;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    // What cargo sets for a test run, left out so build scripts that watch these variables
    // (ring's watches CARGO_MANIFEST_DIR) do not see a change and rebuild everything.
    for (key, _) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if key_text.starts_with("CARGO_PKG_")
            || key_text.starts_with("CARGO_BIN_EXE_")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "OUT_DIR",
            ]
            .contains(&key_text.as_ref())
        {
            build.env_remove(&key);
        }
    }
    build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CARGO_TARGET_DIR", target_dir)
        .args(["build", "--quiet", "-p", "agent-mcp", "--example", name]);
    match profile {
        "debug" => {}
        "release" => {
            build.arg("--release");
        }
        other => {
            build.args(["--profile", other]);
        }
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building the example `{name}` failed");
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// Whether the example binary at `path` was linked after its source and the workspace's
/// libraries last changed. `cargo test` (of this package or of the workspace) builds examples
/// with the same features as the tests; building again with `cargo build -p agent-mcp` would
/// resolve features for this package alone and compile its dependencies a second time.
fn is_fresh(path: &Path, deps: &Path, name: &str) -> bool {
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    let Some(built) = modified(path) else {
        return false;
    };
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(format!("{name}.rs"));
    if modified(&source).is_none_or(|changed| changed > built) {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(deps) else {
        return false;
    };
    entries.flatten().all(|entry| {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        !(file.starts_with("libagent_") && file.ends_with(".rlib"))
            || modified(&entry.path()).is_some_and(|changed| changed <= built)
    })
}
