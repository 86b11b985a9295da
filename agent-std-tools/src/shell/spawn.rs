//! Starting one command: everything its process will need is built here, in the agent (it
//! allocates, opens files and may fail with a message), then the supervisor is spawned with a
//! plan of plain integers and references ([`Plan`]), and the layers the command entered are
//! read back from it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_core::SkillError;

use super::cgroup::PidsCgroup;
use super::config::{Confinement, ShellConfig};
use super::enter::Plan;
use super::layers::Layers;
use super::{confine, namespaces, seccomp, supervisor};

/// A started command.
pub(super) struct Started {
    /// The supervisor process.
    pub child: tokio::process::Child,
    /// The layers the command entered (`None` with [`Confinement::Off`], or when it did not say).
    pub layers: Option<Layers>,
    /// The call's pids cgroup, removed when this is dropped (after the supervisor is gone).
    pub cgroup: Option<PidsCgroup>,
}

/// Spawns `sh -c command` under a supervisor, in `root`, with exactly `env`.
pub(super) fn start(
    command: &str,
    root: &Path,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    config: &ShellConfig,
    ruleset: Option<OwnedFd>,
) -> Result<Started, SkillError> {
    let confined = config.confinement != Confinement::Off;
    // SAFETY: reads this process's effective user id.
    let root_agent = unsafe { libc::geteuid() } == 0;
    let cgroup = (confined && root_agent)
        .then(|| PidsCgroup::create(config.max_processes))
        .flatten();
    let (report_read, report_write) = report_pipe()?;
    let filter = |own_pid_namespace| {
        seccomp::program(seccomp::Policy {
            unix_sockets: config.unix_sockets,
            own_pid_namespace,
        })
    };
    let plan = Plan {
        landlock: ruleset.as_ref().map(AsRawFd::as_raw_fd),
        proc_access: confine::proc_access(),
        confine: confined,
        required: config.confinement == Confinement::Required,
        seccomp_isolated: confined.then(|| filter(true)).flatten(),
        seccomp_plain: confined.then(|| filter(false)).flatten(),
        namespaces: confined.then(namespaces::id_maps),
        cgroup_procs: cgroup.as_ref().map(PidsCgroup::procs_fd),
        nproc: (confined && !root_agent).then_some(config.max_processes as u64),
        nproc_shared: (confined && !root_agent && !NAMESPACES_WORK.load(Ordering::Relaxed))
            .then(|| (user_tasks() + config.max_processes) as u64),
        fsize: config.max_file_size,
        report: report_write.as_raw_fd(),
    };

    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(root)
        .env_clear()
        .envs(env)
        .env("PWD", root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // The supervisor must not be killed outright: it is the one that kills the rest.
        .kill_on_drop(false);
    // SAFETY: `fork_supervised` makes only async-signal-safe system calls and allocates nothing;
    // `plan` is integers and references to memory that lives as long as the process (or, for
    // the descriptors, until `spawn` returns).
    unsafe {
        cmd.pre_exec(move || supervisor::fork_supervised(plan));
    }
    let spawned = cmd.spawn();
    // The command has run `exec` (or failed) when `spawn` returns: its byte is in the pipe.
    drop(report_write);
    drop(ruleset);
    let layers = read_report(&report_read);
    if let Some(layers) = layers {
        NAMESPACES_WORK.store(layers.contains(Layers::NAMESPACES), Ordering::Relaxed);
    }
    match spawned {
        Ok(child) => Ok(Started {
            child,
            layers: if confined { layers } else { None },
            cgroup,
        }),
        Err(_) if layers.is_some_and(|l| l.contains(Layers::REFUSED)) => {
            let layers = layers.unwrap_or_default();
            let gap = layers
                .gaps(config.max_processes)
                .or_else(|| confine::gaps(confine::kernel_abi(), config.network))
                .unwrap_or_else(|| "a layer of the sandbox could not be entered".to_owned());
            Err(SkillError::Denied(format!(
                "run_shell requires a full sandbox ({gap}); nothing was run"
            )))
        }
        Err(e) => Err(SkillError::tool(format!("could not start `sh`: {e}"))),
    }
}

/// Whether the last command got namespaces of its own: then the next one is not expected to need
/// the shared process limit, whose count costs a walk of `/proc`.
static NAMESPACES_WORK: AtomicBool = AtomicBool::new(false);

/// How many processes and threads this process's real user has now: `RLIMIT_NPROC` counts them
/// all where the command has no user namespace of its own.
fn user_tasks() -> usize {
    // SAFETY: reads this process's real user id.
    let uid = unsafe { libc::getuid() }.to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut tasks = 0;
    for entry in entries.flatten() {
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let real = status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next());
        if real == Some(uid.as_str()) {
            tasks += status
                .lines()
                .find_map(|line| line.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse::<usize>().ok())
                .unwrap_or(1);
        }
    }
    tasks
}

/// A pipe for the command's [`Layers`] byte: both ends close on `exec`, the agent's end does not
/// block.
fn report_pipe() -> Result<(OwnedFd, OwnedFd), SkillError> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills the array with two new descriptors, which we then own.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) != 0 {
            return Err(SkillError::tool(format!(
                "could not start `sh`: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

/// The last byte the command wrote, if any.
fn read_report(pipe: &OwnedFd) -> Option<Layers> {
    let mut bytes = [0u8; 8];
    // SAFETY: reads into a local buffer from a descriptor we own (non-blocking).
    let n = unsafe { libc::read(pipe.as_raw_fd(), bytes.as_mut_ptr().cast(), bytes.len()) };
    (n > 0).then(|| Layers(bytes[n as usize - 1]))
}
