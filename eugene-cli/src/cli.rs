//! The command line: flags, `--help`'s text, and the exit statuses.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, ValueEnum};
use eugene::{
    llm::{Effort, ThinkingConfig},
    run::OutputMode,
};

/// What `--help` says after the flags: where the model comes from, the environment, the exit
/// statuses and the keys of interactive mode.
const AFTER_HELP: &str = "\
Provider order (the first one configured wins; --provider picks one):
  1. Anthropic         ANTHROPIC_API_KEY is set
  2. OpenAI-compatible OPENAI_API_KEY and/or OPENAI_BASE_URL is set (OPENAI_API=responses, or
                       --provider openai-responses: OpenAI's Responses API)
  3. Gemini            GEMINI_API_KEY or GOOGLE_API_KEY is set
  4. Ollama            OLLAMA_HOST is set, or Ollama answers on 127.0.0.1:11434

Environment:
  ANTHROPIC_API_KEY    key for Anthropic
  ANTHROPIC_BASE_URL   another Anthropic endpoint (http:// or https://)
  OPENAI_API_KEY       key for OpenAI or a compatible server (not needed by local servers)
  OPENAI_BASE_URL      a compatible server, e.g. http://127.0.0.1:8080/v1 (llama.cpp, vLLM,
                       DeepSeek); must start with http:// or https://
  OPENAI_API           which API the OpenAI provider speaks: chat (Chat Completions, the default)
                       or responses (the Responses API: reasoning carried across turns)
  GEMINI_API_KEY       key for Google's Gemini API (or GOOGLE_API_KEY)
  GEMINI_BASE_URL      another Gemini endpoint, with the API version (http(s)://host/v1beta)
  OLLAMA_HOST          where Ollama listens (host:port)
  AGENT_MODEL          the model, unless --model (default: claude-sonnet-4-5, gpt-4.1,
                       gemini-2.5-flash, llama3.2)
  NO_COLOR             set and not empty: no colours (also --color never)
  OTEL_EXPORTER_OTLP_ENDPOINT  with --otlp and no ENDPOINT: the collector (default
                       http://localhost:4318); OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends over gRPC
                       (default port 4317); OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME
                       (default eugene) and the other OTEL_* variables apply too
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT  true: as --otlp-content

Exit statuses:
  0    answered (in --plan mode: the plan is ready); interactive mode: input ended
  1    internal error
  2    usage or configuration error (bad flag, no provider, bad URL, no such workspace,
       a --json-schema file that is missing, not JSON or not a valid JSON Schema, an --attach
       file that is missing, over 20 MiB or not the media its bytes start as, a --session
       name with other characters, --approve/--deny that leave a pending call without a
       decision or name a call that is not pending)
  3    provider error: the model could not be reached or answered with an error
  4    the model stopped without an answer (empty answer, token limit of an answer, refusal)
  5    a budget ran out (--max-steps, --max-tokens, --max-cost, --max-time, the conversation's length, or
       --output-retries: the answer did not follow the --json-schema)
  6    stuck: the model repeated the same call, or got the same error, 3 times in a row
  7    4 calls in a row were denied permission (answered no, or no terminal to ask on and no
       --session to pause in)
  8    waiting for approval: with --session and no terminal, a call that needs permission paused
       the run; the session is saved, and stderr shows the calls and the commands to go on
  9    the session changed meanwhile: another eugene saved it while this one ran, so this run's
       result was not saved (the other's is kept; what this run's calls did stays done)
  10   eugene eval: some case's pass rate is below --min-pass-rate
  130  cancelled with Ctrl-C

Evals: eugene eval FILE runs a dataset of cases against the model, N times each, and reports pass
rates, tokens, cost and latency (eugene eval --help). Only as the first argument is `eval` a
command; to ask the question `eval`, write eugene -- eval.

Console: eugene console [--port 8787] serves the agent on 127.0.0.1 with a page for people
(start runs, watch them, approve, deny or edit the calls that change things) and prints its
address with a fresh token; see eugene console --help.

MCP servers behind OAuth: eugene mcp login URL prints the URL to open in a browser, waits for
the browser to come back to 127.0.0.1 and keeps the tokens (one file per server, mode 0600) in
--token-dir DIR, else $EUGENE_CONFIG_DIR/mcp-tokens, else ~/.config/eugene/mcp-tokens. Then
--mcp URL (repeatable) adds that server's tools to a run; without tokens it says how to log in.

Sessions (--session NAME): the conversation is kept in
$EUGENE_STATE_DIR/sessions/ (default ~/.local/state/eugene/sessions/, one file per workspace),
outside the workspace, where the commands eugene runs cannot change what a paused run will do;
each question continues it, in this process or a later one. On a terminal, calls that need permission are asked about as always ([y/N/a(lways)]).
Without one (and without --yes) such a call pauses the run instead of being denied: eugene saves
the session, prints the pending calls with the exact commands, and exits with status 8. Go on with
  eugene --session NAME --approve ID      (the call runs, once)
  eugene --session NAME --deny ID [--reason TEXT]
giving each pending call one decision (the flags repeat), and --workspace DIR again if the first
command had one. Until then the session takes no new question (status 8 again). Without
--session, such calls are denied: there would be nowhere to keep the paused run.

Agent Skills (folders with a SKILL.md: instructions, and scripts/ or references/ beside it):
eugene loads <workspace>/.agents/skills/ when it exists, then each --skills DIR in the order
given; the first skill of a name wins. The model sees each skill's name and description and
loads one with the load_skill tool, which reads only inside that skill's folder. A skill that
breaks the format's rules is not loaded and is reported on stderr as
  eugene: skill not loaded: <dir>/<name>/SKILL.md:<line>: <what is wrong> (rule `<rule>`)
and the others load. A skill's scripts run only through run_shell, which asks first (or --yes);
its sandbox may read and run what is in the skills' folders, not write there.

Keys: Ctrl-C cancels the question being answered; at the prompt, Ctrl-C twice or Ctrl-D quits.
Answers go to stdout; tool calls, progress and errors to stderr. With --json-schema, only the
JSON value goes to stdout (one per question), and the model's text goes to stderr.";

/// Ask an agent about the project in front of you.
#[derive(Parser, Debug)]
#[command(
    name = "eugene",
    version,
    about = "Ask an agent about the project in front of you.",
    long_about = "Ask an agent about the project in front of you. It reads, lists and searches the \
                  workspace with its skills; writes, patches and shell commands run only when you \
                  allow them (a prompt on a terminal, --yes, or --approve once a --session run \
                  paused for them).",
    after_help = AFTER_HELP
)]
pub struct Args {
    /// The question. Without one, eugene asks for questions one after another.
    pub question: Option<String>,
    /// Which provider: anthropic, openai, openai-responses, gemini or ollama [default: the first
    /// configured, see below].
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// The model [default: AGENT_MODEL, else the provider's usual one].
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// The most model calls for one question.
    #[arg(long, value_name = "N", default_value_t = 25)]
    pub max_steps: usize,
    /// The most tokens (in and out, all model calls together) for one question.
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    pub max_tokens: u64,
    /// The most US dollars the model calls for one question may cost, priced by the built-in
    /// table (or --prices); the model must have a price there.
    #[arg(long, value_name = "DOLLARS", value_parser = parse_dollars)]
    pub max_cost: Option<f64>,
    /// A JSON price table (genai-prices' format) whose prices go before the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<std::path::PathBuf>,
    /// The most tokens of one answer.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub max_answer_tokens: u32,
    /// The most seconds one question may take, all model and tool calls together (0: no limit).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub max_time: u64,
    /// Seconds to wait for an answer to begin (with --no-stream: for the whole answer), and the
    /// longest silence within a streamed answer.
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// How many times a failed model call is tried again (a time-out, a dropped connection,
    /// HTTP 429/5xx).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(0..=10))]
    pub retries: u32,
    /// Answers arrive whole instead of as they are written.
    #[arg(long)]
    pub no_stream: bool,
    /// Let the model think first: a token budget (e.g. --think=8000) or low, medium, high;
    /// --think alone is 4096. The thinking is shown dimmed on stderr, never as the answer.
    #[arg(long, value_name = "BUDGET", num_args = 0..=1, require_equals = true,
          default_missing_value = "4096", value_parser = parse_thinking)]
    pub think: Option<ThinkingConfig>,
    /// Send FILE with the question (repeatable): an image (PNG, JPEG, GIF, WebP), a PDF, a sound
    /// or a text file, its type read from its bytes, at most 20 MiB. One that is missing, larger,
    /// of another type, a corrupt image or one of too many pixels is a usage error (exit status
    /// 2): nothing is sent.
    #[arg(long, value_name = "FILE", requires = "question")]
    pub attach: Vec<PathBuf>,
    /// The directory the agent works in [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Also load the Agent Skills in DIR (repeatable): a folder of skill folders (each with a
    /// SKILL.md), or one skill's folder. <workspace>/.agents/skills/ is loaded without it.
    #[arg(long, value_name = "DIR")]
    pub skills: Vec<PathBuf>,
    /// Also use the tools of the MCP server at URL (repeatable), over streamable HTTP with the
    /// OAuth tokens `eugene mcp login URL` kept (an expired access token is refreshed).
    #[arg(long, value_name = "URL")]
    pub mcp: Vec<String>,
    /// Where --mcp looks for the tokens [default: $EUGENE_CONFIG_DIR/mcp-tokens, else
    /// ~/.config/eugene/mcp-tokens].
    #[arg(long, value_name = "DIR", requires = "mcp")]
    pub token_dir: Option<PathBuf>,
    /// Plan first: only read-only skills run, and the answer is a plan to approve.
    #[arg(long)]
    pub plan: bool,
    /// Allow every skill without asking (writes, patches, shell).
    #[arg(long)]
    pub yes: bool,
    /// Keep the conversation as session NAME in $EUGENE_STATE_DIR/sessions/ (default
    /// ~/.local/state/eugene/sessions/): each question continues it, across runs of eugene.
    /// Without a terminal, a call that needs permission pauses the run (exit status 8) instead of
    /// being denied. NAME: 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a
    /// letter or digit. With --json-schema each answer is a typed value (give the same
    /// --json-schema again with --approve or --deny).
    #[arg(long, value_name = "NAME", value_parser = parse_session_name)]
    pub session: Option<String>,
    /// Approve the paused call ID of the --session (repeatable): it runs, once, and the run goes
    /// on. Give no question; every pending call needs --approve or --deny.
    #[arg(
        long,
        value_name = "ID",
        requires = "session",
        conflicts_with = "question"
    )]
    pub approve: Vec<String>,
    /// Deny the paused call ID of the --session (repeatable): the model is told it was denied,
    /// and the run goes on. Give no question.
    #[arg(
        long,
        value_name = "ID",
        requires = "session",
        conflicts_with = "question"
    )]
    pub deny: Vec<String>,
    /// Why the --deny calls are denied, for the model [default: the user did not allow SKILL].
    #[arg(long, value_name = "TEXT", requires = "deny")]
    pub reason: Option<String>,
    /// Print events as JSON lines on stdout, ending with a "finished" summary, for scripts
    /// (its "output" holds the --json-schema value).
    #[arg(long)]
    pub json: bool,
    /// Show the model's wire on stderr: -v each request and response (URL, size, status, time)
    /// and every retry, -vv also the headers (keys redacted), bodies (clipped) and streamed
    /// events. The same as RUST_LOG=agent_llm::wire=debug (or =trace) in a program of your own.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Export the run's spans (invoke_agent, chat, execute_tool: the OpenTelemetry GenAI
    /// conventions) to an OpenTelemetry collector over OTLP: to ENDPOINT (--otlp=URL, the
    /// collector's base URL), else where OTEL_EXPORTER_OTLP_ENDPOINT says, else
    /// http://localhost:4318. A collector that cannot be reached costs one warning on stderr,
    /// and waiting at most 5 s at the end for the last spans; a bad URL is a usage error.
    #[arg(long, value_name = "ENDPOINT", num_args = 0..=1, require_equals = true,
          default_missing_value = "")]
    pub otlp: Option<String>,
    /// With --otlp: record prompts, answers and tool calls on the spans (sensitive: off by
    /// default).
    #[arg(long, requires = "otlp")]
    pub otlp_content: bool,
    /// When to colour stderr: auto (on a terminal, unless NO_COLOR), always, never.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Make the model's first call use a tool: any tool (tool choice "required"), or the one
    /// named (--require-tool=list_dir; llama-cpp-python's chatml-function-calling accepts only
    /// this form). For checking that a server handles tool calls.
    #[arg(long, value_name = "NAME", num_args = 0..=1, require_equals = true,
          default_missing_value = "")]
    pub require_tool: Option<String>,
    /// End with a JSON value that follows this JSON Schema: it alone goes to stdout, pretty
    /// (the model's text goes to stderr); with --json, in the "finished" line's "output". In
    /// interactive mode each answer is such a value.
    #[arg(long, value_name = "FILE", conflicts_with = "plan")]
    pub json_schema: Option<PathBuf>,
    /// How the model is asked for the --json-schema value.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = OutputModeArg::Auto,
          requires = "json_schema")]
    pub output_mode: OutputModeArg,
    /// How many answers that do not follow the --json-schema are sent back to the model, with
    /// what is wrong, before the question ends (exit status 5).
    #[arg(long, value_name = "N", default_value_t = 2, requires = "json_schema",
          value_parser = clap::value_parser!(u32).range(0..=20))]
    pub output_retries: u32,
}

