//! A run that stops for a person's decision and continues in another process.
//!
//! The agent may read freely, but a [`PermissionGate`] asks before anything destructive. When the
//! model calls `append_line`, the run pauses: its state goes to a file and the process ends. Later
//! (any process, any day), `resume` reads the state and continues with the decision.
//!
//! ```sh
//! cargo run --example approval -- pause  /tmp/run.json /tmp/work
//! cargo run --example approval -- resume /tmp/run.json /tmp/work approve   # or: deny, edit
//! ```
//!
//! The model is scripted (a [`MockProvider`]) so that the example runs offline; a real provider
//! pauses and resumes the same way. The skill counts its runs in `WORKDIR/runs`, so you can see an
//! approved call run exactly once.
//!
//! Two settings make the state safe to keep where others can write: `APPROVAL_KEY` (a secret of
//! 32 bytes or more) seals the state (`AgentRuntime::seal_states`), so an edited file is refused;
//! `APPROVAL_CLAIMS` (a file) records each pause as it is continued
//! (`AgentRuntime::pause_claims`), so the same state continued twice runs its call once.
//!
//! `APPROVAL_ATTACH` (a file: an image, a PDF...) attaches it to the goal: the paused state
//! carries its bytes, and `resume` prints the SHA-256 of each media part the model was sent.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use eugene::{
    AgentRuntime, Decision, FinishReason, Media, MockProvider, MockReply, Permission,
    PermissionGate, Registry, RunState, SkillContext, SkillError, ToolCall,
    run::{RedbSessionStore, StateKeys},
    skill,
};
use serde_json::json;

/// Append a line to `notes.txt` in the workspace.
///
/// # Arguments
/// * `line` - The text to append.
#[skill(destructive, register = false)]
async fn append_line(ctx: &SkillContext, line: String) -> Result<String, SkillError> {
    let root = ctx.workspace_root();
    let runs = std::fs::read_to_string(root.join("runs")).unwrap_or_default();
    std::fs::write(root.join("runs"), format!("{runs}x"))?;
    let notes = std::fs::read_to_string(root.join("notes.txt")).unwrap_or_default();
    std::fs::write(root.join("notes.txt"), format!("{notes}{line}\n"))?;
    Ok(format!("appended {line:?}"))
}

/// Count the lines of `notes.txt`.
#[skill(read_only, register = false)]
async fn count_lines(ctx: &SkillContext) -> Result<String, SkillError> {
    let notes = std::fs::read_to_string(ctx.workspace_root().join("notes.txt")).unwrap_or_default();
    Ok(notes.lines().count().to_string())
}

/// The agent both processes build: the same skills (by name) and the same gate.
fn runtime(workdir: &Path, model: MockProvider) -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(AppendLineSkill).add(CountLinesSkill);
    registry.with_hook(PermissionGate::with(|name, metadata| {
        if metadata.is_destructive {
            Permission::Ask(format!("`{name}` changes notes.txt"))
        } else {
            Permission::Allow
        }
    }));
    let mut runtime = AgentRuntime::new(model, registry)
        .workspace(workdir)
        .max_steps(6);
    if let Some(key) = std::env::var_os("APPROVAL_KEY") {
        let keys = StateKeys::new("approval", key.as_encoded_bytes())
            .unwrap_or_else(|error| panic!("APPROVAL_KEY: {error}"));
        runtime = runtime.seal_states(keys);
    }
    if let Some(claims) = std::env::var_os("APPROVAL_CLAIMS") {
        runtime = runtime.pause_claims(Arc::new(RedbSessionStore::open(PathBuf::from(claims))));
    }
    runtime
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["pause", state, workdir] => pause(Path::new(state), &PathBuf::from(workdir)).await,
        ["resume", state, workdir, decision] => {
            resume(Path::new(state), &PathBuf::from(workdir), decision).await
        }
        _ => Err(
            "usage: approval pause STATE WORKDIR | approval resume STATE WORKDIR \
                  approve|deny|edit"
                .into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("approval: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs until the model's destructive call, then keeps the state in `state_file`.
async fn pause(state_file: &Path, workdir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let replies = vec![MockReply::tool_calls([
        ToolCall::new("read_1", "count_lines", json!({})),
        ToolCall::new("write_1", "append_line", json!({"line": "ship it"})),
    ])];
    let runtime = runtime(workdir, MockProvider::new(replies));
    let mut goal = runtime.run("Note that we ship.");
    if let Some(file) = std::env::var_os("APPROVAL_ATTACH") {
        let media = Media::sniff(std::fs::read(&file)?)?;
        goal = goal.attach(media.named(Path::new(&file).display().to_string()));
    }
    let outcome = goal.await?;
    let FinishReason::AwaitingApproval { pending } = &outcome.finish else {
        return Err(format!("expected a pause, got {:?}", outcome.finish).into());
    };
    for call in pending {
        println!(
            "pending {} {} {}: {}",
            call.call.id, call.skill, call.call.arguments, call.reason
        );
    }
    let state = outcome.state.ok_or("a paused run has a state")?;
    std::fs::write(state_file, serde_json::to_vec_pretty(&state)?)?;
    println!("steps {} tokens {}", outcome.steps, outcome.usage.total());
    Ok(())
}

/// A new process: reads the state and continues with the decision.
async fn resume(
    state_file: &Path,
    workdir: &Path,
    decision: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let state: RunState = serde_json::from_slice(&std::fs::read(state_file)?)?;
    let decision = match decision {
        "approve" => Decision::Approve,
        "deny" => Decision::Deny("not today".into()),
        "edit" => Decision::Edit(json!({"line": "ship it on Monday"})),
        other => return Err(format!("unknown decision {other:?}").into()),
    };
    let replies = vec![
        MockReply::tool_calls([ToolCall::new("read_2", "count_lines", json!({}))]),
        MockReply::text("Done."),
    ];
    let model = MockProvider::new(replies);
    let outcome = runtime(workdir, model.clone())
        .continue_paused(state, [("write_1", decision)])
        .await?;
    for (turn, request) in model.requests().iter().enumerate() {
        for media in request.messages.iter().flat_map(|m| m.media()) {
            let bytes = media.bytes().map_or(&[][..], |b| &b[..]);
            println!(
                "sent {turn} {} {}",
                media.media_type,
                eugene::skills::digest::sha256_hex(&[bytes])
            );
        }
    }
    println!("finish {:?}", outcome.finish);
    println!("answer {}", outcome.final_text.unwrap_or_default());
    println!("steps {} tokens {}", outcome.steps, outcome.usage.total());
    for message in outcome
        .transcript
        .iter()
        .filter(|m| m.tool_call_id.is_some())
    {
        let id = message.tool_call_id.as_deref().unwrap_or_default();
        println!("result {id} {}", message.content);
    }
    Ok(())
}
