//! The official Python MCP SDK (PyPI `mcp`) as a client of eugene's server: of
//! `examples/mcp_server` over stdio and over HTTP with the bearer token the server prints, and of
//! typed skills served over HTTP by this test, whose `outputSchema` and `structuredContent` the
//! SDK checks. Runs `python_client.py` with the Python named by `AGENT_MCP_PYTHON` (one with the
//! PyPI package `mcp` installed; CI sets it), else with one the tests install once under the test
//! target's directory. A test that cannot get one fails, saying how to install it by hand.

use crate::support;

use std::path::PathBuf;
use std::process::{Command, Output};

use agent_core::{Registry, SkillError, skill};
use agent_mcp::McpServer;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/programs/python_client.py"
);

/// A Python with the `mcp` package: `AGENT_MCP_PYTHON` (CI sets it), else one installed once
/// under the test target's directory. A test that cannot get one fails, saying how to install it.
fn python() -> PathBuf {
    test_support::provision::python_with_mcp(env!("CARGO_TARGET_TMPDIR"))
}

fn assert_passed(output: &Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python_client.py failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stdout.contains("all checks passed"), "{stdout}\n{stderr}");
}

#[test]
fn the_python_sdk_lists_tools_and_reads_files_only_inside_the_workspace() {
    let python = python();
    let server = support::example("mcp_server");
    let output = Command::new(&python)
        .arg(SCRIPT)
        .arg(&server)
        .output()
        .expect("the python interpreter runs");
    assert_passed(&output);
}

/// A weather forecast.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    /// Where.
    city: String,
    high_c: i32,
}

/// An arithmetic expression: its schema refers to its own root.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Expr {
    Num(f64),
    Neg(Box<Expr>),
}

/// Forecast the weather.
///
/// # Arguments
/// * `city` - Where.
#[skill(read_only, register = false)]
async fn forecast(city: String) -> Result<Forecast, SkillError> {
    Ok(Forecast { city, high_c: 4 })
}

/// List the names.
#[skill(read_only, register = false)]
async fn names() -> Result<Vec<String>, SkillError> {
    Ok(vec!["a".into(), "b".into()])
}

/// Count the lines.
#[skill(read_only, register = false)]
async fn count() -> Result<u64, SkillError> {
    Ok(42)
}

/// Parse the expression.
#[skill(read_only, register = false)]
async fn parse() -> Result<Expr, SkillError> {
    Ok(Expr::Neg(Box::new(Expr::Num(1.5))))
}

/// Touch the file.
#[skill(register = false)]
async fn touch() -> Result<(), SkillError> {
    Ok(())
}

#[test]
fn the_python_sdk_reads_typed_outputs_as_structured_content_that_follows_the_output_schema() {
    let python = python();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let token = agent_mcp::generate_token().unwrap();
    let mut registry = Registry::new();
    registry
        .add(ForecastSkill)
        .add(NamesSkill)
        .add(CountSkill)
        .add(ParseSkill)
        .add(TouchSkill);
    let server = McpServer::new(registry).bearer_token(token.clone());
    runtime.spawn(server.serve_http_on(listener));
    let output = Command::new(&python)
        .arg(SCRIPT)
        .args(["--typed", &url, &token])
        .output()
        .expect("the python interpreter runs");
    assert_passed(&output);
}
