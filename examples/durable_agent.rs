//! A durable agent: served as a Restate virtual object, so a run survives the death of the process
//! running it, and waits for a person's approval as long as it takes.
//!
//! ```sh
//! restate-server &                                    # Restate: ingress :8080, admin :9070
//! cargo run --example durable_agent -- --workspace /tmp/notes      # this service on :9080
//! restate deployments register http://127.0.0.1:9080  # or: curl localhost:9070/deployments --json '{"uri": "http://127.0.0.1:9080"}'
//! curl localhost:8080/Agent/my-session/run --json '"Write a note about Restate, then publish it."'
//! curl localhost:8080/Agent/my-session/pending        # publishing waits for a person
//! curl localhost:8080/Agent/my-session/decide --json '{"call_1": {"decision": "approve"}}'
//! ```
//!
//! The model is the one the environment names: `ANTHROPIC_API_KEY`, else `OPENAI_API_KEY` and/or
//! `OPENAI_BASE_URL` (any OpenAI-compatible server), else Ollama (`OLLAMA_HOST`, default
//! `127.0.0.1:11434`); `AGENT_MODEL` picks the model. Kill this process at any point (`kill -9`)
//! and start it again: Restate replays the run's journal into it, and the run goes on where it was.
//!
//! Five skills: `write_note` writes `notes/NAME.md` in the workspace (idempotent: writing the same
//! note again changes nothing, so a durable run runs it again after a crash), `publish`
//! (destructive, so it asks for approval) marks one published, `charge` posts a charge to the
//! payments API `--payments URL` names, with the call's idempotency key as the `Idempotency-Key`
//! header (`--no-key` leaves it out, to show the duplicate a repeat then makes), `scribe`, a second agent used as a skill, which
//! writes and publishes notes with its own `write_note` and `publish` (its model and tool calls
//! are steps of the run's journal too, and its `publish` waits for a decision as well, sent for
//! the call's path id, e.g. `p1/c2`), and `run_code` (code mode), whose JavaScript programs call
//! the other three, each call a step of the journal. `write_note` and `publish` log what they did
//! to `notes/log`, one line each, so a run shows on disk what ran how often. `--events FILE` appends the run's events to FILE, one
//! line each, with this process's id. `--hold NAME` makes `write_note` for NAME log
//! `started NAME`, then wait until `notes/NAME.go` exists before it writes (and `publish` for
//! NAME log `started publishing NAME` and wait the same): a way to kill the process in the middle
//! of a batch of calls, or of a call (the tests do). `--typed` makes every run end with a
//! `Summary` (`{"written": [...], "summary": "..."}`), in the outcome's `output`. With
//! `OTEL_EXPORTER_OTLP_ENDPOINT` set, the runs' spans are exported there over OTLP (agent-otel,
//! read from the standard `OTEL_*` variables).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_code::CodeMode;
use agent_restate::DurableAgent;
use clap::Parser;
use eugene::{
    AgentEvent, AgentRuntime, AnthropicProvider, LlmProvider, OpenAiProvider, Permission,
    PermissionGate, Registry, SkillContext, SkillError, run::OutputType, skill,
    skills::SkillMetadata,
};

#[derive(Parser)]
#[command(about = "Serve a durable agent to Restate")]
struct Args {
    /// Where to listen for Restate (HTTP/2).
    #[arg(long, default_value = "127.0.0.1:9080")]
    listen: SocketAddr,
    /// The folder the skills write in.
    #[arg(long, default_value = ".")]
    workspace: PathBuf,
    /// Append the run's events to this file, one line each.
    #[arg(long)]
    events: Option<PathBuf>,
    /// `write_note` for this name waits for `notes/NAME.go` before it writes.
    #[arg(long)]
    hold: Option<String>,
    /// Every run ends with a `Summary` (the outcome's `output`).
    #[arg(long)]
    typed: bool,
    /// The payments API `charge` posts to (`POST URL/charges`); without it `charge` fails.
    #[arg(long)]
    payments: Option<String>,
    /// `charge` sends no `Idempotency-Key` (to show what a repeat does without one).
    #[arg(long)]
    no_key: bool,
}

/// Where `charge` sends its charges, and whether with the call's idempotency key.
struct Payments {
    url: String,
    client: reqwest::Client,
    send_key: bool,
}

