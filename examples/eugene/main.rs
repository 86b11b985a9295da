//! eugene: an agent that answers questions about the project in front of it, with the standard
//! skills (read, list, search; writes, patches and shell when you allow them).
//!
//! ```sh
//! cargo run --example eugene -- "Which Rust edition does Cargo.toml use?"
//! cargo run --example eugene                 # interactive: ask one question after another
//! cargo run --example eugene -- --help       # flags, environment, provider order, exit statuses
//! cargo run --example eugene -- --json-schema ticket.json "File a ticket for the failing test."
//! ```
//!
//! The model comes from the environment, first match wins: `ANTHROPIC_API_KEY` (and optionally
//! `ANTHROPIC_BASE_URL`); `OPENAI_API_KEY` and/or `OPENAI_BASE_URL` (OpenAI, DeepSeek, vLLM,
//! llama.cpp); `OLLAMA_HOST`, or an Ollama answering on 127.0.0.1:11434. `AGENT_MODEL` names the
//! model; the flags override all of it.
//!
//! The answer goes to stdout; tool calls, progress, thinking and errors to stderr, coloured only on
//! a terminal and never under `NO_COLOR`. The exit status says how the run ended ([`cli::Exit`]).
//!
//! With `--json-schema FILE` each question is a typed run: it ends in a JSON value that follows the
//! file's schema (checked by the `jsonschema` crate; an answer that does not is sent back with
//! what is wrong, up to `--output-retries` times). The value alone goes to stdout, pretty; the
//! model's text goes to stderr with the rest.

mod ask;
mod cli;
mod output;
mod provider;
mod schema;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_std_tools as _; // links the standard skills, so Registry::discover() finds them
use clap::Parser;
use eugene::{
    AgentError, AgentRuntime, CancellationToken, FinishReason, Message, Registry, ToolChoice,
};
use tokio::signal::unix::{Signal, SignalKind, signal};

use ask::{AskFirst, CurrentRun, LineReader};
use cli::{Args, Exit};
use output::{Limits, Renderer, Style, Summary};
use provider::Chosen;
use schema::Schema;

fn main() {
    let args = Args::parse();
    let exit = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(run(args)),
        Err(error) => {
            eprintln!("eugene: cannot start the async runtime: {error}");
            Exit::Internal
        }
    };
    let _ = std::io::stdout().flush();
    // Not returning: the thread that reads stdin may be blocked in a read.
    std::process::exit(exit.code());
}

/// After this many calls in a row were denied permission, the question ends (exit status 7).
const DENIALS_IN_A_ROW: usize = 4;

/// Everything one question needs besides the question.
struct Session {
    args: Args,
    style: Style,
    chosen: Chosen,
    /// `--json-schema`: what each answer must be.
    schema: Option<Schema>,
    base: AgentRuntime,
    renderer: Renderer,
    current: CurrentRun,
    sigint: Signal,
}

