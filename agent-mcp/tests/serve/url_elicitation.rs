//! URL-mode elicitation when serving: a skill sends the client's user to a URL
//! ([`ConnectedClient::elicit_url`](agent_mcp::server::ConnectedClient::elicit_url)) and tells
//! the client when it is done. Against the official Python SDK over stdio
//! (`tests/programs/serve_url_client.py`, which makes the checks), and inside an MCP task
//! against rmcp's client.

use std::time::Duration;

use agent_core::{Registry, SkillContext, SkillError, skill};
use agent_mcp::McpServer;
use agent_mcp::server::{UrlElicitAnswer, client_of};

use crate::python::run_script;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/programs/serve_url_client.py"
);

/// Ask the user to sign in at a URL.
///
/// # Arguments
/// * `url` - Where to sign in.
#[skill(read_only, register = false)]
pub async fn sign_in(ctx: &SkillContext, url: String) -> Result<String, SkillError> {
    let client = client_of(ctx)?;
    Ok(
        match client
            .elicit_url("Sign in to continue.", &url, "sign-in-1")
            .await?
        {
            UrlElicitAnswer::Accept => {
                client.elicitation_complete("sign-in-1").await?;
                "signed in".into()
            }
            UrlElicitAnswer::Decline => "declined".into(),
            UrlElicitAnswer::Cancel => "dismissed".into(),
        },
    )
}

pub fn server() -> McpServer {
    let mut registry = Registry::new();
    registry.add(SignInSkill);
    McpServer::new(registry).client_request_timeout(Duration::from_secs(60))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_the_python_sdk_is_sent_to_a_url_and_told_when_it_is_done() {
    run_script(SCRIPT, &["--stdio"], Some(server())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_python_client_without_url_elicitation_gets_a_clear_tool_error() {
    run_script(SCRIPT, &["--stdio-without"], Some(server())).await;
}
