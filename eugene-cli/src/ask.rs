//! Reading the user's lines (questions, permission answers) without blocking the runtime, and the
//! hook that asks before a skill changes anything.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use eugene::{
    SkillError,
    skills::{CancellationToken, HookVerdict, SkillHook, SkillMetadata, async_trait},
};
use serde_json::Value;
use tokio::signal::unix::Signal;

use crate::output::{Style, summarise_args};

/// Lines from stdin, read on a thread of their own one at a time when asked for, so waiting for
/// one can be abandoned (Ctrl-C) and picked up again without losing the line.
pub struct LineReader {
    ask: std::sync::mpsc::Sender<()>,
    lines: tokio::sync::mpsc::UnboundedReceiver<Option<String>>,
    asked: bool,
    ended: bool,
}

impl LineReader {
    /// Starts the reading thread.
    pub fn stdin() -> LineReader {
        let (ask, asked) = std::sync::mpsc::channel::<()>();
        let (send, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            while asked.recv().is_ok() {
                let mut line = String::new();
                let line = match std::io::stdin().lock().read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                };
                let ended = line.is_none();
                if send.send(line).is_err() || ended {
                    return;
                }
            }
        });
        LineReader {
            ask,
            lines,
            asked: false,
            ended: false,
        }
    }

    /// The next line without its line ending, or `None` at the end of input. Cancel-safe: a line
    /// asked for and not yet taken is the answer to the next call.
    pub async fn next_line(&mut self) -> Option<String> {
        if self.ended {
            return None;
        }
        if !self.asked {
            if self.ask.send(()).is_err() {
                self.ended = true;
                return None;
            }
            self.asked = true;
        }
        let line = self.lines.recv().await.flatten();
        self.asked = false;
        self.ended = line.is_none();
        line.map(|l| l.trim_end_matches(['\n', '\r']).to_owned())
    }
}

/// The current run's cancellation, shared with the hook so a question to the user gives way to
/// Ctrl-C.
pub type CurrentRun = Arc<Mutex<CancellationToken>>;

/// Asks before a skill that is not read-only runs: `[y/N/a(lways)]` on a terminal. Without a
/// terminal (and without `--yes`) such a call pauses the run when there is a `--session` to keep
/// it in ([`HookVerdict::Ask`]), and is denied when there is none.
pub struct AskFirst {
    /// `--yes`: allow everything.
    pub yes: bool,
    /// `--session`: without a terminal, pause instead of denying.
    pub pause: bool,
    /// The calls the user approved with `--approve` (skill, arguments): each lets one call of that
    /// skill with those arguments through without asking again (a terminal would).
    pub approved: Mutex<Vec<(String, Value)>>,
    /// Skills the user allowed for the rest of the session.
    pub always: Mutex<Vec<String>>,
    /// Where answers come from.
    pub input: Arc<tokio::sync::Mutex<LineReader>>,
    /// The run in progress.
    pub run: CurrentRun,
    /// How the question is coloured.
    pub style: Style,
}

#[async_trait]
impl SkillHook for AskFirst {
    /// This hook is the CLI's permission policy (destructive skills included: it asks, or
    /// `--yes` allows).
    fn decides_permissions(&self) -> bool {
        true
    }

    async fn before(
        &self,
        name: &str,
        metadata: &SkillMetadata,
        args: &Value,
    ) -> Result<HookVerdict, SkillError> {
        if metadata.is_read_only
            || self.yes
            || self.always.lock().unwrap().iter().any(|n| n == name)
        {
            return Ok(HookVerdict::Proceed);
        }
        if self.take_approved(name, args) {
            return Ok(HookVerdict::Proceed);
        }
        if !std::io::stdin().is_terminal() {
            if self.pause {
                return Ok(HookVerdict::Ask(why_ask(name, metadata)));
            }
            return Ok(HookVerdict::Deny(format!(
                "`{name}` changes things and needs the user's permission, which cannot be asked here \
                 (no terminal to ask on, and no --session to keep the run in until the user \
                 decides; the user can rerun with --yes or --session NAME). Answer without it."
            )));
        }
        let prompt = format!("Allow {name}({})? [y/N/a(lways)] ", summarise_args(args));
        eprint!("{}", self.style.yellow(&prompt));
        let _ = std::io::stderr().flush();
        let cancelled = self.run.lock().unwrap().clone();
        let answer = tokio::select! {
            line = async { self.input.lock().await.next_line().await } => line.unwrap_or_default(),
            _ = cancelled.cancelled() => {
                return Ok(HookVerdict::Deny("the user cancelled the question".into()));
            }
        };
        match answer.trim().to_lowercase().as_str() {
            "y" | "yes" => Ok(HookVerdict::Proceed),
            "a" | "always" => {
                self.always.lock().unwrap().push(name.to_owned());
                Ok(HookVerdict::Proceed)
            }
            _ => Ok(HookVerdict::Deny(format!(
                "the user did not allow `{name}`"
            ))),
        }
    }
}

impl AskFirst {
    /// Whether the user approved this call with `--approve` (and it has not run yet): it runs now,
    /// once.
    fn take_approved(&self, name: &str, args: &Value) -> bool {
        let mut approved = self.approved.lock().unwrap();
        match approved.iter().position(|(n, a)| n == name && a == args) {
            Some(at) => {
                approved.remove(at);
                true
            }
            None => false,
        }
    }
}

/// Why a call waits for the user, as the pause shows it: the skill, and what makes it need
/// permission.
fn why_ask(name: &str, metadata: &SkillMetadata) -> String {
    if metadata.is_destructive {
        format!(
            "`{name}` can do what cannot be undone (it is marked destructive), so it needs your \
             permission"
        )
    } else {
        format!("`{name}` changes things (it is not read-only), so it needs your permission")
    }
}

/// What the prompt got.
pub enum Prompted {
    /// A question.
    Question(String),
    /// Input ended (Ctrl-D).
    End,
    /// Ctrl-C twice.
    Quit,
}

/// Asks for the next question. Ctrl-C here says how to quit; a second one in a row quits.
pub async fn read_question(
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