async fn run(args: Args) -> Exit {
    let style = Style {
        colour: args.color.colours(std::io::stderr().is_terminal()),
    };
    // Read first: a wrong file is found before any server is asked anything.
    let schema = match args.json_schema.as_deref().map(Schema::load).transpose() {
        Ok(schema) => schema,
        Err(message) => return config_error(&args, style, &message),
    };
    let chosen = match provider::choose(&args).await {
        Ok(Some(chosen)) => chosen,
        Ok(None) => return config_error(&args, style, provider::NO_PROVIDER),
        Err(message) => return config_error(&args, style, &message),
    };
    let workspace = match workspace(args.workspace.as_deref()) {
        Ok(path) => path,
        Err(message) => return config_error(&args, style, &message),
    };
    let mut registry = match Registry::discover() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("{} {error}", style.red("eugene:"));
            return Exit::Internal;
        }
    };
    // Installed before the first run and kept: Ctrl-C never kills eugene mid-write, it is
    // delivered here, to the run or to the prompt, whichever is waiting.
    let sigint = match signal(SignalKind::interrupt()) {
        Ok(sigint) => sigint,
        Err(error) => {
            eprintln!("{} cannot watch for Ctrl-C: {error}", style.red("eugene:"));
            return Exit::Internal;
        }
    };
    let input = Arc::new(tokio::sync::Mutex::new(LineReader::stdin()));
    let current: CurrentRun = Arc::new(Mutex::new(CancellationToken::new()));
    registry.with_hook(AskFirst {
        yes: args.yes,
        always: Mutex::new(Vec::new()),
        input: input.clone(),
        run: current.clone(),
        style,
    });
    let renderer = Renderer::new(args.json, style, schema.is_some());
    let mut base = AgentRuntime::from_shared(chosen.provider.clone(), Arc::new(registry))
        .system(system_prompt(&workspace))
        .workspace(workspace)
        .max_steps(args.max_steps)
        .max_tokens_total(args.max_tokens)
        .max_tokens_per_call(args.max_answer_tokens)
        .plan_mode(args.plan)
        .permission_denial_limit(DENIALS_IN_A_ROW)
        .streaming(!args.no_stream)
        .output_mode(args.output_mode.into())
        .output_retries(args.output_retries as usize)
        .event_sink(renderer.clone());
    if let Some(thinking) = args.think {
        base = base.thinking(thinking);
    }
    match args.require_tool.as_deref() {
        None => {}
        Some("") => base = base.first_tool_choice(ToolChoice::Required),
        Some(name) => base = base.first_tool_choice(ToolChoice::Tool(name.to_owned())),
    }
    let mut session = Session {
        args,
        style,
        chosen,
        schema,
        base,
        renderer,
        current,
        sigint,
    };

    if let Some(question) = session.args.question.clone() {
        return session.ask(&mut Vec::new(), question).await;
    }
    let show_prompt = std::io::stdin().is_terminal();
    let mut transcript = Vec::new();
    loop {
        match read_question(&input, &mut session.sigint, style, show_prompt).await {
            Prompted::Question(question) => {
                session.ask(&mut transcript, question).await;
            }
            Prompted::End => return Exit::Answered,
            Prompted::Quit => return Exit::Cancelled,
        }
    }
}

/// The workspace as an absolute path, or why it cannot be one.
fn workspace(flag: Option<&Path>) -> Result<PathBuf, String> {
    let path = flag.unwrap_or(Path::new("."));
    match path.canonicalize() {
        Ok(path) if path.is_dir() => Ok(path),
        Ok(path) => Err(format!(
            "the workspace {} is not a directory: give --workspace a directory",
            path.display()
        )),
        Err(error) => Err(format!(
            "the workspace {} cannot be opened ({error}): give --workspace an existing directory",
            path.display()
        )),
    }
}

fn system_prompt(workspace: &Path) -> String {
    format!(
        "You are eugene, a careful assistant for the software project in {}. Your tools work inside \
         that directory: give them paths relative to it (\".\" is the project's root). Use the tools \
         to look before you answer; quote what you find. Answer briefly.",
        workspace.display()
    )
}

/// Reports a configuration error (on stderr, and as JSON lines with `--json`).
fn config_error(args: &Args, style: Style, message: &str) -> Exit {
    if message.starts_with("eugene") {
        eprintln!("{message}");
    } else {
        eprintln!("{} {message}", style.red("eugene:"));
    }
    if args.json {
        output::print_error_json("config_error", message, None);
        Summary {
            words: &format!("error: {message}"),
            code: "config_error",
            exit: Exit::Config,
            stats: &output::RunStats::default(),
            answer: None,
            output: None,
        }
        .print_json();
    }
    Exit::Config
}

/// What the prompt got.
enum Prompted {
    Question(String),
    End,
    Quit,
}

/// Asks for the next question. Ctrl-C here says how to quit; a second one in a row quits.
async fn read_question(
    input: &tokio::sync::Mutex<LineReader>,
    sigint: &mut Signal,
    style: Style,
    show_prompt: bool,
) -> Prompted {
    let mut armed = false;
    loop {
        if show_prompt {
            eprint!("{}", style.bold("? "));
            let _ = std::io::stderr().flush();
        }
        let line = tokio::select! {
            line = async { input.lock().await.next_line().await } => line,
            _ = sigint.recv() => {
                if armed {
                    eprintln!();
                    return Prompted::Quit;
                }
                armed = true;
                eprintln!("\n{}", style.dim("(press Ctrl-C again to quit, or Ctrl-D)"));
                continue;
            }
        };
        match line {
            None => {
                if show_prompt {
                    eprintln!();
                }
                return Prompted::End;
            }
            Some(line) if line.trim().is_empty() => armed = false,
            Some(line) => return Prompted::Question(line.trim().to_owned()),
        }
    }
}