/// What a typed run ends with (`--typed`).
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // Read by the check, which deserializes the model's answer into it.
struct Summary {
    /// The names of the notes written in this run.
    written: Vec<String>,
    /// One sentence on what was done.
    summary: String,
}

/// The note `write_note` waits for, if any (`--hold`).
struct Hold(String);

/// Write a note into `notes/NAME.md` in the workspace, replacing any note of that name.
///
/// # Arguments
/// * `name` - The note's name: letters, digits, `-` and `_`.
/// * `text` - What the note says.
#[skill(idempotent, register = false)]
async fn write_note(ctx: &SkillContext, name: String, text: String) -> Result<String, SkillError> {
    check_name(&name)?;
    let notes = ctx.workspace_root().join("notes");
    std::fs::create_dir_all(&notes)?;
    if ctx.extension::<Hold>().is_some_and(|hold| hold.0 == name) {
        log(ctx, &format!("started {name}"))?;
        while !notes.join(format!("{name}.go")).exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    std::fs::write(notes.join(format!("{name}.md")), &text)?;
    log(ctx, &format!("wrote {name}"))?;
    Ok(format!("wrote notes/{name}.md ({} bytes)", text.len()))
}

/// Charge a customer through the payments API.
///
/// # Arguments
/// * `to` - Who is charged.
/// * `cents` - How much, in cents.
#[skill(idempotent, register = false)]
async fn charge(ctx: &SkillContext, to: String, cents: u64) -> Result<String, SkillError> {
    let Some(payments) = ctx.extension::<Payments>() else {
        return Err(SkillError::tool(
            "no payments API is configured (--payments URL)",
        ));
    };
    let mut request = payments
        .client
        .post(format!("{}/charges", payments.url))
        .json(&serde_json::json!({"to": to, "cents": cents}));
    // The same key on every attempt of this call: the API records the charge once.
    if let (true, Some(key)) = (payments.send_key, ctx.idempotency_key()) {
        request = request.header("Idempotency-Key", key);
    }
    let answer = request
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| SkillError::Transient(format!("the payments API failed: {e}")))?;
    let charge: serde_json::Value = answer
        .json()
        .await
        .map_err(|e| SkillError::tool(format!("the payments API answered no JSON: {e}")))?;
    Ok(format!("charged {cents} to {to}: {}", charge["id"]))
}

/// Publish a note: it can no longer be changed.
///
/// # Arguments
/// * `name` - The note to publish.
#[skill(destructive, register = false)]
async fn publish(ctx: &SkillContext, name: String) -> Result<String, SkillError> {
    check_name(&name)?;
    if !ctx
        .workspace_root()
        .join(format!("notes/{name}.md"))
        .exists()
    {
        return Err(SkillError::tool(format!("there is no note `{name}`")));
    }
    if ctx.extension::<Hold>().is_some_and(|hold| hold.0 == name) {
        log(ctx, &format!("started publishing {name}"))?;
        let go = ctx.workspace_root().join(format!("notes/{name}.go"));
        while !go.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    log(ctx, &format!("published {name}"))?;
    Ok(format!("published {name}"))
}

fn check_name(name: &str) -> Result<(), SkillError> {
    let fine = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    match fine {
        true => Ok(()),
        false => Err(SkillError::bad_args("name", "use letters, digits, - and _")),
    }
}

/// One line in `notes/log`, written at once (appends of one line do not interleave).
fn log(ctx: &SkillContext, line: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ctx.workspace_root().join("notes/log"))?;
    file.write_all(format!("{line}\n").as_bytes())
}

/// The model the environment names.
fn provider() -> Arc<dyn LlmProvider> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let model = env("AGENT_MODEL");
    if let Some(key) = env("ANTHROPIC_API_KEY") {
        let model = model.unwrap_or_else(|| "claude-sonnet-4-5".into());
        let mut provider = AnthropicProvider::new(key, model);
        if let Some(base) = env("ANTHROPIC_BASE_URL") {
            provider = provider.with_base_url(base);
        }
        return Arc::new(provider);
    }
    let (key, base) = (env("OPENAI_API_KEY"), env("OPENAI_BASE_URL"));
    if key.is_some() || base.is_some() {
        let model = model.unwrap_or_else(|| "gpt-4.1".into());
        let mut provider = OpenAiProvider::new(key.unwrap_or_default(), model);
        if let Some(base) = base {
            provider = provider.with_base_url(base);
        }
        return Arc::new(provider);
    }
    let host = env("OLLAMA_HOST").unwrap_or_else(|| "127.0.0.1:11434".into());
    let model = model.unwrap_or_else(|| "qwen3".into());
    Arc::new(OpenAiProvider::new("", model).with_base_url(format!("http://{host}/v1")))
}

