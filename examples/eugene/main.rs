//! eugene: an agent that answers questions about the project in front of it, with the standard
//! skills (read, list, search; writes, patches and shell when you allow them).
//!
//! ```sh
//! cargo run --example eugene -- "Which Rust edition does Cargo.toml use?"
//! cargo run --example eugene                 # interactive: ask one question after another
//! cargo run --example eugene -- --help
//! ```
//!
//! The model comes from the environment, first match wins: `ANTHROPIC_API_KEY` (and optionally
//! `ANTHROPIC_BASE_URL`); `OPENAI_API_KEY` and/or `OPENAI_BASE_URL` (OpenAI, DeepSeek, vLLM,
//! llama.cpp); `OLLAMA_HOST`, or an Ollama answering on 127.0.0.1:11434. `AGENT_MODEL` names the
//! model; the flags override all of it.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_std_tools as _; // links the standard skills, so Registry::discover() finds them
use clap::Parser;
use eugene::{
    AgentEvent, AgentRuntime, AnthropicProvider, CancellationToken, FinishReason, HookOutcome,
    LlmProvider, Message, OpenAiProvider, Registry, SkillError, SkillHook, SkillMetadata,
    async_trait,
};
use serde_json::{Value, json};

/// Ask an agent about the project in front of you.
#[derive(Parser, Debug)]
#[command(name = "eugene", version, about, long_about = None)]
struct Args {
    /// The question. Without one, eugene asks for questions one after another.
    question: Option<String>,
    /// Which provider: `anthropic`, `openai` or `ollama` (default: from the environment).
    #[arg(long)]
    provider: Option<String>,
    /// The model (default: `AGENT_MODEL`, else the provider's usual one).
    #[arg(long)]
    model: Option<String>,
    /// The most model calls for one question.
    #[arg(long, default_value_t = 25)]
    max_steps: usize,
    /// The directory the agent works in (default: the current one).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Plan first: only read-only skills run, and the answer is a plan to approve.
    #[arg(long)]
    plan: bool,
    /// Allow every skill without asking (writes, patches, shell).
    #[arg(long)]
    yes: bool,
    /// Print the events as JSON lines on stdout, for scripts.
    #[arg(long)]
    json: bool,
}

const NO_PROVIDER: &str = "eugene needs a model, and none is configured or reachable. Any one of:
  1. export ANTHROPIC_API_KEY=...            (Anthropic; ANTHROPIC_BASE_URL for a proxy)
  2. export OPENAI_API_KEY=...               (OpenAI; or OPENAI_BASE_URL=http://host:port/v1 for
                                              DeepSeek, vLLM, llama.cpp and other compatible servers)
  3. run Ollama (ollama serve), or export OLLAMA_HOST=host:port
Then pick a model with AGENT_MODEL or --model.";

/// The provider the environment and flags ask for, or `None` when nothing is configured.
async fn choose_provider(args: &Args) -> Result<Option<Arc<dyn LlmProvider>>, String> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let model = args.model.clone().or_else(|| env("AGENT_MODEL"));
    let wanted = args.provider.as_deref();
    let anthropic = || {
        let key = env("ANTHROPIC_API_KEY")?;
        let mut provider = AnthropicProvider::new(
            key,
            model.clone().unwrap_or_else(|| "claude-sonnet-4-5".into()),
        );
        if let Some(base) = env("ANTHROPIC_BASE_URL") {
            provider = provider.with_base_url(base);
        }
        Some(Arc::new(provider) as Arc<dyn LlmProvider>)
    };
    let openai = || {
        let key = env("OPENAI_API_KEY");
        let base = env("OPENAI_BASE_URL");
        if key.is_none() && base.is_none() {
            return None;
        }
        let mut provider = OpenAiProvider::new(
            key.unwrap_or_default(),
            model.clone().unwrap_or_else(|| "gpt-4.1".into()),
        );
        if let Some(base) = base {
            provider = provider.with_base_url(base);
        }
        Some(Arc::new(provider) as Arc<dyn LlmProvider>)
    };
    let ollama_host = env("OLLAMA_HOST").unwrap_or_else(|| "127.0.0.1:11434".into());
    let ollama_host = ollama_host
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let ollama_up = || async {
        matches!(
            tokio::time::timeout(
                Duration::from_millis(300),
                tokio::net::TcpStream::connect(&ollama_host)
            )
            .await,
            Ok(Ok(_))
        )
    };
    let ollama = |up: bool| {
        up.then(|| {
            let provider =
                OpenAiProvider::new("", model.clone().unwrap_or_else(|| "llama3.2".into()))
                    .with_base_url(format!("http://{ollama_host}/v1"));
            Arc::new(provider) as Arc<dyn LlmProvider>
        })
    };
    Ok(match wanted {
        Some("anthropic") => {
            Some(anthropic().ok_or("--provider anthropic needs ANTHROPIC_API_KEY")?)
        }
        Some("openai") => {
            Some(openai().ok_or("--provider openai needs OPENAI_API_KEY or OPENAI_BASE_URL")?)
        }
        Some("ollama") => Some(ollama(ollama_up().await).ok_or(format!(
            "--provider ollama: nothing answers on {ollama_host}"
        ))?),
        Some(other) => {
            return Err(format!(
                "unknown provider `{other}`: use anthropic, openai or ollama"
            ));
        }
        None => match anthropic().or_else(openai) {
            Some(provider) => Some(provider),
            None => ollama(ollama_up().await),
        },
    })
}

