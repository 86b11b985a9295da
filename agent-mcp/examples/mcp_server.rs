//! Every standard skill served as an MCP server, confined to the workspace given as the first
//! argument.
//!
//! ```sh
//! cargo build --release -p agent-mcp --example mcp_server
//! target/release/examples/mcp_server /path/to/project                       # stdio
//! target/release/examples/mcp_server /path/to/project --http 127.0.0.1:8080  # http://127.0.0.1:8080/mcp
//! ```
//!
//! An MCP client starts it as a child process. For Claude Desktop (`claude_desktop_config.json`),
//! Cursor (`.cursor/mcp.json`) and most other clients:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "eugene": {
//!       "command": "/path/to/target/release/examples/mcp_server",
//!       "args": ["/path/to/project"]
//!     }
//!   }
//! }
//! ```
//!
//! Paths the model gives are resolved inside the workspace; a path that leads out (`../x`,
//! `/etc/passwd`, a symbolic link pointing out) is refused with an `isError` result. Standard
//! output carries the protocol only; messages go to standard error.

use std::path::PathBuf;
use std::process::ExitCode;

use agent_core::{Registry, SkillContext};
use agent_mcp::McpServer;
use agent_std_tools as _; // links the standard skills, which `Registry::discover` then finds

const USAGE: &str = "usage: mcp_server WORKSPACE [--http ADDR]";

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(workspace) = args.next().map(PathBuf::from) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let http = match (args.next(), args.next()) {
        (None, _) => None,
        (Some(flag), Some(addr)) if flag == "--http" => Some(addr.to_string_lossy().into_owned()),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let workspace = match workspace.canonicalize() {
        Ok(path) if path.is_dir() => path,
        Ok(path) => {
            eprintln!("mcp_server: {} is not a directory", path.display());
            return ExitCode::from(2);
        }
        Err(error) => {
            eprintln!("mcp_server: {}: {error}", workspace.display());
            return ExitCode::from(2);
        }
    };
    let registry = match Registry::discover() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("mcp_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    let server = McpServer::new(registry)
        .context(SkillContext::new(&workspace))
        .server_info("eugene-std-tools", env!("CARGO_PKG_VERSION"))
        .instructions(format!(
            "File, search, shell, web and memory tools confined to {}. Paths are relative to it.",
            workspace.display()
        ));
    let served = match http {
        None => server.serve_stdio().await,
        Some(addr) => {
            eprintln!(
                "mcp_server: serving {} at http://{addr}/mcp",
                workspace.display()
            );
            server.serve_http(addr).await
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp_server: {error}");
            ExitCode::FAILURE
        }
    }
}
