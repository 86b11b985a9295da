//! eugene: an agent that answers questions about the project in front of it, with the standard
//! skills (read, list, search; writes, patches and shell when you allow them).
//!
//! ```sh
//! cargo run -p eugene-cli -- "Which Rust edition does Cargo.toml use?"
//! cargo run -p eugene-cli                 # interactive: ask one question after another
//! cargo run -p eugene-cli -- --help       # flags, environment, provider order, exit statuses
//! cargo run -p eugene-cli -- --json-schema ticket.json "File a ticket for the failing test."
//! ```
//!
//! The model comes from the environment, first match wins: `ANTHROPIC_API_KEY` (and optionally
//! `ANTHROPIC_BASE_URL`); `OPENAI_API_KEY` and/or `OPENAI_BASE_URL` (OpenAI, DeepSeek, vLLM,
//! llama.cpp); `GEMINI_API_KEY` or `GOOGLE_API_KEY` (Gemini, and optionally `GEMINI_BASE_URL`);
//! `OLLAMA_HOST`, or an Ollama answering on 127.0.0.1:11434. `AGENT_MODEL` names the
//! model; the flags override all of it.
//!
//! The answer goes to stdout; tool calls, progress, thinking and errors to stderr, coloured only on
//! a terminal and never under `NO_COLOR`. The exit status says how the run ended ([`cli::Exit`]).
//!
//! With `--json-schema FILE` each question is a typed run: it ends in a JSON value that follows the
//! file's schema (checked by the `jsonschema` crate; an answer that does not is sent back with
//! what is wrong, up to `--output-retries` times). The value alone goes to stdout, pretty; the
//! model's text goes to stderr with the rest.
//!
//! Agent Skills (`SKILL.md` folders) come from `<workspace>/.agents/skills/` and each `--skills
//! DIR`: the model sees their names and descriptions in `load_skill` and loads one when a question
//! calls for it ([`skills`]).
//!
//! `eugene eval cases.yaml` runs a dataset of cases (agent-eval) against the model and reports
//! pass rates, tokens, cost and latency; `eval` is a subcommand only as the first argument
//! ([`eval`]).
//!
//! With `--otlp` the run's spans (`invoke_agent`, `chat`, `execute_tool`) go to an OpenTelemetry
//! collector (agent-otel): `--otlp=URL`, else `OTEL_EXPORTER_OTLP_ENDPOINT`, else
//! `http://localhost:4318`; `--otlp-content` records the prompts and answers on them too.
//!
//! With `--session NAME` the conversation is kept outside the workspace (`sessions::store_path`) and each
//! question continues it. Without a terminal, a call that needs permission then pauses the run
//! (exit status 8) instead of being denied; `--approve ID` / `--deny ID` continue it later.
//!
//! `eugene console [--port 8787]` serves the agent on 127.0.0.1 with a console in the browser
//! and prints its address with a fresh token ([`console`]).
//!
//! `eugene mcp login URL` logs in to a remote MCP server behind OAuth and keeps the tokens;
//! `--mcp URL` adds its tools to a run ([`mcp`]).

mod ask;
mod attach;
mod cli;
mod console;
mod eval;
mod mcp;
mod observe;
mod output;
mod provider;
mod schema;
mod sessions;
mod skills;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_std_tools as _; // links the standard skills, so Registry::discover() finds them
use eugene::{
    AgentError, AgentRuntime, Decision, FinishReason, Message, Registry, SkillContext,
    llm::{PriceTable, ToolChoice, Usd},
    run::StoreError,
    skills::{CancellationToken, PendingCall},
};
use tokio::signal::unix::{Signal, SignalKind, signal};

use ask::{AskFirst, CurrentRun, LineReader, Prompted, read_question};
use cli::{Args, Exit};
use observe::observe;
use output::{Limits, Renderer, RunStats, Style, Summary};
use provider::Chosen;
use schema::Schema;
use sessions::Kept;

fn main() {
    // `eugene eval FILE ...`: only when `eval` is the very first argument (eval.rs).
    if eval::requested() {
        std::process::exit(block_on(eval::main()).code());
    }
    if mcp::requested() {
        std::process::exit(block_on(mcp::main()).code());
    }
    if console::requested() {
        std::process::exit(block_on(console::main()).code());
    }
    let args = Args::parse_checked();
    let export = match observe(&args) {
        Ok(export) => export,
        Err(exit) => std::process::exit(exit.code()),
    };
    let exit = block_on(run(args));
    let _ = std::io::stdout().flush();
    // The last spans go out now, waiting at most the guard's bound (exit runs no destructors).
    drop(export);
    // Not returning: the thread that reads stdin may be blocked in a read.
    std::process::exit(exit.code());
}

