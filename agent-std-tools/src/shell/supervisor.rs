//! One supervisor process per command, so that nothing a command starts outlives its call.
//!
//! A process group is not enough: `setsid sleep 3001 &` leaves the group, and a double fork
//! leaves the tree. So the process the agent spawns is a small supervisor (a fork of the agent
//! that never calls `exec`), and the command is its child:
//!
//! 1. The supervisor makes itself a *child subreaper* (`PR_SET_CHILD_SUBREAPER`): every process
//!    the command orphans — a `setsid` daemon, a double-forked one — becomes its child instead of
//!    `init`'s.
//! 2. It forks the command, which moves to a process group of its own, enters the Landlock
//!    sandbox and `exec`s `sh`.
//! 3. It waits. When the command's `sh` exits, or when the agent asks it to stop (`SIGTERM`: the
//!    time limit passed, the run was cancelled, the call was dropped) or dies (`PR_SET_PDEATHSIG`),
//!    it kills every process left: it lists its children from `/proc/thread-self/children`, kills
//!    them, reaps them, and repeats until it has none — orphans of the killed ones come back to it
//!    as children. Then it exits with the command's status.
//!
//! The supervisor stays outside the sandbox, so under Landlock (ABI 6) the command can neither
//! signal it nor read its memory or environment. It is non-dumpable as well. Everything here runs
//! between `fork` and `exec` in a copy of a multi-threaded process, so it only makes
//! async-signal-safe system calls: no allocation, no locks, no panics.

use std::io;
use std::os::fd::RawFd;

/// What the command's side needs after `fork`: plain integers only.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    /// The Landlock ruleset to enter before `exec`, if the command runs confined.
    pub landlock: Option<RawFd>,
    /// Whether to drop [`DROPPED_CAPABILITIES`] from the command's bounding set.
    pub drop_capabilities: bool,
}

/// Capabilities a confined command never gets, even when the agent runs as root: tracing or
/// reading other processes (`CAP_SYS_PTRACE`, which would bypass the agent being
/// non-dumpable), signalling any process (`CAP_KILL`), administering the system, its modules,
/// raw devices, the network, BPF and performance counters. Dropped from the bounding set with no
/// new privileges, so no program the command runs gets them back.
/// (Numbers from `linux/capability.h`; the `libc` crate does not name them.)
const DROPPED_CAPABILITIES: &[libc::c_int] = &[
    5,  // CAP_KILL
    12, // CAP_NET_ADMIN
    13, // CAP_NET_RAW
    16, // CAP_SYS_MODULE
    17, // CAP_SYS_RAWIO
    19, // CAP_SYS_PTRACE
    21, // CAP_SYS_ADMIN
    38, // CAP_PERFMON
    39, // CAP_BPF
];

/// The body of `pre_exec`: forks the command and turns the spawned process into its supervisor.
/// Returns (in the command's process) when the command may `exec`; never returns in the
/// supervisor.
///
/// # Safety
/// Must only be called between `fork` and `exec` (from `CommandExt::pre_exec`).
pub(super) unsafe fn fork_supervised(plan: Plan) -> io::Result<()> {
    // SAFETY (whole body): every call below is an async-signal-safe system call on memory this
    // frame owns (a sigset, a status word) or on constants.
    unsafe {
        let mut watched: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut watched);
        libc::sigaddset(&mut watched, libc::SIGCHLD);
        libc::sigaddset(&mut watched, libc::SIGTERM);
        // Blocked before the fork, so the command's exit and the agent's request are never lost:
        // they stay pending until `sigwaitinfo` takes them.
        check(libc::sigprocmask(
            libc::SIG_BLOCK,
            &watched,
            std::ptr::null_mut(),
        ))?;
        check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))?;
        let command = libc::fork();
        if command < 0 {
            return Err(io::Error::last_os_error());
        }
        if command == 0 {
            return enter_command(plan);
        }
        supervise(command, &watched)
    }
}

