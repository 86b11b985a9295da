//! The official Python MCP SDK (PyPI `mcp`) as a client, with an `elicitation_callback` and a
//! `sampling_callback` and without: `tests/programs/serve_features_client.py` makes the checks
//! and this side serves. Over stdio the test serves MCP on the Python process's standard input
//! and output (the SDK's stdio transport, used by the client); over HTTP on loopback with a
//! bearer token. The Python is `AGENT_MCP_PYTHON`, else one installed once under the test
//! target's directory; a test that cannot get one fails, saying how to install it.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use agent_mcp::rmcp::ServiceExt;

use crate::fixtures;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/programs/serve_features_client.py"
);

/// The longest a Python client may run before the test gives up on it (a bound, so a hang
/// fails the test instead of stalling it; the checks take a few seconds).
const PYTHON_DEADLINE: Duration = Duration::from_secs(180);

fn python() -> PathBuf {
    test_support::provision::python_with_mcp(env!("CARGO_TARGET_TMPDIR"))
}

fn assert_passed(what: &str, status: std::process::ExitStatus, stdout: &str, stderr: &str) {
    assert!(
        status.success(),
        "{what} failed ({status}):\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("all checks passed"),
        "{what}:\n{stdout}\n{stderr}"
    );
}

/// Runs the Python client with `args`; with `stdio`, serves it on the client's standard input
/// and output. Fails the test when the client fails or outlives [`PYTHON_DEADLINE`].
async fn run_client(args: &[&str], stdio: Option<agent_mcp::McpServer>) {
    run_script(SCRIPT, args, stdio).await;
}

/// Runs the Python program `script` with `args` as [`run_client`] does.
pub async fn run_script(script: &str, args: &[&str], stdio: Option<agent_mcp::McpServer>) {
    let mut child = tokio::process::Command::new(python())
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the python interpreter starts");
    let mut errors = child.stderr.take().unwrap();
    let stderr = tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut errors, &mut text).await;
        text
    });
    let mut output = child.stdout.take().unwrap();
    let served_stdio = stdio.is_some();
    let serving = match stdio {
        Some(server) => {
            let to_child = child.stdin.take().unwrap();
            tokio::spawn(async move {
                if let Ok(running) = server.serve((output, to_child)).await {
                    let _ = running.waiting().await;
                }
                String::new()
            })
        }
        None => tokio::spawn(async move {
            let mut text = String::new();
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut output, &mut text).await;
            text
        }),
    };
    let status = match tokio::time::timeout(PYTHON_DEADLINE, child.wait()).await {
        Ok(status) => status.expect("the python client runs"),
        Err(_) => {
            let _ = child.kill().await;
            panic!(
                "the python client did not finish: {}",
                stderr.await.unwrap()
            );
        }
    };
    let stderr = stderr.await.unwrap();
    let stdout = if served_stdio {
        serving.abort();
        String::new()
    } else {
        serving.await.unwrap_or_default()
    };
    let what = format!("{script} {}", args.join(" "));
    assert_passed(&what, status, &stdout, &stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_the_python_sdk_answers_elicitations_and_samples_and_reads_resources_and_prompts()
 {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    run_client(&["--stdio"], Some(fixtures::server(skills.path()))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_python_client_without_the_capabilities_gets_a_clear_tool_error() {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    run_client(&["--stdio-without"], Some(fixtures::server(skills.path()))).await;
}

/// Both Python clients, with and without the callbacks, one after the other on one server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_python_sdk_answers_elicitations_and_samples_and_reads_resources_and_prompts()
{
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let token = agent_mcp::generate_token().unwrap();
    let server = fixtures::server(skills.path()).bearer_token(token.clone());
    let serving = tokio::spawn(server.serve_http_on(listener));
    run_client(&["--http", &url, &token], None).await;
    serving.abort();
}