impl Session {
    /// Runs one question on top of `transcript` (which grows by the run when it did not fail),
    /// renders how it ended, and returns the exit status that ending has.
    async fn ask(&mut self, transcript: &mut Vec<Message>, question: String) -> Exit {
        let mut conversation = transcript.clone();
        conversation.push(Message::user(question));
        let token = CancellationToken::new();
        *self.current.lock().unwrap() = token.clone();
        self.renderer.start_run();
        let runtime = self.base.clone().cancellation(token.clone());
        let output = self.schema.as_ref().map(Schema::output_type);
        let run = async move {
            match output {
                Some(output) => runtime.resume_with_output(conversation, output).await,
                None => runtime.resume(conversation).await,
            }
        };
        tokio::pin!(run);
        let limit = self.args.max_time;
        let deadline = async move {
            match limit {
                0 => std::future::pending().await,
                secs => tokio::time::sleep(Duration::from_secs(secs)).await,
            }
        };
        tokio::pin!(deadline);
        let mut out_of_time = false;
        let result = loop {
            tokio::select! {
                result = &mut run => break result,
                _ = &mut deadline, if !out_of_time => {
                    out_of_time = true;
                    token.cancel();
                }
                _ = self.sigint.recv() => {
                    // A terminal echoed `^C` where the cursor was: go on below it.
                    if !self.renderer.end_lines() && std::io::stdin().is_terminal() {
                        eprintln!();
                    }
                    if token.is_cancelled() {
                        eprintln!("{}", self.style.dim("(quit)"));
                        return Exit::Cancelled;
                    }
                    token.cancel();
                    eprintln!("{}", self.style.dim("(cancelling; press Ctrl-C again to quit)"));
                }
            }
        };
        self.renderer.end_lines();
        let stats = self.renderer.stats();
        let style = self.style;
        match result {
            Ok(outcome) => {
                // A typed run's answer is its value, checked (in tool mode the last message may
                // hold none but the call that gave it).
                let value = match &self.schema {
                    Some(_) => outcome.output.clone(),
                    None => None,
                };
                let blank = match &self.schema {
                    Some(_) => value.is_none(),
                    None => output::answer_is_blank(&outcome.transcript),
                };
                let limits = Limits {
                    answer_tokens: self.args.max_answer_tokens,
                };
                let mut words = output::finish_words(&outcome.finish, blank, &limits);
                let mut code = output::finish_code(&outcome.finish, blank);
                let mut exit = output::finish_exit(&outcome.finish, blank);
                if out_of_time && outcome.finish == FinishReason::Cancelled {
                    words = format!(
                        "stopped: the time limit ({limit} s) ran out (--max-time raises it)"
                    );
                    code = "time_budget";
                    exit = Exit::Budget;
                }
                if self.args.json {
                    Summary {
                        words: &words,
                        code,
                        exit,
                        stats: &stats,
                        answer: outcome.final_text.as_deref().filter(|_| !blank),
                        output: value.as_ref(),
                    }
                    .print_json();
                } else {
                    if let Some(value) = &value {
                        println!("{}", pretty(value));
                    }
                    let steps = match outcome.steps {
                        1 => "1 step".to_owned(),
                        n => format!("{n} steps"),
                    };
                    let tokens = output::token_words(&outcome.usage);
                    eprintln!("{}", style.dim(&format!("[{words} · {steps} · {tokens}]")));
                }
                *transcript = outcome.transcript;
                exit
            }
            Err(error) => {
                let (kind, exit, hint) = match &error {
                    AgentError::Provider(e) if provider::is_config_error(e) => (
                        "config_error",
                        Exit::Config,
                        provider::hint(e, &self.chosen, &self.args),
                    ),
                    AgentError::Provider(e) => (
                        "provider_error",
                        Exit::ProviderError,
                        provider::hint(e, &self.chosen, &self.args),
                    ),
                    AgentError::Config(_) => {
                        ("config_error", Exit::Config, "check the flags".to_owned())
                    }
                    _ => ("internal_error", Exit::Internal, "try again".to_owned()),
                };
                eprintln!("{} {error}", style.red("eugene:"));
                eprintln!("  {hint}");
                if self.args.json {
                    let message = error.to_string();
                    output::print_error_json(kind, &message, Some(&hint));
                    Summary {
                        words: &format!("error: {message}"),
                        code: kind,
                        exit,
                        stats: &stats,
                        answer: None,
                        output: None,
                    }
                    .print_json();
                }
                exit
            }
        }
    }
}

/// A value as pretty JSON.
fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
