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
//! Destructive tools (`write_file`, `delete_file`, `run_shell`, ...) run when called: MCP clients
//! ask their user before a tool marked `destructiveHint: true`, so this server leaves the question
//! to the client (`DestructiveCalls::Allow`). A server whose clients do not ask would keep the
//! registry's default, which answers such a call as needing approval without running it.
//!
//! Paths the model gives are resolved inside the workspace; a path that leads out (`../x`,
//! `/etc/passwd`, a symbolic link pointing out) is refused with an `isError` result. Standard
//! output carries the protocol only; messages go to standard error.
//!
//! Over HTTP every request must carry `Authorization: Bearer <token>`. The token is the value
//! of `EUGENE_MCP_TOKEN` when it is set, else a new random one; either way it is printed on
//! standard error at start, with the address actually bound (`--http 127.0.0.1:0` picks a free
//! port):
//!
//! ```text
//! mcp_server: serving /path/to/project at http://127.0.0.1:8080/mcp
//! mcp_server: bearer token (send `Authorization: Bearer <token>`): 3f9c…
//! ```
//!
//! Further options with `--http`:
//!
//! - `--no-auth`: no token; refused unless ADDR is a loopback address.
//! - `--allow-origin ORIGIN` (repeatable): a web origin whose pages may call the server from a
//!   browser, e.g. `https://app.example.com`. None by default.
//! - `--allow-host HOST` (repeatable): a `Host` name clients reach the server under besides
//!   `localhost`, `127.0.0.1` and `::1` (needed to serve other machines, e.g. with
//!   `--http 0.0.0.0:8080 --allow-host build-box.lan:8080`).

use std::path::PathBuf;
use std::process::ExitCode;

use agent_core::{DestructiveCalls, Registry, SkillContext};
use agent_mcp::McpServer;
use agent_mcp::rmcp::transport::StreamableHttpServerConfig;
use agent_std_tools as _; // links the standard skills, which `Registry::discover` then finds

const USAGE: &str = "usage: mcp_server WORKSPACE [--http ADDR [--no-auth] [--allow-origin ORIGIN]... [--allow-host HOST]...]";

const HELP: &str = "Serves the standard skills (files, patches, search, shell, web, memory) of the \
workspace folder WORKSPACE as an MCP server: over stdin/stdout, or with --http over streamable HTTP \
at ADDR (e.g. 127.0.0.1:8931).

  --http ADDR           serve HTTP at ADDR; every request needs `Authorization: Bearer TOKEN`
  --no-auth             no token (only when ADDR is a loopback address)
  --allow-origin ORIGIN let browsers from ORIGIN call it (repeatable)
  --allow-host HOST     accept this Host header besides the loopback names (repeatable)
  -h, --help            this text

Environment: EUGENE_MCP_TOKEN is the token to require (otherwise one is generated and printed).";

/// How to serve HTTP, from the command line.
#[derive(Default)]
struct Http {
    addr: String,
    no_auth: bool,
    origins: Vec<String>,
    hosts: Vec<String>,
}

/// The workspace and, with `--http`, the HTTP options; `None` for a command line that is wrong.
fn parse_args(mut args: impl Iterator<Item = String>) -> Option<(PathBuf, Option<Http>)> {
    let first = args.next()?;
    // A flag where the workspace goes (`--help`, `-h`, a typo) is never served as a folder.
    if first.starts_with('-') {
        return None;
    }
    let workspace = PathBuf::from(first);
    let mut http: Option<Http> = None;
    while let Some(flag) = args.next() {
        match (flag.as_str(), http.as_mut()) {
            ("--http", None) => {
                http = Some(Http {
                    addr: args.next()?,
                    ..Http::default()
                });
            }
            ("--no-auth", Some(http)) => http.no_auth = true,
            ("--allow-origin", Some(http)) => http.origins.push(args.next()?),
            ("--allow-host", Some(http)) => http.hosts.push(args.next()?),
            _ => return None,
        }
    }
    Some((workspace, http))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    let args: Vec<String> = args.collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}\n\n{HELP}");
        return ExitCode::SUCCESS;
    }
    let Some((workspace, http)) = parse_args(args.into_iter()) else {
        eprintln!("{USAGE}\n(mcp_server --help says more)");
        return ExitCode::from(2);
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
    let mut registry = match Registry::discover() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("mcp_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    // The client asks its user before destructive tools (see the module docs).
    registry.destructive_calls(DestructiveCalls::Allow);
    let server = McpServer::new(registry)
        .context(SkillContext::new(&workspace))
        .server_info("eugene-std-tools", env!("CARGO_PKG_VERSION"))
        .instructions(format!(
            "File, search, shell, web and memory tools confined to {}. Paths are relative to it.",
            workspace.display()
        ));
    let served = match http {
        None => server.serve_stdio().await,
        Some(http) => serve_http(server, &workspace, http).await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp_server: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Binds `http.addr`, says where and with which token, and serves until killed.
async fn serve_http(
    server: McpServer,
    workspace: &std::path::Path,
    http: Http,
) -> Result<(), agent_mcp::McpError> {
    let mut server = server.allowed_origins(http.origins);
    if !http.hosts.is_empty() {
        let hosts = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(str::to_owned)
            .chain(http.hosts);
        server =
            server.http_config(StreamableHttpServerConfig::default().with_allowed_hosts(hosts));
    }
    let token = if http.no_auth {
        server = server.without_auth();
        None
    } else {
        let token = match std::env::var("EUGENE_MCP_TOKEN") {
            Ok(token) if !token.is_empty() => token,
            _ => agent_mcp::generate_token()?,
        };
        server = server.bearer_token(token.clone());
        Some(token)
    };
    let listener = tokio::net::TcpListener::bind(&http.addr)
        .await
        .map_err(|e| agent_mcp::McpError::Io {
            what: format!("binding {}", http.addr),
            source: e,
        })?;
    let bound = listener.local_addr().map_err(|e| agent_mcp::McpError::Io {
        what: "reading the bound address".into(),
        source: e,
    })?;
    eprintln!(
        "mcp_server: serving {} at http://{bound}/mcp",
        workspace.display()
    );
    match &token {
        Some(token) => {
            eprintln!("mcp_server: bearer token (send `Authorization: Bearer <token>`): {token}")
        }
        None => eprintln!("mcp_server: no authentication (--no-auth)"),
    }
    server.serve_http_on(listener).await
}