/// In the command's process: its own process group, no blocked signals, and the sandbox.
unsafe fn enter_command(plan: Plan) -> io::Result<()> {
    // SAFETY: async-signal-safe system calls on a local sigset.
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        check(libc::sigprocmask(
            libc::SIG_SETMASK,
            &none,
            std::ptr::null_mut(),
        ))?;
        // Its own group, so `kill 0` in the command cannot reach the supervisor.
        check(libc::setpgid(0, 0))?;
        // If the supervisor is killed outright, the command goes with it.
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        if plan.drop_capabilities {
            for &capability in DROPPED_CAPABILITIES {
                // Fails with EPERM without CAP_SETPCAP (an ordinary user, who lacks these
                // capabilities anyway) and EINVAL on kernels that do not know one: both fine.
                libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
            }
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        }
        if let Some(ruleset) = plan.landlock {
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            let restricted = libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32);
            if restricted != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// The supervisor's life: wait for the command or for `SIGTERM`, then kill what is left, then
/// exit as the command did.
unsafe fn supervise(command: libc::pid_t, watched: &libc::sigset_t) -> ! {
    // SAFETY: async-signal-safe system calls on local memory; `_exit` never returns.
    unsafe {
        // The agent dying counts as a request to stop.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        // Hold none of the agent's descriptors: the output pipes must close when the command's
        // processes are gone, and the spawn's error pipe must close now.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
        }
        close_from(3);

        let mut exit_status: Option<libc::c_int> = None;
        'wait: loop {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let signal = libc::sigwaitinfo(watched, &mut info);
            if signal == libc::SIGTERM {
                break 'wait;
            }
            loop {
                let mut status = 0;
                let reaped = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if reaped <= 0 {
                    break;
                }
                if reaped == command {
                    exit_status = Some(status);
                    break 'wait;
                }
            }
        }
        kill_all(command);
        match exit_status {
            Some(status) if libc::WIFEXITED(status) => libc::_exit(libc::WEXITSTATUS(status)),
            Some(status) if libc::WIFSIGNALED(status) => die_by(libc::WTERMSIG(status)),
            _ => die_by(libc::SIGKILL),
        }
    }
}

/// Kills and reaps every process left under the supervisor, until it has no child.
unsafe fn kill_all(command: libc::pid_t) {
    // SAFETY: async-signal-safe system calls on local buffers.
    unsafe {
        loop {
            if !kill_children() {
                // No list of children (no /proc): the command's group is all that can be found.
                libc::kill(-command, libc::SIGKILL);
                let mut status = 0;
                while libc::waitpid(-1, &mut status, libc::WNOHANG) > 0 {}
                return;
            }
            let mut status = 0;
            // Waits for one of the killed children; their orphans are adopted meanwhile and
            // listed in the next round.
            if libc::waitpid(-1, &mut status, 0) < 0
                && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD)
            {
                return;
            }
        }
    }
}

/// Sends `SIGKILL` to every child listed in `/proc/thread-self/children`; false when the list
/// cannot be read.
unsafe fn kill_children() -> bool {
    // SAFETY: reads into a stack buffer; the descriptor is closed before returning.
    unsafe {
        let fd = libc::open(
            c"/proc/thread-self/children".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let mut buf = [0u8; 4096];
        let mut pid: libc::pid_t = 0;
        let mut in_number = false;
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            for &byte in &buf[..n as usize] {
                if byte.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add(libc::pid_t::from(byte - b'0'));
                    in_number = true;
                } else if in_number {
                    libc::kill(pid, libc::SIGKILL);
                    pid = 0;
                    in_number = false;
                }
            }
        }
        if in_number {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::close(fd);
        true
    }
}

/// Closes every descriptor from `first` on.
unsafe fn close_from(first: libc::c_int) {
    // SAFETY: closing descriptors this process owns; nothing in this process uses them again.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            0,
        ) != 0
        {
            for fd in first..4096 {
                libc::close(fd);
            }
        }
    }
}

/// Exits the way the command did: by the same signal.
unsafe fn die_by(signal: libc::c_int) -> ! {
    // SAFETY: async-signal-safe calls; `_exit` never returns.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal)
    }
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Makes this process non-dumpable: other processes of the same user can no longer read its
/// memory or environment through `/proc/<pid>/` (`mem`, `environ`, `maps`), nor attach a
/// debugger to it; no core dump is written. Processes with `CAP_SYS_PTRACE` (root) still can.
///
/// `run_shell` confines its commands with Landlock where the kernel offers it, which already
/// hides the agent from them; call this at the start of an agent's `main` as a second layer, and
/// as the only one on kernels without Landlock.
pub fn harden_process() -> io::Result<()> {
    // SAFETY: `prctl(PR_SET_DUMPABLE, 0)` changes a flag of this process; no memory is passed.
    check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) })
}
