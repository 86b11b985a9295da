//! Namespaces of the command's own: a user, PID, mount and IPC namespace per call, with a `/proc`
//! that shows only the call's processes.
//!
//! The supervisor starts the command with `clone(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS |
//! CLONE_NEWIPC)`. Then:
//!
//! - **No process outside can be named.** Every call that takes a process id (`kill`,
//!   `prlimit`, `setpriority`, `sched_setaffinity`, `ptrace`, `/proc/<pid>/…`) reads it in the
//!   command's PID namespace, where the agent and the supervisor do not exist: the command is
//!   process 1 there, and `$PPID` is 0. `setpriority`/`ioprio_set` on "every process of this
//!   user" reach only the processes the namespace shows.
//! - **`/proc` shows only the call's processes**: a new `proc` is mounted on `/proc` in the
//!   command's mount namespace (which no one else sees), before the sandbox is entered.
//! - **No host capability.** Capabilities held in a user namespace count only for what that
//!   namespace owns: no device files, no clock, no immutable files, no raw I/O on the machine,
//!   however root the command looks. User and group ids map to themselves: a root agent's
//!   command is root inside (with only [`super::capabilities::KEPT`]), an ordinary user's
//!   command is that user, and the files they write belong to whom they belonged before.
//! - **A process limit for ordinary users**: the kernel counts `RLIMIT_NPROC` per user
//!   namespace, so a limit set in the command's own counts only the call's processes and threads
//!   (root is exempt from `RLIMIT_NPROC`: its commands get a pids cgroup, [`super::cgroup`]).
//! - **System V IPC** (shared memory, semaphores, message queues) of its own.
//!
//! Where the kernel or a container forbids user namespaces (Docker's default seccomp profile,
//! Ubuntu's AppArmor restriction, `user.max_user_namespaces = 0`), the command is started with a
//! plain `fork` instead: it can then see other processes in `/proc`, and the seccomp filter
//! ([`super::seccomp`]) is what keeps it from acting on them. The first result says so.

use std::io;
use std::sync::OnceLock;

/// The namespaces a command gets.
pub(super) const CLONE_FLAGS: libc::c_int =
    libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;

/// How the command's user and group ids map to the supervisor's, written into
/// `/proc/<command>/{uid_map,gid_map}` by the supervisor. Built once per process (it allocates),
/// read after `fork` (it does not).
#[derive(Debug)]
pub(super) struct IdMaps {
    /// The contents of `uid_map`.
    pub uid_map: Vec<u8>,
    /// The contents of `gid_map`.
    pub gid_map: Vec<u8>,
    /// Whether `setgroups` must be denied before `gid_map` may be written (an ordinary user).
    pub deny_setgroups: bool,
}

/// The maps for this process: every id this process's own namespace maps, to itself, where it
/// may map them (it holds `CAP_SETUID` and `CAP_SETGID`, as root does); otherwise its own user
/// and group only (the one mapping an ordinary user may write).
pub(super) fn id_maps() -> &'static IdMaps {
    static MAPS: OnceLock<IdMaps> = OnceLock::new();
    MAPS.get_or_init(|| {
        // SAFETY: these only read this process's ids.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let identity = |file: &str| -> Option<Vec<u8>> {
            let text = std::fs::read_to_string(file).ok()?;
            let mut map = String::new();
            for line in text.lines() {
                let mut fields = line.split_whitespace();
                let (Some(inside), Some(_outside), Some(count)) =
                    (fields.next(), fields.next(), fields.next())
                else {
                    return None;
                };
                map.push_str(&format!("{inside} {inside} {count}\n"));
            }
            (!map.is_empty()).then(|| map.into_bytes())
        };
        let privileged = uid == 0;
        match (
            privileged.then(|| identity("/proc/self/uid_map")).flatten(),
            privileged.then(|| identity("/proc/self/gid_map")).flatten(),
        ) {
            (Some(uid_map), Some(gid_map)) => IdMaps {
                uid_map,
                gid_map,
                deny_setgroups: false,
            },
            _ => IdMaps {
                uid_map: format!("{uid} {uid} 1\n").into_bytes(),
                gid_map: format!("{gid} {gid} 1\n").into_bytes(),
                deny_setgroups: true,
            },
        }
    })
}

