//! `run_shell`: `sh -c` in the workspace root, confined, and never outliving its call.
//!
//! - **Confinement** (Linux, [`confine`]): the command runs in a Landlock sandbox. It may write
//!   only in the workspace and a private temporary directory (`TMPDIR`, removed after the call),
//!   read only the system's folders, the workspace and the toolchains' folders, not the home
//!   directory (`~/.ssh`, `~/.aws`, …); it may not open TCP connections or listen unless
//!   [`ShellConfig::network`] allows it; it may not signal, trace or read the memory or
//!   environment (`/proc/<pid>/environ`) of any process outside its sandbox, the agent's included.
//!   On by default where the kernel offers Landlock; where it does not (or offers only part of
//!   it), the first result says what was left unconfined. [`Confinement`] chooses.
//! - **Environment**: built from an allowlist ([`mod@env`]), never by filtering the agent's: `PATH`,
//!   `HOME`, the locale, the terminal, the Rust toolchain's homes, plus what
//!   [`ShellConfig::env_passthrough`] and [`ShellConfig::env`] add.
//! - **Lifetime** (a supervisor process per call): every process the command starts — in the background, under
//!   `setsid`, double-forked — is killed when the command exits, when the time limit passes, when
//!   the run is cancelled, when the call is dropped, and when the agent dies. The result says
//!   so. (A command that must leave a server running belongs to a service manager, not to a tool
//!   call.)
//! - **Time limit**: `timeout_ms` (default 120 s, at most 600 s; see [`ShellConfig`]).
//! - **Output**: stdout and stderr are read concurrently while the command runs. Each is kept
//!   within [`ShellConfig::max_output_chars`]: its head and tail, with the middle cut and
//!   counted (`[... 12345 characters cut ...]`); memory stays bounded whatever the command prints.
//! - Standard input is empty (`/dev/null`): a command that waits for input ends instead of hanging.
//!
//! What stays open even when confined: UDP (DNS lookups work; UDP traffic is not blocked before
//! Landlock ABI 8), connecting to Unix sockets by path in readable folders, reading the
//! system's configuration in `/etc`, and whatever the workspace itself holds (an `.env` file
//! there is readable). Processes handed to another service (`systemd-run`, a container daemon)
//! are that service's, not the call's.

mod capture;
pub mod confine;
pub mod env;
mod supervisor;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_core::{SkillContext, SkillError, skill};

use crate::sandbox::Workspace;
use capture::Capture;
pub use supervisor::harden_process;

/// Whether `run_shell` confines its commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Confinement {
    /// Confined with Landlock where the kernel offers it; where it does not, commands run
    /// unconfined and the first result says so. The default.
    #[default]
    BestEffort,
    /// Refuse to run a command the kernel cannot confine fully (files, network, signals).
    Required,
    /// No sandbox: commands run with the agent's rights. They still get the allowlisted
    /// environment, and nothing they start outlives the call.
    Off,
}

/// Limits and sandbox of `run_shell`. Put one in the context with
/// [`SkillContext::with_extension`]; without one, [`ShellConfig::default`] applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellConfig {
    /// The time limit when the call gives no `timeout_ms`. Default 120 s.
    pub default_timeout: Duration,
    /// The largest `timeout_ms` a call may ask for. Default 600 s.
    pub max_timeout: Duration,
    /// How many characters of stdout, and as many of stderr, the result keeps (half from the
    /// start, half from the end). Default 7,500, so both fit the registry's default budget.
    pub max_output_chars: usize,
    /// Whether commands are sandboxed. Default [`Confinement::BestEffort`].
    pub confinement: Confinement,
    /// Whether commands may open TCP connections and listen on ports. Default `false`.
    pub network: bool,
    /// More folders (or files) commands may read and execute, beyond the system's and the
    /// workspace.
    pub read_paths: Vec<PathBuf>,
    /// More folders (or files) commands may write, beyond the workspace and their temporary
    /// directory.
    pub write_paths: Vec<PathBuf>,
    /// More variables of the agent's environment to hand to commands, by exact name, beyond
    /// [`env::DEFAULT_ENV_ALLOWLIST`].
    pub env_passthrough: Vec<String>,
    /// Variables set for every command (they win over inherited ones).
    pub env: Vec<(String, String)>,
    /// Whether the first call makes the agent's process non-dumpable ([`harden_process`]), so
    /// that commands cannot read its environment or memory through `/proc/<pid>/`. Default
    /// `true` (ignored with [`Confinement::Off`]).
    pub harden_agent: bool,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            max_output_chars: 7_500,
            confinement: Confinement::BestEffort,
            network: false,
            read_paths: Vec::new(),
            write_paths: Vec::new(),
            env_passthrough: Vec::new(),
            env: Vec::new(),
            harden_agent: true,
        }
    }
}

