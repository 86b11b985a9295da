//! The command's side, between `fork` (or `clone` into namespaces) and `exec`: every layer of the
//! sandbox is entered here, in this order, and what was entered is reported to the agent.
//!
//! 1. Signals unblocked; a session of its own (`setsid`): no controlling terminal, so
//!    `/dev/tty` names nothing and no terminal's input can be reached through it; killed if the
//!    supervisor dies.
//! 2. Every inherited descriptor past stdin, stdout and stderr closes at `exec`.
//! 3. In namespaces of its own: a `/proc` of its PID namespace ([`super::namespaces`]).
//! 4. Resource limits: `RLIMIT_NPROC` for an ordinary user's command (in its user namespace,
//!    where it counts the call's processes only; without one, the user's processes when the call
//!    started plus the call's limit), root's being counted by a pids cgroup the supervisor joined;
//!    `RLIMIT_FSIZE` when [`super::ShellConfig::max_file_size`] is set.
//! 5. Capabilities cut ([`super::capabilities`]), no new privileges, the seccomp filter
//!    ([`super::seccomp`]), Landlock with a read rule for the `/proc` it now sees
//!    ([`super::confine`]).
//! 6. One byte to the agent: the [`Layers`] entered. With
//!    [`super::Confinement::Required`] and a layer missing, the process ends here instead and
//!    nothing runs.
//!
//! Only async-signal-safe system calls: no allocation, no locks, no panics.

use std::io;
use std::os::fd::RawFd;

use seccompiler::sock_filter;

use super::layers::Layers;
use super::namespaces::IdMaps;
use super::{capabilities, namespaces, seccomp};

/// What the command's process needs after `fork`: integers and references to memory built
/// before it (which a forked copy can read without allocating).
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    /// The Landlock ruleset to enter before `exec`, if the command runs confined.
    pub landlock: Option<RawFd>,
    /// The Landlock rights to grant on `/proc` (read), added once `/proc` is the command's own.
    pub proc_access: u64,
    /// Whether to cut capabilities, set no new privileges and install the seccomp filter.
    pub confine: bool,
    /// Whether a missing layer refuses the command ([`super::Confinement::Required`]).
    pub required: bool,
    /// The seccomp filter for a command with a PID namespace of its own.
    pub seccomp_isolated: Option<&'static [sock_filter]>,
    /// The seccomp filter for a command without one.
    pub seccomp_plain: Option<&'static [sock_filter]>,
    /// The id maps, when the command gets namespaces of its own.
    pub namespaces: Option<&'static IdMaps>,
    /// `cgroup.procs` of the call's pids cgroup, for the supervisor to join.
    pub cgroup_procs: Option<RawFd>,
    /// `RLIMIT_NPROC` to set inside the command's user namespace (an ordinary user's).
    pub nproc: Option<u64>,
    /// `RLIMIT_NPROC` to set when the command has no user namespace: the user's tasks when the
    /// call started plus the call's limit (the kernel then counts every process of the user).
    pub nproc_shared: Option<u64>,
    /// `RLIMIT_FSIZE` to set, in bytes.
    pub fsize: Option<u64>,
    /// Where the [`Layers`] byte goes.
    pub report: RawFd,
}

/// In the command's process: enters every layer (see the module docs) and reports them.
/// `layers` holds what the supervisor already set up (namespaces, the cgroup).
///
/// # Safety
/// Must only be called between `fork` and `exec`.
pub(super) unsafe fn enter_command(plan: Plan, mut layers: Layers) -> io::Result<()> {
    // SAFETY (whole body): async-signal-safe system calls on this frame's memory and on the
    // plan's references, built before the fork.
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        check(libc::sigprocmask(
            libc::SIG_SETMASK,
            &none,
            std::ptr::null_mut(),
        ))?;
        // Its own session and group: `kill 0` cannot reach the supervisor, and no terminal is
        // its controlling terminal.
        if libc::setsid() < 0 {
            check(libc::setpgid(0, 0))?;
        }
        // If the supervisor is killed outright, the command goes with it.
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        // Descriptors the agent's libraries left inheritable close at exec (the ruleset and the
        // report pipe are still needed until then).
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );

        let isolated = layers.contains(Layers::NAMESPACES);
        if isolated && namespaces::mount_own_proc() {
            layers = layers.with(Layers::OWN_PROC);
        }
        let nproc = if isolated {
            plan.nproc
        } else {
            plan.nproc_shared
        };
        if let Some(max) = nproc {
            let limit = libc::rlimit {
                rlim_cur: max,
                rlim_max: max,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &limit) == 0 {
                layers = layers.with(Layers::PROCESS_LIMIT);
            }
        }
        if let Some(max) = plan.fsize {
            let limit = libc::rlimit {
                rlim_cur: max,
                rlim_max: max,
            };
            check(libc::setrlimit(libc::RLIMIT_FSIZE, &limit))?;
        }

        if plan.confine {
            if capabilities::restrict() {
                layers = layers.with(Layers::CAPABILITIES);
            }
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            let filter = if isolated {
                plan.seccomp_isolated
            } else {
                plan.seccomp_plain
            };
            if filter.is_some_and(|program| seccomp::install(program)) {
                layers = layers.with(Layers::SECCOMP);
            }
        }
        if let Some(ruleset) = plan.landlock {
            add_proc_rule(ruleset, plan.proc_access);
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            let restricted = libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32);
            if restricted != 0 {
                return Err(io::Error::last_os_error());
            }
            layers = layers.with(Layers::LANDLOCK);
        }

        if plan.required && !layers.contains(Layers::COMPLETE) {
            report(plan.report, layers.with(Layers::REFUSED));
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        report(plan.report, layers);
        Ok(())
    }
}

/// Writes the layers byte for the agent.
///
/// # Safety
/// One `write` system call.
pub(super) unsafe fn report(fd: RawFd, layers: Layers) {
    // SAFETY: writes one byte of this frame's memory.
    unsafe {
        libc::write(fd, (&layers.0 as *const u8).cast(), 1);
    }
}

/// Grants `access` beneath `/proc` (the `/proc` this process now sees) in `ruleset`. A failure
/// leaves `/proc` unreadable, which fails closed.
unsafe fn add_proc_rule(ruleset: RawFd, access: u64) {
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    // SAFETY: open/close and landlock_add_rule on a struct of this frame.
    unsafe {
        let proc = libc::open(
            c"/proc".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if proc < 0 {
            return;
        }
        let rule = PathBeneath {
            allowed_access: access,
            parent_fd: proc,
        };
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &rule as *const PathBeneath,
            0u32,
        );
        libc::close(proc);
    }
}

pub(super) fn check(result: libc::c_int) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