impl Args {
    /// The flags, or clap's usage error (exit status 2) for what clap's own rules miss: `--reason`
    /// without `--deny` while a question is given (clap does not require an argument that
    /// conflicts with one present).
    pub fn parse_checked() -> Args {
        let args = Args::parse();
        if args.reason.is_some() && args.deny.is_empty() {
            Args::command()
                .error(
                    ErrorKind::MissingRequiredArgument,
                    "--reason goes with --deny <ID>: it is why the denied calls were denied",
                )
                .exit();
        }
        args
    }
}

/// `--output-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputModeArg {
    /// Tool, as eugene always offers its skills (prompted if the server cannot call tools).
    Auto,
    /// A final_answer tool whose input schema is the file's; the model calls it to answer.
    Tool,
    /// The provider's structured output, strict: once the model has answered, one more turn
    /// without tools asks for the value under the schema.
    Native,
    /// The schema in the instructions; the JSON is read from the answer's text.
    Prompted,
}

impl From<OutputModeArg> for OutputMode {
    fn from(mode: OutputModeArg) -> OutputMode {
        match mode {
            OutputModeArg::Auto => OutputMode::Auto,
            OutputModeArg::Tool => OutputMode::Tool,
            OutputModeArg::Native => OutputMode::Native,
            OutputModeArg::Prompted => OutputMode::Prompted,
        }
    }
}