/// How long output is still read after the command's processes are gone, or after they were
/// killed.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// How long the supervisor gets to kill and reap the command's processes before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Whether a result already said that commands run unconfined (said once per process).
static UNCONFINED_NOTED: AtomicBool = AtomicBool::new(false);

/// Run a shell command (`sh -c`) in the workspace root and return its exit code, stdout and
/// stderr. Long outputs keep their beginning and end. The command runs in a sandbox: it may
/// write only inside the workspace and `$TMPDIR`, has no network unless configured, and sees
/// none of the agent's secrets. Every process it starts is killed when it exits or when the time
/// limit passes, so start no servers or daemons. Standard input is empty.
///
/// # Arguments
/// * `command` - The command line, e.g. `cargo test 2>&1 | tail -50`.
/// * `timeout_ms` - Time limit in milliseconds. Default 120000 (2 minutes), at most 600000.
#[skill(
    destructive,
    search_hint = "sh bash terminal command execute program build test"
)]
pub async fn run_shell(
    ctx: &SkillContext,
    command: String,
    timeout_ms: Option<u64>,
) -> Result<String, SkillError> {
    let config = ctx.extension::<ShellConfig>().cloned().unwrap_or_default();
    let timeout = match timeout_ms {
        None => config.default_timeout,
        Some(0) => return Err(SkillError::bad_args("timeout_ms", "must be at least 1")),
        Some(ms) if Duration::from_millis(ms) > config.max_timeout => {
            return Err(SkillError::bad_args(
                "timeout_ms",
                format!("must be at most {}", config.max_timeout.as_millis()),
            ));
        }
        Some(ms) => Duration::from_millis(ms),
    };
    let root = Workspace::from_context(ctx)?.root().to_path_buf();
    let tmp = TempDir::new()?;
    let env = env::command_env(&config, tmp.path());
    let home = env
        .iter()
        .find(|(name, _)| name == "HOME")
        .map(|(_, value)| PathBuf::from(value));

    let mut notes = String::new();
    if config.harden_agent && config.confinement != Confinement::Off {
        static HARDENED: std::sync::Once = std::sync::Once::new();
        HARDENED.call_once(|| {
            // A failure leaves the process as it was; the sandbox still applies.
            let _ = harden_process();
        });
    }
    let ruleset = match config.confinement {
        Confinement::Off => None,
        level => {
            let abi = confine::kernel_abi();
            if let Some(gap) = confine::gaps(abi, config.network) {
                if level == Confinement::Required {
                    return Err(SkillError::Denied(format!(
                        "run_shell requires a sandbox and {gap}; nothing was run"
                    )));
                }
                if !UNCONFINED_NOTED.swap(true, Ordering::Relaxed) {
                    notes.push_str(&format!("note: {gap}\n"));
                }
            }
            if abi > 0 {
                confine::ruleset(&config, &root, tmp.path(), home.as_deref())
                    .map_err(SkillError::tool)?
            } else {
                None
            }
        }
    };

    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&command)
        .current_dir(&root)
        .env_clear()
        .envs(env)
        .env("PWD", &root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // The supervisor must not be killed outright: it is the one that kills the rest.
        .kill_on_drop(false);
    let plan = supervisor::Plan {
        landlock: ruleset.as_ref().map(std::os::fd::AsRawFd::as_raw_fd),
        drop_capabilities: config.confinement != Confinement::Off,
    };
    // SAFETY: `fork_supervised` makes only async-signal-safe system calls and allocates nothing;
    // `plan` is plain integers copied into the closure.
    unsafe {
        cmd.pre_exec(move || supervisor::fork_supervised(plan));
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| SkillError::tool(format!("could not start `sh`: {e}")))?;
    drop(ruleset);
    let mut guard = StopGuard(child.id().map(|pid| pid as libc::pid_t));
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let mut out = Capture::new(config.max_output_chars);
    let mut err = Capture::new(config.max_output_chars);

    let run = async {
        // Output is read while the command runs, so a chatty command never blocks on a full
        // pipe. The supervisor exits once every process of the command is gone, so the pipes
        // close with it; a pipe passed on to a process outside the call gets a grace period.
        let status = child.wait();
        let readers =
            async { tokio::join!(out.read_from(&mut stdout), err.read_from(&mut stderr)) };
        tokio::pin!(status, readers);
        let mut drained = false;
        let status = tokio::select! {
            status = &mut status => status,
            _ = &mut readers => {
                drained = true;
                status.await
            }
        };
        if !drained {
            drained = tokio::time::timeout(DRAIN_GRACE, &mut readers)
                .await
                .is_ok();
        }
        (status, drained)
    };
    let finished = tokio::time::timeout(timeout, run).await;

    let mut report = notes;
    match finished {
        Ok((status, drained)) => {
            guard.disarm();
            let status = status.map_err(|e| SkillError::tool(format!("waiting for `sh`: {e}")))?;
            report.push_str(&format!("exit code: {}\n", describe(status)));
            if !drained {
                report.push_str("[output after the exit could not be read]\n");
            }
        }
        Err(_) => {
            guard.stop();
            let status = match tokio::time::timeout(STOP_GRACE, child.wait()).await {
                Ok(Ok(status)) => describe(status),
                _ => {
                    guard.kill();
                    "unknown (the command's processes did not stop in time)".to_owned()
                }
            };
            let _ = tokio::time::timeout(DRAIN_GRACE, async {
                tokio::join!(out.read_from(&mut stdout), err.read_from(&mut stderr))
            })
            .await;
            report.push_str(&format!(
                "timed out after {}: the command and every process it started were killed\n",
                humanize(timeout)
            ));
            report.push_str(&format!("exit code: {status}\n"));
        }
    }
    let (out, err) = (out.render(), err.render());
    if out.is_empty() && err.is_empty() {
        report.push_str("(no output)");
    }
    if !out.is_empty() {
        report.push_str(&format!("[stdout]\n{out}\n"));
    }
    if !err.is_empty() {
        report.push_str(&format!("[stderr]\n{err}\n"));
    }
    Ok(report.trim_end().to_owned())
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("none (killed by signal {signal})"),
        (None, None) => "none".to_owned(),
    }
}

fn humanize(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Asks the command's supervisor to stop when dropped, unless disarmed: a timeout, a cancelled
/// run and a dropped call all end every process the command started.
struct StopGuard(Option<libc::pid_t>);

impl StopGuard {
    /// Asks the supervisor to kill every process of the command, then exit.
    fn stop(&mut self) {
        if let Some(pid) = self.0 {
            // SAFETY: `kill` has no memory-safety preconditions; the pid is our own child's,
            // which is not reaped before this guard is disarmed or dropped.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }

    /// The last resort when the supervisor does not stop: kills it and its group.
    fn kill(&mut self) {
        if let Some(pid) = self.0.take() {
            // SAFETY: as in `stop`; the supervisor leads its own process group.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The call's private temporary directory (`TMPDIR`), removed when the call ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, SkillError> {
        use std::os::unix::fs::DirBuilderExt;
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let base = std::env::temp_dir();
        for _ in 0..16 {
            let name = format!(
                "eugene-shell-{}-{}-{:08x}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos())
            );
            let path = base.join(name);
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(SkillError::tool(format!(
                        "could not create a temporary directory in {}: {e}",
                        base.display()
                    )));
                }
            }
        }
        Err(SkillError::tool(
            "could not create a temporary directory: every name was taken",
        ))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
