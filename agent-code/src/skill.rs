//! [`RunCode`]: the `run_code` skill, its settings, and [`CodeMode`], the one call that adds it
//! to a registry.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::RwLock;

use agent_core::context::RunScope;
use agent_core::{
    CurrentRegistry, Registry, Skill, SkillContext, SkillError, SkillOutput, Suspension,
};
use agent_runtime::InnerCalls;

use crate::calls::{Calls, Kept, Record, index_of};
use crate::declarations::{declarations, is_identifier};
use crate::interpreter::{Ended, Finished, Limits, interpret};

/// The name the skill is offered under.
pub const RUN_CODE: &str = "run_code";
/// How long a program may take, its calls included, unless [`RunCode::timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most memory the interpreter may allocate unless [`RunCode::memory_limit`] says
/// otherwise: 64 MiB.
pub const DEFAULT_MEMORY_LIMIT: usize = 64 * 1024 * 1024;
/// The most characters of printed output kept unless [`RunCode::max_printed`] says otherwise.
pub const DEFAULT_MAX_PRINTED: usize = 16_000;
/// The most calls one program may make unless [`RunCode::max_calls`] says otherwise.
pub const DEFAULT_MAX_CALLS: usize = 1_000;
/// The most JSON one call of a program may send as its arguments unless
/// [`RunCode::max_argument_bytes`] says otherwise: 1,048,576 characters (JavaScript's UTF-16
/// units: at most 3 MiB of UTF-8 when every character is outside ASCII). Checked in the
/// interpreter, under its memory cap, before anything crosses to the host (whose JSON of a
/// value takes many times the text's size).
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1024 * 1024;
/// How many programs of one `run_code` skill run at once unless [`RunCode::max_programs`] says
/// otherwise: each has its own memory cap, so this bounds them together.
pub const DEFAULT_MAX_PROGRAMS: usize = 4;
/// The interpreter's stack: deep enough for ordinary recursion, far below the thread's.
const STACK: usize = 512 * 1024;

/// The input of `run_code`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// The program: the body of an `async` JavaScript function. `await` the tools, `return` the
    /// answer.
    pub code: String,
}

/// The `run_code` skill: runs a JavaScript program whose functions are the skills of the run's
/// registry. See the [crate docs](crate).
#[derive(Debug, Clone)]
pub struct RunCode {
    description: String,
    /// The functions' declarations, which the description ends with.
    declarations: String,
    names: Vec<String>,
    timeout: Duration,
    memory_limit: usize,
    max_printed: usize,
    max_calls: usize,
    max_argument_bytes: usize,
    /// The programs that may run at once (shared by clones: one skill, one bound).
    programs: Arc<tokio::sync::Semaphore>,
}

/// Adds code mode to a registry: `registry.with_code_mode()`.
pub trait CodeMode {
    /// Adds [`RunCode`] over the skills the registry has now (add the others first); each of them
    /// is a function of the programs it runs.
    fn with_code_mode(&mut self) -> &mut Self;
}

impl CodeMode for Registry {
    fn with_code_mode(&mut self) -> &mut Self {
        let run_code = RunCode::over(self);
        self.add(run_code)
    }
}

impl RunCode {
    /// `run_code` over the skills `registry` has now, with the default limits. Its description
    /// declares each skill as a function; the calls themselves go to the registry of the run the
    /// program runs in. A live set's skills ([`agent_core::LiveSkills`], an MCP server's tools)
    /// are declared as the set has them now: a skill the set gains later is offered to the model
    /// but is not a function of the programs, and a call of one it lost fails like any unknown
    /// skill.
    pub fn over(registry: &Registry) -> Self {
        let definitions = registry.definitions();
        let names = definitions
            .iter()
            .map(|d| d.name.clone())
            .filter(|name| name != RUN_CODE)
            .collect();
        let mut skill = RunCode {
            description: String::new(),
            declarations: declarations(&definitions, RUN_CODE),
            names,
            timeout: DEFAULT_TIMEOUT,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            max_printed: DEFAULT_MAX_PRINTED,
            max_calls: DEFAULT_MAX_CALLS,
            max_argument_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
            programs: Arc::new(tokio::sync::Semaphore::new(DEFAULT_MAX_PROGRAMS)),
        };
        skill.description = skill.describe();
        skill
    }

