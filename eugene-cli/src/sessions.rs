//! `--session NAME`: where a session is kept, what eugene prints when its run pauses for a
//! decision (the calls, and the exact commands that go on), and the decisions `--approve` and
//! `--deny` make of a paused run.

use std::path::{Path, PathBuf};

use eugene::{
    Decision, RunState,
    run::{RedbSessionStore, SessionStore, StoreError},
    skills::PendingCall,
};

use crate::cli::{Args, Exit};
use crate::output::{self, RunStats, Style, Summary, summarise_args};

/// Where sessions are kept, as the help and the errors name it.
pub const STORE: &str = "$EUGENE_STATE_DIR/sessions/ (default ~/.local/state/eugene/sessions/)";

/// The file that keeps the sessions of `workspace`: outside the workspace, because the commands
/// eugene runs may write everything in it, and a paused run's pending calls must be the ones the
/// person approves (a command that rewrote them would pick what runs next). The shell's sandbox
/// reads and writes neither the home directory nor the system's temporary directory.
///
/// `$EUGENE_STATE_DIR`, else `$XDG_STATE_HOME/eugene`, else `~/.local/state/eugene`; in it
/// `sessions/<folder name>-<hash of the workspace's path>.redb`, one file per workspace.
pub fn store_path(workspace: &Path) -> Result<PathBuf, String> {
    let env = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let state = env("EUGENE_STATE_DIR")
        .or_else(|| env("XDG_STATE_HOME").map(|dir| dir.join("eugene")))
        .or_else(|| env("HOME").map(|home| home.join(".local/state/eugene")))
        .ok_or(
            "no place for sessions: set EUGENE_STATE_DIR (or HOME) to a folder eugene may write",
        )?;
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    Ok(state.join("sessions").join(format!(
        "{name}-{:016x}.redb",
        fnv1a(workspace.as_os_str().as_encoded_bytes())
    )))
}

/// FNV-1a, 64 bits: a hash that stays the same across Rust versions, so a workspace finds its
/// sessions again after eugene is rebuilt.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The session of this eugene: its name, its store, and how a command names it.
pub struct Kept {
    /// `--session`.
    pub name: String,
    /// The workspace's sessions ([`store_path`]).
    pub store: RedbSessionStore,
    /// The workspace as the printed commands repeat it: when `--workspace` was given, absolute.
    workspace: Option<PathBuf>,
    /// The `--skills` folders, absolute, which the printed commands repeat: the paused call may
    /// be a skill's script, which needs its folder in the shell's sandbox.
    skills: Vec<PathBuf>,
}