/// Starts the command's process in namespaces of its own; `Ok(0)` in the command, its pid in
/// the supervisor. The command waits on a pipe until the supervisor has written its id maps; on
/// any failure here the command's process is gone and nothing was run.
///
/// # Safety
/// Only async-signal-safe system calls: callable between `fork` and `exec`, in a process with
/// one thread (the supervisor).
pub(super) unsafe fn clone_isolated(maps: &IdMaps) -> io::Result<libc::pid_t> {
    // SAFETY (whole body): system calls on this frame's memory and on `maps`, which outlives
    // both processes' use of it.
    unsafe {
        // `ready`: the command tells the supervisor it may write the maps; `gate`: the
        // supervisor tells the command they are written.
        let (ready_read, ready_write) = pipe()?;
        let (gate_read, gate_write) = match pipe() {
            Ok(pair) => pair,
            Err(err) => {
                libc::close(ready_read);
                libc::close(ready_write);
                return Err(err);
            }
        };
        let close_all = || {
            for fd in [ready_read, ready_write, gate_read, gate_write] {
                libc::close(fd);
            }
        };
        // As fork(2) does, with new namespaces: no stack of its own, SIGCHLD at exit.
        let pid = libc::syscall(
            libc::SYS_clone,
            (CLONE_FLAGS | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        ) as libc::pid_t;
        if pid < 0 {
            let err = io::Error::last_os_error();
            close_all();
            return Err(err);
        }
        if pid == 0 {
            libc::close(ready_read);
            libc::close(gate_write);
            if maps.deny_setgroups {
                // An ordinary user may write the maps of a process of theirs only while it is
                // dumpable (`/proc/<pid>/` of a non-dumpable one belongs to root); the agent is
                // not, and this copy of it becomes a new program in a moment, which is.
                libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
            }
            libc::write(ready_write, b"1".as_ptr().cast(), 1);
            libc::close(ready_write);
            let go = read_byte(gate_read);
            libc::close(gate_read);
            if go != Some(b'1') {
                libc::_exit(127);
            }
            return Ok(0);
        }
        libc::close(ready_write);
        libc::close(gate_read);
        let ready = read_byte(ready_read);
        libc::close(ready_read);
        let mapped = match ready {
            Some(b'1') => write_maps(pid, maps),
            _ => Err(io::Error::from_raw_os_error(libc::ECHILD)),
        };
        if let Err(err) = mapped {
            libc::close(gate_write);
            libc::kill(pid, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            return Err(err);
        }
        libc::write(gate_write, b"1".as_ptr().cast(), 1);
        libc::close(gate_write);
        Ok(pid)
    }
}

/// A pipe whose ends close at `exec`: (read, write).
unsafe fn pipe() -> io::Result<(libc::c_int, libc::c_int)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((fds[0], fds[1]))
}

/// One byte from `fd`, retrying on `EINTR`; `None` at end of file or on an error.
unsafe fn read_byte(fd: libc::c_int) -> Option<u8> {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte into this frame's memory.
        let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            return Some(byte);
        }
        if n == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
}

/// Writes the command's `uid_map`, `setgroups` (when needed) and `gid_map`.
unsafe fn write_maps(pid: libc::pid_t, maps: &IdMaps) -> io::Result<()> {
    // SAFETY: writes of `maps`' bytes into files named in stack buffers.
    unsafe {
        write_proc_file(pid, b"uid_map\0", &maps.uid_map)?;
        if maps.deny_setgroups {
            write_proc_file(pid, b"setgroups\0", b"deny")?;
        }
        write_proc_file(pid, b"gid_map\0", &maps.gid_map)
    }
}

/// Writes `bytes` in one `write` to `/proc/<pid>/<name>` (`name` ends with a NUL).
unsafe fn write_proc_file(pid: libc::pid_t, name: &[u8], bytes: &[u8]) -> io::Result<()> {
    let mut path = [0u8; 64];
    let mut len = 0;
    let mut push = |part: &[u8]| {
        for &b in part {
            if len < path.len() - 1 {
                path[len] = b;
                len += 1;
            }
        }
    };
    push(b"/proc/");
    let mut digits = [0u8; 12];
    let mut n = pid.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    push(&digits[at..]);
    push(b"/");
    push(name);
    // SAFETY: `path` is NUL-terminated (the name ends with NUL, the buffer is zeroed).
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(if written < 0 {
                err
            } else {
                io::Error::from_raw_os_error(libc::EIO)
            });
        }
        Ok(())
    }
}

/// In the command, inside its namespaces: mounts a `proc` of its PID namespace on `/proc`, after
/// making every mount private (so nothing done here reaches the agent's mount namespace).
/// Returns whether `/proc` now shows only the call's processes.
///
/// # Safety
/// Only async-signal-safe system calls: callable between `fork` and `exec`.
pub(super) unsafe fn mount_own_proc() -> bool {
    // SAFETY: mount(2) with constant NUL-terminated strings.
    unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) == 0
            && libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) == 0
    }
}