/// Runs `work` to its end on a two-thread async runtime.
fn block_on(work: impl std::future::Future<Output = Exit>) -> Exit {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => {
            let exit = runtime.block_on(work);
            let _ = std::io::stdout().flush();
            exit
        }
        Err(error) => {
            eprintln!("eugene: cannot start the async runtime: {error}");
            Exit::Internal
        }
    }
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
    /// `--session`: where the conversation is kept.
    kept: Option<Kept>,
    base: AgentRuntime,
    renderer: Renderer,
    current: CurrentRun,
    sigint: Signal,
    /// `--attach`: sent with the first question.
    attachments: Vec<eugene::media::Media>,
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
    let attachments = match attach::load(&args.attach, style) {
        Ok(attachments) => attachments,
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
    let kept = match args
        .session
        .clone()
        .map(|name| Kept::new(name, &workspace, args.workspace.is_some(), &args.skills))
        .transpose()
    {
        Ok(kept) => kept,
        Err(message) => return config_error(&args, style, &message),
    };
    // --approve / --deny: a decision for each call the session waits on, checked before anything
    // runs.
    let decided = match &kept {
        Some(kept) if !args.approve.is_empty() || !args.deny.is_empty() => {
            match kept.decide(&args).await {
                Ok(decided) => Some(decided),
                Err((exit, kind, message)) => return fail(&args, style, exit, kind, &message),
            }
        }
        _ => None,
    };
    // Approved calls run without being asked about again, on a terminal too.
    let approved = decided.iter().flat_map(|(pending, decisions)| {
        pending
            .iter()
            .zip(decisions)
            .filter(|(_, (_, decision))| *decision == Decision::Approve)
            .map(|(p, _)| (p.skill.clone(), p.call.arguments.clone()))
    });
    let mut registry = match Registry::discover() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("{} {error}", style.red("eugene:"));
            return Exit::Internal;
        }
    };
    // Agent Skills: the workspace's .agents/skills/ and each --skills folder.
    if let Err(message) = skills::add(&mut registry, &workspace, &args.skills, style).await {
        return config_error(&args, style, &message);
    }
    if let Err(message) = mcp::add(&mut registry, &args).await {
        return config_error(&args, style, &message);
    }
    let shell = skills::shell_config(&registry);
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
        pause: kept.is_some(),
        approved: Mutex::new(approved.collect()),
        always: Mutex::new(Vec::new()),
        input: input.clone(),
        run: current.clone(),
        style,
    });
    let renderer = Renderer::new(args.json, style, schema.is_some());
    let mut base = AgentRuntime::from_shared(chosen.provider.clone(), Arc::new(registry))
        .system(system_prompt(&workspace))
        .context(SkillContext::new(workspace).with_extension(shell))
        .max_steps(args.max_steps)
        .max_tokens_total(args.max_tokens)
        .max_tokens_per_call(args.max_answer_tokens)
        .plan_mode(args.plan)
        .permission_denial_limit(DENIALS_IN_A_ROW)
        .streaming(!args.no_stream)
        .output_mode(args.output_mode.into())
        .output_retries(args.output_retries as usize)
        .event_sink(renderer.clone());
    if let Some(file) = &args.prices {
        match PriceTable::from_file(file) {
            Ok(table) => base = base.prices(table.before(PriceTable::builtin())),
            Err(error) => return config_error(&args, style, &error.to_string()),
        }
    }
    if let Some(dollars) = args.max_cost {
        base = base.max_cost(Usd::dollars(dollars));
    }
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
        kept,
        base,
        renderer,
        current,
        sigint,
        attachments,
    };

    if let Some((pending, decisions)) = decided {
        if !session.args.json {
            sessions::show_decisions(style, &pending, &decisions);
        }
        return session.ask(&mut Vec::new(), Turn::Decide(decisions)).await;
    }
    if let Some(question) = session.args.question.clone() {
        return session.ask(&mut Vec::new(), Turn::Question(question)).await;
    }
    let show_prompt = std::io::stdin().is_terminal();
    let mut transcript = Vec::new();
    loop {
        match read_question(&input, &mut session.sigint, style, show_prompt).await {
            Prompted::Question(question) => {
                let exit = session.ask(&mut transcript, Turn::Question(question)).await;
                // The session waits for a decision: no question can go on until it is made.
                if exit == Exit::AwaitingApproval {
                    return exit;
                }
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
    fail(args, style, Exit::Config, "config_error", message)
}

/// Reports an error that ends eugene before any question (on stderr, and as JSON lines with
/// `--json`): `kind` as [`output::print_error_json`] takes it.
fn fail(args: &Args, style: Style, exit: Exit, kind: &str, message: &str) -> Exit {
    if message.starts_with("eugene") {
        eprintln!("{message}");
    } else {
        eprintln!("{} {message}", style.red("eugene:"));
    }
    if args.json {
        output::print_error_json(kind, message, None);
        Summary {
            words: &format!("error: {message}"),
            code: kind,
            exit,
            stats: &RunStats::default(),
            answer: None,
            output: None,
            pending: None,
        }
        .print_json();
    }
    exit
}

/// What a run is asked to do.
enum Turn {
    /// Answer a question (the conversation's next one).
    Question(String),
    /// Go on from the session's pause with these decisions.
    Decide(Vec<(String, Decision)>),
}

impl Session {
    /// Runs one question on top of `transcript` (which grows by the run when it did not fail), or
    /// in the `--session`, or goes on from the session's pause; renders how it ended, and returns
    /// the exit status that ending has.
    async fn ask(&mut self, transcript: &mut Vec<Message>, turn: Turn) -> Exit {
        // A session that waits for a decision takes no question until it has one.
        if let (Some(kept), Turn::Question(_)) = (&self.kept, &turn) {
            match kept.paused().await {
                Ok(Some(state)) => return kept.still_waiting(self.style, self.args.json, &state),
                Ok(None) => {}
                Err(error) => return self.failed(AgentError::Session(error), RunStats::default()),
            }
        }
        let token = CancellationToken::new();
        *self.current.lock().unwrap() = token.clone();
        self.renderer.start_run();
        let runtime = self.base.clone().cancellation(token.clone());
        let output = self.schema.as_ref().map(Schema::output_type);
        let kept = self
            .kept
            .as_ref()
            .map(|k| (k.store.clone(), k.name.clone()));
        let mut conversation = transcript.clone();
        let attachments = std::mem::take(&mut self.attachments);
        let run = async move {
            let request = match (&kept, turn) {
                (Some((store, name)), Turn::Question(question)) => {
                    attach::request(runtime.run(question), attachments)
                        .in_session(store, name.clone())
                }
                (Some((store, name)), Turn::Decide(decisions)) => {
                    runtime.decide(decisions).in_session(store, name.clone())
                }
                (None, Turn::Question(question)) => {
                    conversation.push(attach::message(question, attachments));
                    runtime.resume(conversation)
                }
                (None, Turn::Decide(_)) => unreachable!("--approve and --deny require --session"),
            };
            match output {
                Some(output) => request.output(output).await,
                None => request.await,
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
                let value = self.schema.as_ref().and(outcome.output.clone());
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
                let pending = match &outcome.finish {
                    FinishReason::AwaitingApproval { pending } => Some(pending.as_slice()),
                    _ => None,
                };
                if self.args.json {
                    Summary {
                        words: &words,
                        code,
                        exit,
                        stats: &stats,
                        answer: outcome.final_text.as_deref().filter(|_| !blank),
                        output: value.as_ref(),
                        pending,
                    }
                    .print_json();
                } else {
                    if let Some(value) = &value {
                        let text = serde_json::to_string_pretty(value);
                        println!("{}", text.unwrap_or_else(|_| value.to_string()));
                    }
                    let steps = match outcome.steps {
                        1 => "1 step".to_owned(),
                        n => format!("{n} steps"),
                    };
                    let mut tokens = output::token_words(&outcome.usage);
                    if let Some(cost) = output::cost_words(&outcome.cost, &outcome.usage) {
                        tokens = format!("{tokens} · {cost}");
                    }
                    eprintln!("{}", style.dim(&format!("[{words} · {steps} · {tokens}]")));
                }
                if let Some(pending) = pending {
                    self.paused(pending);
                }
                *transcript = outcome.transcript;
                exit
            }
            Err(error) => self.failed(error, stats),
        }
    }

    /// Says what a paused run waits on and how to go on (stderr).
    fn paused(&self, pending: &[PendingCall]) {
        match &self.kept {
            Some(kept) => kept.print_paused(self.style, pending),
            // Only --session makes eugene's hook pause; a skill may still ask by itself.
            None => eprintln!(
                "{} the run stopped for a decision on {}, and without --session it cannot go on: \
                 rerun with --session NAME to keep it, or with --yes",
                self.style.yellow("eugene:"),
                sessions::calls(pending.len())
            ),
        }
    }

    /// Reports a run that failed (on stderr, and as JSON lines with `--json`), and returns the
    /// exit status it has.
    fn failed(&self, error: AgentError, stats: RunStats) -> Exit {
        let style = self.style;
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
            AgentError::Config(_) => ("config_error", Exit::Config, "check the flags".to_owned()),
            AgentError::Resume(_) => (
                "config_error",
                Exit::Config,
                "give each pending call one decision: `--session NAME` with a question shows them"
                    .to_owned(),
            ),
            AgentError::Session(StoreError::Conflict { id, .. }) => (
                "session_conflict",
                Exit::SessionConflict,
                format!(
                    "another eugene saved session `{id}` while this one ran: this run's result was \
                     not saved (what its calls did stays done); the session holds the other \
                     run's, so ask again to go on from there"
                ),
            ),
            AgentError::Session(_) => {
                let file = match &self.kept {
                    Some(kept) => kept.store.path().display().to_string(),
                    None => sessions::STORE.to_owned(),
                };
                ("session_error", Exit::Internal, format!("check {file}"))
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
                pending: None,
            }
            .print_json();
        }
        exit
    }
}
