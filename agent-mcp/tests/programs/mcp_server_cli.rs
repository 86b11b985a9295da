//! The `mcp_server` example's command line: `--help` prints usage and serves nothing (it used to
//! serve a folder named `--help`), and a wrong command line says how to get help.

use crate::support;

use std::process::{Command, Stdio};

#[test]
fn help_prints_usage_and_serves_nothing() {
    let server = support::example("mcp_server");
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--help", "-h"] {
        let output = Command::new(&server)
            .arg(flag)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{flag}: {output:?}");
        assert!(
            stdout.starts_with("usage: mcp_server WORKSPACE"),
            "{stdout}"
        );
        assert!(stdout.contains("EUGENE_MCP_TOKEN"), "{stdout}");
    }
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing was created in the working directory"
    );
}

#[test]
fn a_flag_where_the_workspace_goes_is_a_usage_error() {
    let server = support::example("mcp_server");
    let output = Command::new(&server)
        .arg("--http")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("usage: mcp_server") && stderr.contains("--help"),
        "{stderr}"
    );
}