/// When stderr is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set and not empty.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorWhen {
    /// Whether a stream that `is_terminal` (or not) gets colours.
    pub fn colours(self, is_terminal: bool) -> bool {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => is_terminal && !no_color,
        }
    }
}

/// The longest session name.
const SESSION_NAME_MAX: usize = 64;

/// A session name: 1 to 64 ASCII letters, digits, `.`, `_` and `-`, starting with a letter or a
/// digit, so that it can be printed in a command to paste (and never looks like a flag).
pub fn parse_session_name(text: &str) -> Result<String, String> {
    let starts_well = text
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let all_allowed = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if starts_well && all_allowed && text.len() <= SESSION_NAME_MAX {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "a session name is 1 to {SESSION_NAME_MAX} ASCII letters, digits, '.', '_' or '-', \
             starting with a letter or a digit (e.g. fix-login or review.2)"
        ))
    }
}

/// `4096` → a budget of tokens; `low` / `medium` / `high` → adaptive thinking at that effort.
fn parse_thinking(text: &str) -> Result<ThinkingConfig, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "low" => Ok(ThinkingConfig::Adaptive(Effort::Low)),
        "medium" => Ok(ThinkingConfig::Adaptive(Effort::Medium)),
        "high" => Ok(ThinkingConfig::Adaptive(Effort::High)),
        number => match number.replace('_', "").parse::<u32>() {
            Ok(0) => Err("a thinking budget must be at least 1 token".into()),
            Ok(budget) => Ok(ThinkingConfig::Budget(budget)),
            Err(_) => Err(format!(
                "`{text}` is neither a token budget (e.g. 8000) nor low, medium or high"
            )),
        },
    }
}

