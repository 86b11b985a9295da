//! The official Python MCP SDK as a client of `examples/mcp_server`, over stdio and over HTTP
//! with the bearer token the server prints: runs `python_client.py` with the Python named by
//! `AGENT_MCP_PYTHON` (one with the PyPI package `mcp` installed).
//! Without the variable the test says so and passes: CI sets it.

mod support;

use std::process::Command;

#[test]
fn the_python_sdk_lists_tools_and_reads_files_only_inside_the_workspace() {
    let Some(python) = std::env::var_os("AGENT_MCP_PYTHON") else {
        eprintln!(
            "skipped: set AGENT_MCP_PYTHON to a python with the `mcp` package \
             (python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install mcp)"
        );
        return;
    };
    let server = support::example("mcp_server");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python_client.py");
    let output = Command::new(&python)
        .arg(script)
        .arg(&server)
        .output()
        .expect("the python interpreter runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python_client.py failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stdout.contains("all checks passed"), "{stdout}\n{stderr}");
}
