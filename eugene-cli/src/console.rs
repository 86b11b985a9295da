//! `eugene console`: the agent of `eugene` (the same model, skills and workspace) served on
//! 127.0.0.1 with agent-agui's console, a page to start runs, watch them and decide on the calls
//! that change things. It prints the page's address with a fresh token in its fragment
//! (`http://127.0.0.1:8787/console#token=…`) and serves until stopped (Ctrl-C).
//!
//! Read-only skills run without asking; any other call pauses its run until a person approves,
//! denies or edits it in the page (`--yes` allows everything).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use agent_agui::AguiServer;
use clap::Parser;
use eugene::{AgentRuntime, Permission, SkillContext};

use crate::cli::{Args, ColorWhen, Exit};
use crate::output::Style;

/// Whether the command line asks for `eugene console`: its first argument is exactly `console`.
pub fn requested() -> bool {
    std::env::args_os()
        .nth(1)
        .is_some_and(|first| first == "console")
}

/// A console for people in the browser.
#[derive(Parser, Debug)]
#[command(
    name = "eugene console",
    about = "Serve the agent on 127.0.0.1 with a console in the browser: start runs, watch \
             them, approve, deny or edit the calls that change things."
)]
struct ConsoleArgs {
    /// The port on 127.0.0.1 (0: any free one).
    #[arg(long, value_name = "PORT", default_value_t = 8787)]
    port: u16,
    /// Which provider: anthropic, openai, openai-responses, gemini or ollama [default: the
    /// first configured, as `eugene --help` says].
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// The model [default: AGENT_MODEL, else the provider's usual one].
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The directory the agent works in [default: the current one].
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// The most model calls for one run.
    #[arg(long, value_name = "N", default_value_t = 25)]
    max_steps: usize,
    /// The most tokens (in and out, all model calls together) for one run.
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    max_tokens: u64,
    /// Allow every skill without asking (writes, patches, shell).
    #[arg(long)]
    yes: bool,
}

/// `eugene console ...`: parses its own flags (clap exits on a usage error, with status 2),
/// serves until stopped, and returns the exit status.
pub async fn main() -> Exit {
    let args = ConsoleArgs::parse_from(std::env::args_os().skip(1));
    let style = Style {
        colour: ColorWhen::Auto.colours(std::io::stderr().is_terminal()),
    };
    match serve(args, style).await {
        Ok(()) => Exit::Answered,
        Err((exit, message)) => {
            eprintln!("{} {message}", style.red("eugene:"));
            exit
        }
    }
}

type Failed = (Exit, String);

async fn serve(args: ConsoleArgs, style: Style) -> Result<(), Failed> {
    let config = |message: String| (Exit::Config, message);
    let mut question = Args::try_parse_from(["eugene"]).map_err(|e| {
        (
            Exit::Internal,
            format!("the default flags do not parse: {e}"),
        )
    })?;
    question.provider = args.provider.clone();
    question.model = args.model.clone();
    let chosen = crate::provider::choose(&question)
        .await
        .map_err(config)?
        .ok_or_else(|| config(crate::provider::NO_PROVIDER.to_owned()))?;
    let workspace = crate::workspace(args.workspace.as_deref()).map_err(config)?;
    let (registry, shell) = crate::skills::gated(&workspace, style, args.yes, |name| {
        Permission::Ask(format!("`{name}` changes things"))
    })
    .await?;
    let runtime = AgentRuntime::from_shared(chosen.provider.clone(), Arc::new(registry))
        .system(crate::system_prompt(&workspace))
        .context(SkillContext::new(workspace).with_extension(shell))
        .max_steps(args.max_steps)
        .max_tokens_total(args.max_tokens)
        .streaming(true);
    let listener = agent_serve::bind(("127.0.0.1", args.port))
        .await
        .map_err(|e| config(format!("cannot listen on 127.0.0.1:{}: {e}", args.port)))?;
    let port = listener
        .local_addr()
        .map_err(|e| (Exit::Internal, e.to_string()))?
        .port();
    let token = agent_serve::generate_token().map_err(|e| (Exit::Internal, e.to_string()))?;
    println!(
        "http://127.0.0.1:{port}{}#token={token}",
        agent_agui::CONSOLE_PATH
    );
    eprintln!(
        "{}",
        style.dim("open that address in a browser; Ctrl-C stops the console")
    );
    AguiServer::new(runtime)
        .bearer_token(token)
        .serve(listener)
        .await
        .map_err(|e| (Exit::Internal, e.to_string()))
}