/// One line per event: `PID KIND STEP DETAIL`.
fn describe(event: &AgentEvent) -> Option<String> {
    Some(match event {
        AgentEvent::AssistantText { step, .. } => format!("assistant_text {step}"),
        AgentEvent::ToolCall { step, call } => format!("tool_call {step} {}", call.id),
        AgentEvent::ToolResult { step, result } => format!("tool_result {step} {}", result.call_id),
        AgentEvent::Usage { step, .. } => format!("usage {step}"),
        AgentEvent::AwaitingApproval { step, pending } => {
            let ids: Vec<&str> = pending.iter().map(|p| p.call.id.as_ref()).collect();
            format!("awaiting_approval {step} {}", ids.join(","))
        }
        AgentEvent::TurnFinished { step, finish } => match finish {
            Some(finish) => format!("turn_finished {step} {finish:?}"),
            None => format!("turn_finished {step}"),
        },
        _ => return None,
    })
}

/// Destructive calls wait for a person; the others run.
fn ask_if_destructive(name: &str, metadata: &SkillMetadata) -> Permission {
    if metadata.is_destructive {
        Permission::Ask(format!("`{name}` cannot be undone"))
    } else {
        Permission::Allow
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    // With OTEL_EXPORTER_OTLP_ENDPOINT set, the runs' spans go to that collector (agent-otel):
    // every attempt at an invocation, on this instance or another, in one trace.
    let _otel = std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT").map(|_| {
        agent_otel::Otlp::from_env()
            .service_name("durable_agent")
            .install()
            .unwrap_or_else(|error| panic!("durable_agent: OpenTelemetry export: {error}"))
    });
    let provider = provider();
    let mut context = SkillContext::new(&args.workspace);
    if let Some(name) = &args.hold {
        context = context.with_extension(Hold(name.clone()));
    }
    if let Some(url) = &args.payments {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(eugene::llm::llm::tls_config().expect("TLS settings"))
            .build()
            .expect("an HTTP client");
        context = context.with_extension(Payments {
            url: url.trim_end_matches('/').to_owned(),
            client,
            send_key: !args.no_key,
        });
    }
    // A second agent, used as a skill: its model and tool calls are steps of the same journal.
    let mut scribe_skills = Registry::new();
    scribe_skills
        .add(WriteNoteSkill)
        .add(PublishSkill)
        .add(ChargeSkill);
    scribe_skills.with_hook(PermissionGate::with(ask_if_destructive));
    let scribe = AgentRuntime::from_shared(provider.clone(), Arc::new(scribe_skills))
        .system("You write the notes you are asked for.")
        .context(context.clone());
    let mut registry = Registry::new();
    registry
        .add(WriteNoteSkill)
        .add(PublishSkill)
        .add(ChargeSkill)
        .add(scribe.into_skill("scribe", "Writes the notes it is asked for."));
    // Code mode: `run_code` over the three; each call of a program is a step of the journal.
    registry.with_code_mode();
    registry.with_hook(PermissionGate::with(ask_if_destructive));
    let mut runtime = AgentRuntime::from_shared(provider, Arc::new(registry))
        .system("You keep notes. Use the tools; say briefly what you did.")
        .context(context)
        .max_steps(12);
    if let Some(path) = args.events {
        let pid = std::process::id();
        runtime = runtime.event_sink(move |event: &AgentEvent| {
            if let Some(line) = describe(event) {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path);
                if let Ok(mut file) = file {
                    let _ = file.write_all(format!("{pid} {line}\n").as_bytes());
                }
            }
        });
    }
    eprintln!(
        "durable_agent: serving the Restate object `Agent` on {}",
        args.listen
    );
    let mut agent = DurableAgent::new(runtime);
    if args.typed {
        agent = agent.output(OutputType::of::<Summary>());
    }
    agent.listen(args.listen).await;
}
