//! The `eugene` binary as `cargo install --path eugene-cli` installs it: it starts, names itself
//! and describes its flags. (The command's behaviour is tested in the workspace's `tests/`, which
//! run this binary; this test also makes `cargo test --workspace` build it.)

use std::process::Command;

#[test]
fn the_installed_binary_is_eugene_and_describes_itself() {
    let out = Command::new(env!("CARGO_BIN_EXE_eugene"))
        .arg("--help")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("the eugene binary runs");
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Usage: eugene"), "{help}");
    for flag in ["--provider", "--attach", "--session"] {
        assert!(
            help.contains(flag),
            "--help does not describe {flag}: {help}"
        );
    }
}