    /// How long a program may take, its calls included (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self.redescribe()
    }

    /// The most memory the interpreter may allocate, in bytes (default 64 MiB).
    pub fn memory_limit(mut self, bytes: usize) -> Self {
        self.memory_limit = bytes;
        self.redescribe()
    }

    /// The most characters of printed output kept (default 16,000).
    pub fn max_printed(mut self, chars: usize) -> Self {
        self.max_printed = chars;
        self.redescribe()
    }

    /// The most calls one program may make (default 1,000).
    pub fn max_calls(mut self, calls: usize) -> Self {
        self.max_calls = calls;
        self.redescribe()
    }

    /// The most bytes of JSON one call may send as its arguments (default 1 MiB); a call past
    /// it throws in the program, and nothing crosses to the host.
    pub fn max_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_argument_bytes = bytes;
        self.redescribe()
    }

    /// How many programs of this skill run at once (default 4); the others wait for a turn,
    /// within their own time limit. With the memory cap, it bounds what programs hold together.
    pub fn max_programs(mut self, programs: usize) -> Self {
        self.programs = Arc::new(tokio::sync::Semaphore::new(programs.max(1)));
        self
    }

    fn redescribe(mut self) -> Self {
        self.description = self.describe();
        self
    }

    fn describe(&self) -> String {
        format!(
            "Run a short JavaScript program that calls the functions below and computes with \
             their results. Only what it returns and prints comes back to you, so use it to chain \
             calls, loop over many, or boil large results down. The program is the body of an \
             async function: `await` each call, `return` the answer (a JSON value), \
             `console.log` to print (the first {} characters are kept). Calls awaited together \
             (`await Promise.all([...])`) run at the same time when they can. A call that fails \
             or is denied throws an Error the program may catch. There is no file system, \
             network, clock (no `Date`) or randomness besides these functions. A call that \
             needs a person's approval pauses the program; once decided, it runs again from the \
             start and earlier calls are answered from their record, so it must make the same \
             calls in the same order. Limits: {} s, {} MiB, {} calls, {} KiB of arguments a \
             call.\nFunctions:\n{tools}",
            self.max_printed,
            self.timeout.as_secs(),
            self.memory_limit / (1024 * 1024),
            self.max_calls,
            self.max_argument_bytes / 1024,
            tools = self.declarations,
        )
    }

    /// Runs `code` against `registry` in `ctx`, after `before` (an earlier run that paused) with
    /// `decisions` for the calls that waited.
    async fn execute(
        &self,
        code: String,
        registry: &Registry,
        ctx: &SkillContext,
        before: Kept,
        decisions: BTreeMap<usize, agent_core::Decision>,
    ) -> Result<SkillOutput, SkillError> {
        // The inner calls' own scope: a decision approves call `c2` of the program, not a call
        // of the outer run with the same id; the deferred skills the run loaded stay loaded.
        let scope = RunScope::new();
        for name in ctx.scope().loaded() {
            scope.load(name);
        }
        let calls = Calls {
            registry,
            ctx: ctx.clone().with_scope(scope),
            before,
            decisions,
            exclusive: RwLock::new(()),
            own_name: RUN_CODE,
            inner: InnerCalls::of(ctx, RUN_CODE),
        };
        // A durable run's journal must meet the calls in the same order on a replay: one at a
        // time, in the order the program makes them.
        let one_at_a_time = calls.inner.is_durable();
        let deadline = Instant::now() + self.timeout;
        // A turn among this skill's programs, waited for within the program's own time limit.
        let Ok(Ok(_turn)) = tokio::time::timeout_at(
            tokio::time::Instant::from_std(deadline),
            self.programs.clone().acquire_owned(),
        )
        .await
        else {
            return Err(SkillError::Timeout(self.timeout));
        };
        let limits = Limits {
            deadline,
            memory: self.memory_limit,
            stack: STACK,
            printed: self.max_printed,
            calls: self.max_calls,
            argument_bytes: self.max_argument_bytes,
        };
        let (requests, mut asked) = tokio::sync::mpsc::unbounded_channel();
        let (answers, settles) = std::sync::mpsc::channel();
        let cancelled = Arc::new(AtomicBool::new(false));
        let globals: Vec<String> = self
            .names
            .iter()
            .filter(|n| is_identifier(n))
            .cloned()
            .collect();
        let names = self.names.clone();
        let stop = cancelled.clone();
        let program = tokio::task::spawn_blocking(move || {
            interpret(&code, &names, &globals, &limits, requests, &settles, &stop)
        });
        // Stops the interpreter when this call ends early (cancelled, timed out, dropped).
        let _stop = StopOnDrop(cancelled.clone());
        let mut program = std::pin::pin!(program);
        let mut running = FuturesUnordered::new();
        let mut kept = Kept::default();
        let mut open = true;
        let deadline = tokio::time::sleep(self.timeout + Duration::from_secs(1));
        let mut deadline = std::pin::pin!(deadline);
        let finished = loop {
            tokio::select! {
                request = asked.recv(), if open && (!one_at_a_time || running.is_empty()) => {
                    match request {
                        Some(request) => running.push(calls.answer(request)),
                        None => open = false,
                    }
                }
                Some(answered) = running.next() => {
                    match answered.record {
                        Record::Done(recorded) => { kept.done.insert(answered.index, recorded); }
                        Record::Waiting(waiting) => { kept.waiting.insert(answered.index, waiting); }
                        Record::Nothing => {}
                    }
                    // The program may have ended meanwhile; then nobody reads this.
                    let _ = answers.send((answered.index, answered.settle));
                }
                finished = &mut program => break finished,
                () = ctx.cancellation().cancelled() => return Err(SkillError::Cancelled),
                () = &mut deadline => return Err(self.timed_out()),
            }
        };
        let Finished {
            ended,
            printed,
            printed_cut,
        } = finished
            .map_err(|e| SkillError::tool(format!("the program's interpreter failed: {e}")))?;
        let printed = printed_text(printed, printed_cut);
        match ended {
            Ended::Returned(value) => {
                // A value is read as JSON only up to the size a call may send: a larger one
                // comes back as its text, cut there (the model reads no more of a result than
                // the registry's output budget anyway), never built into a tree many times its
                // size.
                let value = match value {
                    Some(text) if text.len() > self.max_argument_bytes => {
                        let total = text.len();
                        let mut text = text;
                        let mut cut = self.max_argument_bytes;
                        while !text.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        text.truncate(cut);
                        text.push_str(&format!(
                            "… (the value is {total} bytes of JSON; cut at {cut})"
                        ));
                        Value::String(text)
                    }
                    // JSON.stringify writes a lone surrogate as an escape (`"\ud800"`), which
                    // is valid JSON but no Rust string: it becomes U+FFFD, not the text quoted
                    // again.
                    Some(text) => serde_json::from_str(&text)
                        .or_else(|_| serde_json::from_str(&without_lone_surrogates(&text)))
                        .unwrap_or(Value::String(text)),
                    None => Value::Null,
                };
                let mut answer = json!({ "value": value });
                if !printed.is_empty() {
                    answer["printed"] = Value::String(printed);
                }
                Ok(SkillOutput::json(answer))
            }
            Ended::Threw(error) => Err(SkillError::tool(format!(
                "the program threw {error}{}",
                printed_before(&printed)
            ))),
            Ended::Stuck => Err(SkillError::tool(format!(
                "the program waits for a promise that nothing settles, so it can never end{}",
                printed_before(&printed)
            ))),
            Ended::TimedOut => Err(self.timed_out()),
            Ended::Cancelled => Err(SkillError::Cancelled),
            Ended::Waiting => {
                let pending = calls.pending(&kept.waiting);
                let state = serde_json::to_value(&kept).map_err(|e| {
                    SkillError::tool(format!("the paused program's record cannot be kept: {e}"))
                })?;
                Err(SkillError::Suspended(Box::new(Suspension {
                    pending,
                    state,
                })))
            }
        }
    }

    fn timed_out(&self) -> SkillError {
        SkillError::tool(format!(
            "the program did not finish within {} s (its calls included) and was stopped",
            self.timeout.as_secs_f64()
        ))
    }
}

