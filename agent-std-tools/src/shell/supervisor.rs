//! One supervisor process per command, so that nothing a command starts outlives its call.
//!
//! A process group is not enough: `setsid sleep 3001 &` leaves the group, and a double fork
//! leaves the tree. So the process the agent spawns is a small supervisor (a fork of the agent
//! that never calls `exec`), and the command is its child:
//!
//! 1. The supervisor makes itself a *child subreaper* (`PR_SET_CHILD_SUBREAPER`): every process
//!    the command orphans — a `setsid` daemon, a double-forked one — becomes its child instead of
//!    `init`'s.
//! 2. It joins the call's pids cgroup, if there is one ([`super::cgroup`]), and starts the
//!    command: in namespaces of its own where the kernel allows them ([`super::namespaces`]),
//!    with a plain `fork` where it does not. The command enters its session and every layer of
//!    the sandbox ([`super::enter`]) and `exec`s `sh`. In a PID namespace, `sh` is its process 1:
//!    orphans go to it, and when it exits the kernel kills every process left in the namespace.
//! 3. It waits. When the command's `sh` exits, or when the agent asks it to stop (`SIGTERM`: the
//!    time limit passed, the run was cancelled, the call was dropped) or dies (`PR_SET_PDEATHSIG`),
//!    it kills every process left: it lists its children from `/proc/thread-self/children`, kills
//!    them, reaps them, and repeats until it has none — orphans of the killed ones come back to it
//!    as children. Then it exits with the command's status.
//!
//! The supervisor stays outside the sandbox and outside the command's PID namespace, so the
//! command can neither name it, signal it (Landlock, ABI 6) nor read its memory or environment. It is non-dumpable as well. Everything here runs
//! between `fork` and `exec` in a copy of a multi-threaded process, so it only makes
//! async-signal-safe system calls: no allocation, no locks, no panics.

use std::io;

use super::cgroup;
use super::enter::{Plan, check, enter_command};
use super::layers::Layers;
use super::namespaces;

/// The body of `pre_exec`: starts the command and turns the spawned process into its supervisor.
/// Returns (in the command's process) when the command may `exec`; never returns in the
/// supervisor.
///
/// The supervisor first joins the call's pids cgroup, if there is one, then starts the command
/// in namespaces of its own ([`namespaces::clone_isolated`]) when the plan asks for them, with a
/// plain `fork` when they cannot be made (the command then reports that it has none, and refuses
/// to run if they are required).
///
/// # Safety
/// Must only be called between `fork` and `exec` (from `CommandExt::pre_exec`).
pub(super) unsafe fn fork_supervised(plan: Plan) -> io::Result<()> {
    // SAFETY (whole body): every call below is an async-signal-safe system call on memory this
    // frame owns (a sigset, a status word) or on the plan's, built before the fork.
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
        let mut layers = Layers::default();
        if let Some(procs) = plan.cgroup_procs
            && cgroup::join(procs)
        {
            layers = layers.with(Layers::PROCESS_LIMIT).with(Layers::CGROUP);
        }
        let isolated = match plan.namespaces {
            Some(maps) => namespaces::clone_isolated(maps).ok(),
            None => None,
        };
        let command = match isolated {
            Some(pid) => {
                layers = layers.with(Layers::NAMESPACES);
                pid
            }
            None => libc::fork(),
        };
        if command < 0 {
            return Err(io::Error::last_os_error());
        }
        if command == 0 {
            return enter_command(plan, layers);
        }
        supervise(command, &watched)
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
        // The command's process group first, at once: a fork bomb that stays in it cannot fork
        // faster than this (the kernel refuses a fork whose parent has a kill pending). What left
        // the group (`setsid`) was orphaned to this subreaper and is killed below.
        libc::kill(-command, libc::SIGKILL);
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
            while libc::waitpid(-1, &mut status, libc::WNOHANG) > 0 {}
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