/// How eugene's process ends. The numbers are documented in `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The question was answered (or, with `--plan`, the plan is ready).
    Answered = 0,
    /// Something inside eugene failed.
    Internal = 1,
    /// A flag, the environment or the workspace is wrong.
    Config = 2,
    /// The model could not be reached or answered with an error.
    ProviderError = 3,
    /// The model stopped without an answer.
    ProviderStop = 4,
    /// A budget ran out.
    Budget = 5,
    /// The model repeated itself.
    Stuck = 6,
    /// Too many calls were denied permission.
    Denied = 7,
    /// The run paused for a person's decision on calls (`--session`, no terminal); or the session
    /// still waits for one, and the question was not asked.
    AwaitingApproval = 8,
    /// Another eugene saved the session while this one ran: this run's result was not saved.
    SessionConflict = 9,
    /// `eugene eval`: some case's pass rate is below `--min-pass-rate`.
    EvalBelowPassRate = 10,
    /// Ctrl-C.
    Cancelled = 130,
}

impl Exit {
    /// The process's exit status.
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// `--max-cost`: a finite number of dollars, at least 0.
fn parse_dollars(text: &str) -> Result<f64, String> {
    match text.trim_start_matches('$').parse::<f64>() {
        Ok(d) if d.is_finite() && d >= 0.0 => Ok(d),
        _ => Err(format!("`{text}` is not an amount of dollars (e.g. 0.50)")),
    }
}