/// Sets the flag that stops the interpreter's thread when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn printed_text(mut printed: String, cut: usize) -> String {
    if cut > 0 {
        printed.push_str(&format!("[… {cut} more characters printed, not kept]"));
    }
    printed
}

fn printed_before(printed: &str) -> String {
    if printed.is_empty() {
        String::new()
    } else {
        format!("\nIt printed before:\n{printed}")
    }
}

#[async_trait]
impl Skill for RunCode {
    type Input = Program;

    fn name(&self) -> &str {
        RUN_CODE
    }

    fn description(&self) -> &str {
        &self.description
    }

    /// Its calls run one by one through the registry, each by its own flags; the program itself
    /// may run beside other calls.
    fn is_concurrency_safe(&self) -> bool {
        true
    }

    /// In a durable run each call of the program is a step of the run's journal.
    fn journals_its_steps(&self) -> bool {
        true
    }

    /// The program enforces its own time limit, its calls included.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    async fn run(&self, input: Program, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        let Some(CurrentRegistry(registry)) = ctx.extension::<CurrentRegistry>() else {
            return Err(SkillError::tool(
                "`run_code` runs only inside an agent run, whose registry its calls go to",
            ));
        };
        let registry = registry.clone();
        let (before, decisions) = match ctx.take_resumption() {
            None => (Kept::default(), BTreeMap::new()),
            Some(mut resumption) => {
                let state = std::mem::take(&mut resumption.state);
                let kept: Kept = serde_json::from_value(state).map_err(|e| {
                    SkillError::tool(format!(
                        "the paused program's record does not read back: {e}"
                    ))
                })?;
                // What waits in the kept record must be what the person was shown.
                let waiting = crate::calls::pending_calls(&registry, &kept.waiting);
                resumption.check(&waiting).map_err(SkillError::tool)?;
                let mut decisions = BTreeMap::new();
                for (id, decision) in resumption.decisions {
                    let Some(index) = index_of(&id).filter(|i| kept.waiting.contains_key(i)) else {
                        return Err(SkillError::tool(format!(
                            "no call of the program waits under `{id}`; nothing ran"
                        )));
                    };
                    decisions.insert(index, decision);
                }
                (kept, decisions)
            }
        };
        self.execute(input.code, &registry, ctx, before, decisions)
            .await
    }
}