/// Asks before a skill that is not read-only runs: `[y/N/a(lways)]` on a terminal; without a
/// terminal such skills are denied, unless `--yes`.
struct AskFirst {
    yes: bool,
    always: Mutex<Vec<String>>,
}

#[async_trait]
impl SkillHook for AskFirst {
    async fn before(
        &self,
        name: &str,
        metadata: &SkillMetadata,
        args: &Value,
    ) -> Result<HookOutcome, SkillError> {
        if metadata.is_read_only
            || self.yes
            || self.always.lock().unwrap().iter().any(|n| n == name)
        {
            return Ok(HookOutcome::Proceed);
        }
        if !std::io::stdin().is_terminal() {
            return Ok(HookOutcome::Deny(format!(
                "`{name}` changes things and needs the user's permission, which cannot be asked here \
                 (no terminal; the user can rerun with --yes). Answer without it."
            )));
        }
        let prompt = format!("Allow {name}({})? [y/N/a(lways)] ", summarise_args(args));
        let answer = tokio::task::spawn_blocking(move || {
            eprint!("\x1b[33m{prompt}\x1b[0m");
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .map(|_| line.trim().to_lowercase())
                .unwrap_or_default()
        })
        .await
        .unwrap_or_default();
        match answer.as_str() {
            "y" | "yes" => Ok(HookOutcome::Proceed),
            "a" | "always" => {
                self.always.lock().unwrap().push(name.to_owned());
                Ok(HookOutcome::Proceed)
            }
            _ => Ok(HookOutcome::Deny(format!(
                "the user did not allow `{name}`"
            ))),
        }
    }
}

