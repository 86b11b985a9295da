//! `run_shell`: `sh -c` in the workspace root, confined, and never outliving its call.
//!
//! # The sandbox, layer by layer
//!
//! Each layer stops a class of attack by itself, and most classes are stopped by two. All of them
//! apply to root's commands too (an agent in a container often is root).
//!
//! | layer | what it stops | where it is missing |
//! |---|---|---|
//! | **Landlock** ([`confine`]) | writes outside the workspace, `TMPDIR` and the toolchains' caches; reads of the home directory (`~/.ssh`, `~/.aws`, …); TCP unless [`ShellConfig::network`]; signals and `ptrace` (so `/proc/<pid>/environ`, `mem`) to any process outside the sandbox; making device files; device `ioctl`s; mounting | before Linux 5.13 or without `landlock` in the LSMs: nothing of this (ABI 4 adds TCP, ABI 6 signals); the first result says so |
//! | **Namespaces of its own** (`namespaces`: user, PID, mount, IPC) | naming any process outside the call (the agent and the supervisor have no pid in the command's PID namespace, so `prlimit`, `renice`, `taskset`, `kill` of them cannot be written); seeing them (`/proc` is a new one showing only the call's processes); using a capability on the machine (they count only in its user namespace) | where user namespaces are forbidden (Docker's default seccomp profile, Ubuntu's AppArmor restriction): the command sees other processes in `/proc`, and the seccomp filter is what keeps it from acting on them |
//! | **Capabilities** (`capabilities`) | a root command's `CAP_SYS_TIME`, `CAP_SYS_BOOT`, `CAP_MKNOD`, `CAP_LINUX_IMMUTABLE` (`chattr +i`), `CAP_SETUID`, `CAP_CHOWN`, `CAP_SYS_NICE`, `CAP_SYSLOG`, `CAP_DAC_READ_SEARCH` and the rest: only `CAP_DAC_OVERRIDE` and `CAP_FOWNER` are kept (the workspace's files stay writable whoever owns them); no new privileges, so no setuid program gives any back | never (cut with no new privileges even without `CAP_SETPCAP`) |
//! | **seccomp** (`seccomp`) | typing into a terminal (`TIOCSTI`, `TIOCLINUX`); making device files; Unix sockets by path (the Docker socket, an SSH agent, D-Bus) unless [`ShellConfig::unix_sockets`]; keyrings; the kernel log; file handles; changing the machine's clock, host name, modules; without a PID namespace, `prlimit`, `setpriority`, `ioprio_set` and `sched_set*` on any process but its own | an architecture `seccompiler` does not know (x86-64, aarch64 and riscv64 are known) |
//! | **A session of its own** (`setsid`) | the user's terminal: the command has no controlling terminal, `/dev/tty` names nothing, and standard input is `/dev/null` | never |
//! | **A process limit** ([`ShellConfig::max_processes`], default 1,024 processes and threads) | fork bombs: a `fork` past it fails, and the result says the limit was reached | a root agent where no pids cgroup can be made (`/sys/fs/cgroup` read-only); an ordinary user's limit counts all the user's processes where there is no user namespace |
//! | **A supervisor per call** (`supervisor`) | anything outliving the call: every process the command starts, in the background, under `setsid`, double-forked, is killed when the command exits, when the time limit passes, when the run is cancelled, when the call is dropped, and when the agent dies | never |
//!
//! Where a layer is missing, the first result of the process says what that leaves open;
//! [`Confinement::Required`] refuses to run instead, naming the missing layer. The agent itself
//! is made non-dumpable on the first call ([`harden_process`]).
//!
//! # The call
//!
//! - **Environment**: built from an allowlist ([`mod@env`]), never by filtering the agent's: `PATH`,
//!   `HOME`, the locale, the terminal, the Rust toolchain's homes, plus what
//!   [`ShellConfig::env_passthrough`] and [`ShellConfig::env`] add.
//! - **Time limit**: `timeout_ms` (default 120 s, at most 600 s; see [`ShellConfig`]).
//! - **Output**: stdout and stderr are read concurrently while the command runs. Each is kept
//!   within [`ShellConfig::max_output_chars`]: its head and tail, with the middle cut and
//!   counted (`[... 12345 characters cut ...]`); memory stays bounded whatever the command prints.
//! - Standard input is empty (`/dev/null`): a command that waits for input ends instead of hanging.
//! - `TMPDIR` is private to the call and removed afterwards, however deep the command nested it.
//! - Files: [`ShellConfig::max_file_size`] bounds each file a command writes (`RLIMIT_FSIZE`);
//!   [`ShellConfig::max_disk_growth`], when set, what a call adds to the disk in all (the free
//!   space of the workspace's and `TMPDIR`'s filesystems, read every 20 ms: a call past it is
//!   stopped and says so). For an exact bound, give the workspace a filesystem with a quota.
//! - Process ids the command sees (`$!`, `$$`, `$PPID`) are its PID namespace's: `$$` is 1 and
//!   `$PPID` is 0.
//!
//! What stays open even when confined: UDP (DNS lookups work; UDP traffic is not blocked before
//! Landlock ABI 8), reading the system's configuration in `/etc`, git's configuration
//! (`~/.gitconfig`), and whatever the workspace itself holds (an `.env` file there is readable,
//! and files the agent keeps there, such as `.agent/memory.redb`, are writable). Processes
//! handed to another service (`systemd-run`, a container daemon reached over TCP with the
//! network allowed) are that service's, not the call's. 32-bit x86 programs do not run.

