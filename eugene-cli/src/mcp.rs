//! Remote MCP servers behind OAuth: `eugene mcp login URL` logs in and keeps the tokens;
//! `--mcp URL` (repeatable) adds such a server's tools to a run, with the kept tokens.
//!
//! The tokens are kept in one file per server (agent-mcp's `FileTokenStore`: mode 0600, written
//! atomically) in `--token-dir DIR`, else `$EUGENE_CONFIG_DIR/mcp-tokens`, else
//! `$XDG_CONFIG_HOME/eugene/mcp-tokens`, else `~/.config/eugene/mcp-tokens`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use agent_mcp::McpSkills;
use agent_mcp::client::oauth::{self, FileTokenStore, OAuthError};
use clap::Parser;
use eugene::Registry;

use crate::cli::{Args, ColorWhen, Exit};
use crate::output::Style;

/// `eugene mcp ...`: only when `mcp` is the very first argument (as `eval`).
pub fn requested() -> bool {
    std::env::args_os()
        .nth(1)
        .is_some_and(|first| first == "mcp")
}

/// Remote MCP servers.
#[derive(Parser, Debug)]
#[command(name = "eugene mcp", about = "Remote MCP servers behind OAuth.")]
struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(clap::Subcommand, Debug)]
enum McpCommand {
    /// Log in to an MCP server that uses OAuth: prints the URL to open in a browser, waits
    /// for the browser to come back (to 127.0.0.1, at most --wait seconds) and keeps the
    /// tokens. Later runs use them with --mcp URL.
    Login {
        /// The MCP server's URL (http:// or https://), as given to --mcp.
        url: String,
        /// Where the tokens are kept [default: $EUGENE_CONFIG_DIR/mcp-tokens, else
        /// ~/.config/eugene/mcp-tokens].
        #[arg(long, value_name = "DIR")]
        token_dir: Option<PathBuf>,
        /// How long to wait for the browser, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 300)]
        wait: u64,
    },
}

/// `eugene mcp ...`: parses its own flags (clap exits on a usage error, with status 2), runs,
/// and returns the exit status.
pub async fn main() -> Exit {
    let args = McpArgs::parse_from(std::env::args_os().skip(1));
    let style = Style {
        colour: ColorWhen::Auto.colours(std::io::stderr().is_terminal()),
    };
    let McpCommand::Login {
        url,
        token_dir,
        wait,
    } = args.command;
    let store = match token_dir_for(token_dir.as_deref())
        .and_then(|dir| FileTokenStore::in_dir(dir, &url).map_err(|e| e.to_string()))
    {
        Ok(store) => store,
        Err(message) => {
            eprintln!("{} {message}", style.red("eugene:"));
            return Exit::Config;
        }
    };
    let options = oauth::LoginOptions::default().with_timeout(std::time::Duration::from_secs(wait));
    let open = |auth_url: &str| {
        // The URL alone on stdout, for a script (or a test) to open; the words on stderr.
        eprintln!("Open this URL in a browser to log in to {url}:");
        println!("{auth_url}");
        eprintln!("{}", style.dim("(waiting for the browser to come back)"));
    };
    match oauth::login_with(&url, store.clone(), open, &options).await {
        Ok(login) => {
            eprintln!(
                "Logged in to {url}; tokens kept in {}{}",
                store.path().display(),
                if login.refreshable {
                    ""
                } else {
                    " (no refresh token: log in again when the access token expires)"
                }
            );
            Exit::Answered
        }
        Err(error) => {
            eprintln!("{} {error}", style.red("eugene:"));
            match error {
                OAuthError::InvalidUrl { .. } | OAuthError::Store { .. } => Exit::Config,
                _ => Exit::ProviderError,
            }
        }
    }
}

/// Adds the tools of every `--mcp URL` server to `registry`, with the tokens `eugene mcp
/// login` kept; the message says what is wrong (and, without tokens, how to log in).
pub async fn add(registry: &mut Registry, args: &Args) -> Result<(), String> {
    if args.mcp.is_empty() {
        return Ok(());
    }
    let dir = token_dir_for(args.token_dir.as_deref())?;
    for url in &args.mcp {
        let store = FileTokenStore::in_dir(&dir, url).map_err(|e| e.to_string())?;
        let skills = McpSkills::connect_http_oauth(url.as_str(), store)
            .await
            .map_err(|error| match error {
                OAuthError::LoginRequired { .. } => format!(
                    "{error}\n  (the tokens are looked for in {}; --token-dir DIR looks elsewhere)",
                    dir.display()
                ),
                error => format!("--mcp {url}: {error}"),
            })?;
        skills
            .add_to(registry)
            .map_err(|e| format!("--mcp {url}: {e}"))?;
    }
    Ok(())
}

/// `--token-dir`, else the default place (see the module docs).
fn token_dir_for(flag: Option<&Path>) -> Result<PathBuf, String> {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    flag.map(Path::to_owned)
        .or_else(|| env("EUGENE_CONFIG_DIR").map(|dir| dir.join("mcp-tokens")))
        .or_else(|| env("XDG_CONFIG_HOME").map(|dir| dir.join("eugene/mcp-tokens")))
        .or_else(|| env("HOME").map(|home| home.join(".config/eugene/mcp-tokens")))
        .ok_or_else(|| {
            "no place for MCP tokens: give --token-dir DIR (or set EUGENE_CONFIG_DIR or HOME)"
                .to_owned()
        })
}
