//! Skills written by hand (the `#[skill]` macro is tested in its own crate) for the registry tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{RetryPolicy, Skill, SkillContext, SkillError, SkillOutput, async_trait};
use agent_core::{schemars, serde};

/// Input with one required and one optional field.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
pub struct EchoInput {
    /// The text to send back.
    pub text: String,
    /// How many times to repeat it.
    pub times: Option<u32>,
}

/// A read-only skill that sends its text back, `times` times.
pub struct Echo;

#[async_trait]
impl Skill for Echo {
    type Input = EchoInput;
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Send the text back."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn aliases(&self) -> &[&'static str] {
        &["say"]
    }
    async fn run(&self, input: EchoInput, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok(input.text.repeat(input.times.unwrap_or(1) as usize).into())
    }
}

/// What the probes saw: a log of `start x` / `end x` lines and how many ran at once.
#[derive(Default)]
pub struct Tracker {
    pub log: Mutex<Vec<String>>,
    active: AtomicUsize,
    pub max_active: AtomicUsize,
}

impl Tracker {
    pub fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
    pub fn position(&self, line: &str) -> usize {
        self.lines()
            .iter()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("no `{line}` in log"))
    }
    pub fn max_active(&self) -> usize {
        self.max_active.load(Ordering::SeqCst)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
pub struct ProbeInput {
    /// A label for the log.
    pub label: String,
    /// How long to sleep, in milliseconds of tokio time.
    #[serde(default)]
    pub sleep_ms: u64,
}

/// Logs its start and end, sleeps, and counts how many probes run at once.
pub struct Probe {
    pub name: &'static str,
    pub safe: bool,
    pub tracker: Arc<Tracker>,
}

#[async_trait]
impl Skill for Probe {
    type Input = ProbeInput;
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Log, sleep, log."
    }
    fn is_read_only(&self) -> bool {
        self.safe
    }
    async fn run(&self, input: ProbeInput, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        let t = &self.tracker;
        t.log.lock().unwrap().push(format!("start {}", input.label));
        let now = t.active.fetch_add(1, Ordering::SeqCst) + 1;
        t.max_active.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(input.sleep_ms)).await;
        t.active.fetch_sub(1, Ordering::SeqCst);
        t.log.lock().unwrap().push(format!("end {}", input.label));
        Ok(format!(
            "{} done in call {}",
            input.label,
            ctx.call_id().unwrap_or("?")
        )
        .into())
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
pub struct NoInput {}

/// Fails with `Transient` `failures` times, then succeeds; counts attempts.
pub struct Flaky {
    pub failures: usize,
    pub attempts: Arc<AtomicUsize>,
    pub policy: Option<RetryPolicy>,
}

#[async_trait]
impl Skill for Flaky {
    type Input = NoInput;
    fn name(&self) -> &str {
        "flaky"
    }
    fn description(&self) -> &str {
        "Fails a few times, then works."
    }
    fn retry_policy(&self) -> Option<RetryPolicy> {
        self.policy
    }
    async fn run(&self, _: NoInput, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        let attempt = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        if attempt <= self.failures {
            Err(SkillError::Transient(format!("busy (attempt {attempt})")))
        } else {
            Ok(format!("worked on attempt {attempt}").into())
        }
    }
}

/// Sets a flag when dropped, to prove a future was dropped.
pub struct DropFlag(pub Arc<AtomicUsize>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Never finishes; signals when it started and counts drops of its future.
pub struct Hang {
    pub timeout: Option<Duration>,
    pub started: Arc<tokio::sync::Notify>,
    pub dropped: Arc<AtomicUsize>,
}

#[async_trait]
impl Skill for Hang {
    type Input = NoInput;
    fn name(&self) -> &str {
        "hang"
    }
    fn description(&self) -> &str {
        "Never returns."
    }
    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
    async fn run(&self, _: NoInput, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        let _flag = DropFlag(self.dropped.clone());
        self.started.notify_one();
        std::future::pending::<()>().await;
        unreachable!("pending never completes")
    }
}

/// Panics when run.
pub struct Panicky;

#[async_trait]
impl Skill for Panicky {
    type Input = NoInput;
    fn name(&self) -> &str {
        "panicky"
    }
    fn description(&self) -> &str {
        "Panics."
    }
    async fn run(&self, _: NoInput, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        panic!("index out of bounds: the len is 0")
    }
}

/// Returns `chars` copies of `é` (two bytes each, to catch cuts inside a character).
pub struct Big {
    pub chars: usize,
}

#[async_trait]
impl Skill for Big {
    type Input = NoInput;
    fn name(&self) -> &str {
        "big"
    }
    fn description(&self) -> &str {
        "Returns a lot of text."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    async fn run(&self, _: NoInput, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok("é".repeat(self.chars).into())
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
pub struct PathInput {
    /// The file to remove.
    pub path: String,
}

/// A deferred, destructive skill, counting its runs.
pub struct Shred {
    pub runs: Arc<AtomicUsize>,
}

#[async_trait]
impl Skill for Shred {
    type Input = PathInput;
    fn name(&self) -> &str {
        "shred_file"
    }
    fn description(&self) -> &str {
        "Overwrite a file with zeros, then remove it."
    }
    fn is_destructive(&self) -> bool {
        true
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn aliases(&self) -> &[&'static str] {
        &["wipe"]
    }
    fn search_hint(&self) -> Option<&str> {
        Some("delete erase destroy")
    }
    async fn run(&self, input: PathInput, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(format!("shredded {}", input.path).into())
    }
}

/// Another deferred skill, to check that search ranks and filters.
pub struct Translate;

#[async_trait]
impl Skill for Translate {
    type Input = EchoInput;
    fn name(&self) -> &str {
        "translate_text"
    }
    fn description(&self) -> &str {
        "Translate text into another language."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn should_defer(&self) -> bool {
        true
    }
    async fn run(&self, input: EchoInput, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok(input.text.into())
    }
}