mod capabilities;
mod capture;
mod cgroup;
mod config;
pub mod confine;
mod enter;
pub mod env;
mod layers;
mod namespaces;
mod quota;
mod seccomp;
mod spawn;
mod supervisor;
mod tmpdir;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_core::{SkillContext, SkillError, skill};

use crate::sandbox::Workspace;
use capture::Capture;
pub use config::{Confinement, ShellConfig};
pub use supervisor::harden_process;
use tmpdir::TempDir;

/// How long output is still read after the command's processes are gone, or after they were
/// killed.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// How long the supervisor gets to kill and reap the command's processes before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Whether a result already said that commands run unconfined (said once per process).
static UNCONFINED_NOTED: AtomicBool = AtomicBool::new(false);

/// What a `fork` refused by the process limit makes programs print: `EAGAIN`'s text, and
/// `dash`'s own words for it.
const FORK_REFUSED: &[&str] = &["Resource temporarily unavailable", "Cannot fork"];

/// Whether a result already said which other layers commands run without (once per process).
static LAYERS_NOTED: AtomicBool = AtomicBool::new(false);

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
    let env = env::command_env(&config, &tmp.path());
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
                confine::ruleset(&config, &root, &tmp.path(), home.as_deref())
                    .map_err(SkillError::tool)?
            } else {
                None
            }
        }
    };

    let spawn::Started {
        mut child,
        layers,
        cgroup,
    } = spawn::start(&command, &root, env, &config, ruleset)?;
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
    // With a quota on what the call adds to the disk, the run is also stopped once it passes it.
    let quota = config
        .max_disk_growth
        .map(|limit| quota::Quota::start(limit, &[&root, &tmp.path()]));
    let finished = tokio::time::timeout(timeout, async {
        match &quota {
            None => Ok(run.await),
            Some(quota) => tokio::select! {
                ran = run => Ok(ran),
                added = quota.passed() => Err(added),
            },
        }
    })
    .await;
    let (finished, over_quota) = match finished {
        Ok(Ok(ran)) => (Ok(ran), None),
        Ok(Err(added)) => (Err(()), Some(added)),
        Err(_) => (Err(()), None),
    };

    let mut report = notes;
    if let Some(gap) = layers.and_then(|layers| layers.gaps(config.max_processes))
        && !LAYERS_NOTED.swap(true, Ordering::Relaxed)
    {
        report.push_str(&format!("note: {gap}\n"));
    }
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
            match (over_quota, &quota) {
                (Some(added), Some(quota)) => report.push_str(&format!(
                    "stopped: the command added {added} bytes to the disk, more than the {} a \
                     call may add; it and every process it started were killed (what it wrote \
                     is still there)\n",
                    quota.limit()
                )),
                _ => report.push_str(&format!(
                    "timed out after {}: the command and every process it started were killed\n",
                    humanize(timeout)
                )),
            }
            report.push_str(&format!("exit code: {status}\n"));
        }
    }
    let (out, err) = (out.render(), err.render());
    let hit_limit = match &cgroup {
        Some(cgroup) => cgroup.limit_was_hit(),
        // RLIMIT_NPROC leaves no count: the error it causes is the sign.
        None => {
            layers.is_some_and(|l| l.contains(layers::Layers::PROCESS_LIMIT))
                && FORK_REFUSED
                    .iter()
                    .any(|words| out.contains(words) || err.contains(words))
        }
    };
    drop(cgroup);
    if hit_limit {
        report.push_str(&format!(
            "note: the command reached its limit of {} processes and threads; forks past it \
             failed (\"{}\")\n",
            config.max_processes, FORK_REFUSED[0]
        ));
    }
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