/// `json` with each `\uXXXX` escape of a lone surrogate (one half of a pair without the other)
/// replaced by `\ufffd`, the replacement character.
fn without_lone_surrogates(json: &str) -> String {
    let bytes = json.as_bytes();
    let escape_at = |at: usize| -> Option<u16> {
        let hex = json.get(at + 2..at + 6)?;
        (bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u'))
            .then(|| u16::from_str_radix(hex, 16).ok())
            .flatten()
    };
    let mut out = String::with_capacity(json.len());
    let mut at = 0;
    while at < json.len() {
        if bytes[at] == b'\\' {
            // An escaped backslash is copied whole, so the `u` after it is no escape.
            if bytes.get(at + 1) == Some(&b'\\') {
                out.push_str("\\\\");
                at += 2;
                continue;
            }
            if let Some(unit) = escape_at(at) {
                let high = (0xD800..0xDC00).contains(&unit);
                let low = (0xDC00..0xE000).contains(&unit);
                if high && escape_at(at + 6).is_some_and(|next| (0xDC00..0xE000).contains(&next)) {
                    out.push_str(&json[at..at + 12]);
                    at += 12;
                    continue;
                }
                if high || low {
                    out.push_str("\\ufffd");
                    at += 6;
                    continue;
                }
            }
        }
        let ch = json[at..].chars().next().expect("at a char boundary");
        out.push(ch);
        at += ch.len_utf8();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::without_lone_surrogates;

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_pairs_stay() {
        let fixed =
            without_lone_surrogates(r#"["\ud800", "\udc00x", "\ud83d\ude00", "\\ud800", "é"]"#);
        let value: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(
            value,
            serde_json::json!(["\u{fffd}", "\u{fffd}x", "😀", "\\ud800", "é"])
        );
    }
}