impl Kept {
    /// Session `name` of the store in `workspace` (absolute); `flag_given`: `--workspace` was
    /// given, so the commands repeat it, as they repeat each of `skills` (`--skills`).
    pub fn new(
        name: String,
        workspace: &Path,
        flag_given: bool,
        skills: &[PathBuf],
    ) -> Result<Kept, String> {
        Ok(Kept {
            name,
            store: RedbSessionStore::open(store_path(workspace)?),
            workspace: flag_given.then(|| workspace.to_path_buf()),
            skills: skills
                .iter()
                .map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.clone()))
                .collect(),
        })
    }

    /// The paused run the session waits on, if it does (`None` too when there is no session).
    pub async fn paused(&self) -> Result<Option<RunState>, StoreError> {
        let loaded = self.store.load(&self.name).await?;
        Ok(loaded.and_then(|l| l.data.paused))
    }

    /// `eugene [--workspace DIR] [--skills DIR]... --session NAME` and `flag ID` for each id: a
    /// command to paste.
    pub fn command(&self, flag: &str, ids: &[&str]) -> String {
        let mut words = vec!["eugene".to_owned()];
        if let Some(dir) = &self.workspace {
            words.push("--workspace".into());
            words.push(quote(&dir.to_string_lossy()));
        }
        for dir in &self.skills {
            words.push("--skills".into());
            words.push(quote(&dir.to_string_lossy()));
        }
        words.push("--session".into());
        words.push(quote(&self.name));
        for id in ids {
            words.push(flag.into());
            words.push(quote(id));
        }
        words.join(" ")
    }

    /// What to run to go on from a pause on `pending`: a line of advice, then the commands that
    /// approve them all and deny them all.
    pub fn commands(&self, pending: &[PendingCall]) -> Vec<String> {
        let ids: Vec<&str> = pending.iter().map(|p| p.call.id.as_ref()).collect();
        let mut lines = match ids.len() {
            1 => vec![
                "To go on, approve it (it runs, once) or deny it (--reason TEXT tells the model why):"
                    .to_owned(),
            ],
            n => vec![
                format!("To go on, give each of the {n} calls --approve ID or --deny ID, all in one"),
                "command (--reason TEXT tells the model why), e.g.:".to_owned(),
            ],
        };
        lines.push(format!("  {}", self.command("--approve", &ids)));
        lines.push(format!("  {}", self.command("--deny", &ids)));
        lines
    }

    /// On stderr: `header`, each call waiting (id, skill, arguments, why), and the commands.
    pub fn print_pending(&self, style: Style, header: &str, pending: &[PendingCall]) {
        eprintln!("{} {header}", style.yellow("eugene:"));
        for waiting in pending {
            eprintln!(
                "  {}  {}({})",
                style.bold(waiting.call.id.as_ref()),
                waiting.skill,
                summarise_args(&waiting.call.arguments)
            );
            eprintln!("      {}", style.dim(&waiting.reason));
        }
        for line in self.commands(pending) {
            eprintln!("{line}");
        }
    }

    /// The calls the session waits on, and the decision `--approve` / `--deny` make for each; or
    /// how eugene ends instead (status, error kind, message).
    pub async fn decide(
        &self,
        args: &Args,
    ) -> Result<(Vec<PendingCall>, Vec<(String, Decision)>), (Exit, &'static str, String)> {
        let state = match self.paused().await {
            Ok(Some(state)) => state,
            Ok(None) => {
                let message = format!(
                    "session `{}` is not waiting for a decision (it has no paused run in {}): \
                     there is nothing to --approve or --deny; ask it a question instead",
                    self.name,
                    self.store.path().display()
                );
                return Err((Exit::Config, "config_error", message));
            }
            Err(error) => return Err((Exit::Internal, "session_error", error.to_string())),
        };
        let decisions = self
            .decisions(
                state.pending(),
                &args.approve,
                &args.deny,
                args.reason.as_deref(),
            )
            .map_err(|message| (Exit::Config, "config_error", message))?;
        Ok((state.pending().to_vec(), decisions))
    }

    /// After a run paused (stderr): what it waits on, and how to go on.
    pub fn print_paused(&self, style: Style, pending: &[PendingCall]) {
        let header = format!(
            "the run is waiting for a decision on {}; session `{}` is saved.",
            calls(pending.len()),
            self.name
        );
        self.print_pending(style, &header, pending);
    }

    /// The session waits for a decision, so a question was not asked: what it waits on and how to
    /// go on (stderr; with `json`, also the `awaiting_approval` and `finished` lines). Exit
    /// status 8.
    pub fn still_waiting(&self, style: Style, json: bool, state: &RunState) -> Exit {
        if json {
            println!("{}", output::awaiting_json(state.steps, state.pending()));
            Summary {
                words: "the session is waiting for approval: the question was not asked",
                code: "awaiting_approval",
                exit: Exit::AwaitingApproval,
                stats: &RunStats::default(),
                answer: None,
                output: None,
                pending: Some(state.pending()),
            }
            .print_json();
        }
        let header = format!(
            "session `{}` is waiting for a decision on {}, so the question was not asked: \
             decide first.",
            self.name,
            calls(state.pending().len())
        );
        self.print_pending(style, &header, state.pending());
        Exit::AwaitingApproval
    }

    /// The decision for each pending call, from `--approve` and `--deny` (with `--reason`): every
    /// pending call needs exactly one, and each id given must be a pending call's. `Err` says
    /// what is wrong, naming the calls, and how to go on.
    pub fn decisions(
        &self,
        pending: &[PendingCall],
        approve: &[String],
        deny: &[String],
        reason: Option<&str>,
    ) -> Result<Vec<(String, Decision)>, String> {
        let ids: Vec<&str> = pending.iter().map(|p| p.call.id.as_ref()).collect();
        if let Some(both) = approve.iter().find(|id| deny.contains(id)) {
            return Err(format!(
                "the call `{both}` is both approved and denied: give it one decision"
            ));
        }
        let mut unknown: Vec<&str> = Vec::new();
        for id in approve.iter().chain(deny).map(String::as_str) {
            if !ids.contains(&id) && !unknown.contains(&id) {
                unknown.push(id);
            }
        }
        if !unknown.is_empty() {
            return Err(format!(
                "{} not waiting for a decision in session `{}`; the pending {}\n{}",
                match unknown.as_slice() {
                    [one] => format!("the call `{one}` is"),
                    many => format!("the calls {} are", listed(many)),
                },
                self.name,
                match pending {
                    [one] => format!("call is {}", described(one)),
                    many => format!(
                        "calls are {}",
                        many.iter().map(described).collect::<Vec<_>>().join(", ")
                    ),
                },
                self.commands(pending).join("\n")
            ));
        }
        let decided = |id: &str| approve.iter().chain(deny).any(|d| d == id);
        let missing: Vec<&PendingCall> = pending
            .iter()
            .filter(|p| !decided(p.call.id.as_ref()))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "no decision for {}: every pending call needs --approve or --deny\n{}",
                missing
                    .iter()
                    .map(|p| described(p))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.commands(pending).join("\n")
            ));
        }
        Ok(pending
            .iter()
            .map(|p| {
                let id = p.call.id.to_string();
                let decision = if approve.contains(&id) {
                    Decision::Approve
                } else {
                    Decision::Deny(reason.map_or_else(
                        || format!("the user did not allow `{}`", p.skill),
                        str::to_owned,
                    ))
                };
                (id, decision)
            })
            .collect())
    }
}

/// Before a paused run goes on: each call and what was decided, dimmed on stderr.
pub fn show_decisions(style: Style, pending: &[PendingCall], decisions: &[(String, Decision)]) {
    for (waiting, (_, decision)) in pending.iter().zip(decisions) {
        let decided = match decision {
            Decision::Deny(reason) => format!("denied: {reason}"),
            _ => "approved".to_owned(),
        };
        let line = format!(
            "→ {}({}) {decided}",
            waiting.skill,
            summarise_args(&waiting.call.arguments)
        );
        eprintln!("{}", style.dim(&line));
    }
}

/// `1 call`, `2 calls`.
pub fn calls(n: usize) -> String {
    match n {
        1 => "1 call".to_owned(),
        n => format!("{n} calls"),
    }
}

/// `` `w1` (write_file) ``.
fn described(call: &PendingCall) -> String {
    format!("`{}` ({})", call.call.id, call.skill)
}

/// `` `a`, `b` ``.
fn listed(ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `word` as one shell word: as it is when nothing in it is special, else in single quotes.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