/// `path=src/main.rs, content=…` — each argument, cut short.
fn summarise_args(args: &Value) -> String {
    let Some(map) = args.as_object() else {
        return short(&args.to_string(), 60);
    };
    map.iter()
        .map(|(k, v)| {
            format!(
                "{k}={}",
                short(
                    v.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| v.to_string())
                        .as_str(),
                    40
                )
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > max || line.len() < text.len() {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// Renders events: the answer streamed on stdout, tool calls and results dimmed on stderr; or
/// JSON lines.
fn render(json_lines: bool) -> impl Fn(&AgentEvent) + Send + Sync + 'static {
    move |event: &AgentEvent| {
        if json_lines {
            println!("{}", event_json(event));
            return;
        }
        match event {
            AgentEvent::TextDelta { text, .. } => {
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
            AgentEvent::ToolCall { call, .. } => {
                eprintln!(
                    "\x1b[2m→ {}({})\x1b[0m",
                    call.name,
                    summarise_args(&call.arguments)
                );
            }
            AgentEvent::ToolResult { result, .. } => {
                let mark = if result.is_error() { "✗" } else { "✓" };
                eprintln!("\x1b[2m  {mark} {}\x1b[0m", short(&result.content(), 100));
            }
            AgentEvent::TurnFinished { finish: None, .. } => {}
            AgentEvent::Retry {
                attempt,
                delay,
                error,
                ..
            } => {
                eprintln!("\x1b[2m  retry {attempt} in {delay:?}: {error}\x1b[0m");
            }
            AgentEvent::Compacted { removed, .. } => {
                eprintln!("\x1b[2m  (compacted {removed} messages)\x1b[0m")
            }
            _ => {}
        }
    }
}

fn event_json(event: &AgentEvent) -> Value {
    match event {
        AgentEvent::TextDelta { step, text } => {
            json!({"event": "text_delta", "step": step, "text": text})
        }
        AgentEvent::AssistantText { step, text } => {
            json!({"event": "assistant_text", "step": step, "text": text})
        }
        AgentEvent::ToolCall { step, call } => {
            json!({"event": "tool_call", "step": step, "id": call.id, "name": call.name, "arguments": call.arguments})
        }
        AgentEvent::ToolResult { step, result } => {
            json!({"event": "tool_result", "step": step, "id": result.call_id, "name": result.name, "is_error": result.is_error(), "content": result.content()})
        }
        AgentEvent::Usage { step, usage, total } => {
            json!({"event": "usage", "step": step, "usage": usage, "total": total})
        }
        AgentEvent::Compacted {
            step,
            removed,
            kept,
            summary_chars,
        } => {
            json!({"event": "compacted", "step": step, "removed": removed, "kept": kept, "summary_chars": summary_chars})
        }
        AgentEvent::Retry {
            step,
            attempt,
            delay,
            error,
        } => {
            json!({"event": "retry", "step": step, "attempt": attempt, "delay_ms": delay.as_millis() as u64, "error": error})
        }
        AgentEvent::TurnFinished { step, finish } => {
            json!({"event": "turn_finished", "step": step, "finish": finish.as_ref().map(|f| format!("{f:?}"))})
        }
        other => json!({"event": "other", "debug": format!("{other:?}")}),
    }
}

fn finish_line(finish: &FinishReason) -> String {
    match finish {
        FinishReason::NoMoreToolCalls => "done".into(),
        FinishReason::PlanPending { .. } => {
            "plan ready (rerun without --plan to carry it out)".into()
        }
        other => format!("{other:?}"),
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let provider = match choose_provider(&args).await {
        Ok(Some(provider)) => provider,
        Ok(None) => {
            eprintln!("{NO_PROVIDER}");
            std::process::exit(2);
        }
        Err(message) => {
            eprintln!("eugene: {message}");
            std::process::exit(2);
        }
    };
    let workspace = args.workspace.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut registry = match Registry::discover() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("eugene: {error}");
            std::process::exit(1);
        }
    };
    registry.with_hook(AskFirst {
        yes: args.yes,
        always: Mutex::new(Vec::new()),
    });
    let base = AgentRuntime::from_shared(provider, Arc::new(registry))
        .system(format!(
            "You are eugene, a careful assistant for the software project in {}. Use the tools to look \
             before you answer; quote what you find. Answer briefly.",
            workspace.display()
        ))
        .workspace(workspace)
        .max_steps(args.max_steps)
        .plan_mode(args.plan)
        .streaming(true)
        .event_sink(render(args.json));

    let mut transcript: Vec<Message> = Vec::new();
    let interactive = args.question.is_none();
    let mut next = args.question.clone();
    loop {
        let question = match next.take() {
            Some(question) => question,
            None if interactive => {
                eprint!("\x1b[1m? \x1b[0m");
                let _ = std::io::stderr().flush();
                let mut line = String::new();
                match std::io::stdin().lock().read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) if line.trim().is_empty() => continue,
                    Ok(_) => line.trim().to_owned(),
                }
            }
            None => return,
        };
        transcript.push(Message::user(question));
        let token = CancellationToken::new();
        let ctrl_c = tokio::spawn({
            let token = token.clone();
            async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    token.cancel();
                    eprintln!("\n\x1b[2m(cancelling; press Ctrl-C again to quit)\x1b[0m");
                    if tokio::signal::ctrl_c().await.is_ok() {
                        std::process::exit(130);
                    }
                }
            }
        });
        let result = base
            .clone()
            .cancellation(token)
            .resume(transcript.clone())
            .await;
        ctrl_c.abort();
        match result {
            Ok(outcome) => {
                if !args.json {
                    println!();
                    let u = outcome.usage;
                    // Some servers (llama-cpp-python's among them) report no usage when streaming.
                    let tokens = if u.input_tokens + u.output_tokens == 0 {
                        "tokens not reported".to_owned()
                    } else if u.cache_read_tokens > 0 {
                        format!(
                            "{} in / {} out tokens · {} cached",
                            u.input_tokens, u.output_tokens, u.cache_read_tokens
                        )
                    } else {
                        format!("{} in / {} out tokens", u.input_tokens, u.output_tokens)
                    };
                    eprintln!(
                        "\x1b[2m[{} · {} steps · {tokens}]\x1b[0m",
                        finish_line(&outcome.finish),
                        outcome.steps,
                    );
                }
                transcript = outcome.transcript;
            }
            Err(error) => {
                eprintln!("eugene: {error}");
                transcript.pop(); // the question that failed; ask again
                if !interactive {
                    std::process::exit(1);
                }
            }
        }
        if !interactive {
            return;
        }
    }
}
