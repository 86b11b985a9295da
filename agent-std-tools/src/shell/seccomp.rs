//! The seccomp filter around a confined command: system calls that reach past the sandbox answer
//! `EPERM` (`ENOSYS` for another ABI's), whatever the command's rights.
//!
//! Landlock confines files, TCP and signals; capabilities are cut ([`super::capabilities`]); a
//! PID namespace keeps other processes out of reach ([`super::namespaces`]). This filter closes
//! what those layers leave, and is the layer that holds where the others are missing (a container
//! that forbids namespaces, a kernel without Landlock):
//!
//! | denied | why |
//! |---|---|
//! | `ioctl` `TIOCSTI`, `TIOCLINUX` | typing into a terminal's input, which the user's own shell would run after the agent exits |
//! | `mknod`/`mknodat` of a character or block device | a device file for the terminal, the kernel log or a disk, inside the workspace |
//! | `socket(AF_UNIX, …)` unless [`super::ShellConfig::unix_sockets`] | connecting to a Unix socket by path: the Docker daemon's, an SSH agent's, D-Bus; Landlock does not confine them before ABI 9 (`socketpair` stays allowed) |
//! | `keyctl`, `add_key`, `request_key` | the user's kernel keyrings, shared by every process of the user |
//! | `syslog` | the kernel log (`dmesg`) |
//! | `open_by_handle_at` | opening any file of a filesystem by its handle, past every path rule |
//! | `reboot`, `kexec_*`, `*_module`, `settimeofday`, `clock_settime`, `swapon`/`swapoff`, `acct`, `sethostname`, `setdomainname`, `iopl`, `ioperm` | changing the machine (each also needs a capability the command no longer has) |
//! | without a PID namespace of its own: `prlimit64`, `sched_setaffinity`, `sched_setscheduler`, `sched_setparam`, `sched_setattr` on another process, `setpriority`/`ioprio_set` on another process or on every process of the user | limiting, slowing or killing (`prlimit --cpu=1:1`) the agent, which runs as the same user |
//! | x32 system calls (x86-64) | the same calls under other numbers |
//!
//! A 32-bit x86 program (`int 0x80`) is killed: its calls have other numbers again, and the
//! filter only knows the native ones. Acting on the command's own process (`setrlimit`, `nice`,
//! `taskset` of a new program) still works.
//!
//! The programs are built once per process (with `seccompiler`, from the rust-vmm project) and
//! installed between `fork` and `exec` with one system call.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, sock_filter,
};

/// Which filter a command gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Policy {
    /// Whether `socket(AF_UNIX, …)` is allowed.
    pub unix_sockets: bool,
    /// Whether the command has a PID namespace of its own, so it cannot name other processes and
    /// the calls that act on a process by its id need no filter.
    pub own_pid_namespace: bool,
}

/// The filter for `policy`, built once per process; `None` where this architecture has no
/// filter (the first result says so).
pub(super) fn program(policy: Policy) -> Option<&'static [sock_filter]> {
    static PROGRAMS: [OnceLock<Option<BpfProgram>>; 4] = [const { OnceLock::new() }; 4];
    let slot = usize::from(policy.unix_sockets) * 2 + usize::from(policy.own_pid_namespace);
    PROGRAMS[slot].get_or_init(|| build(policy)).as_deref()
}

/// Installs `program` on the calling thread (no new privileges must be set already).
///
/// # Safety
/// Only one system call on memory the caller keeps alive: callable between `fork` and `exec`.
pub(super) unsafe fn install(program: &[sock_filter]) -> bool {
    let fprog = libc::sock_fprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: the kernel copies the program from `fprog`, which points at `program`.
    unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0,
            &fprog as *const libc::sock_fprog,
        ) == 0
    }
}

fn build(policy: Policy) -> Option<BpfProgram> {
    let arch = target_arch()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut deny = |syscall: libc::c_long, when: Vec<Vec<SeccompCondition>>| {
        let entry = rules.entry(syscall).or_default();
        for conditions in when {
            entry.push(SeccompRule::new(conditions).expect("conditions are given"));
        }
    };

    // Always: the terminal, devices, keyrings, the kernel log, file handles.
    deny(
        libc::SYS_ioctl,
        vec![
            vec![arg_eq(1, request(libc::TIOCSTI))],
            vec![arg_eq(1, request(libc::TIOCLINUX))],
        ],
    );
    let devices = |index: u8| {
        vec![
            vec![arg_masked(index, libc::S_IFMT, libc::S_IFCHR)],
            vec![arg_masked(index, libc::S_IFMT, libc::S_IFBLK)],
        ]
    };
    #[cfg(target_arch = "x86_64")]
    deny(libc::SYS_mknod, devices(1));
    deny(libc::SYS_mknodat, devices(2));
    if !policy.unix_sockets {
        deny(
            libc::SYS_socket,
            vec![vec![arg_eq(0, libc::AF_UNIX as u64)]],
        );
    }
    for syscall in [
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_syslog,
        libc::SYS_open_by_handle_at,
        libc::SYS_reboot,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_iopl,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_ioperm,
    ] {
        deny(syscall, Vec::new());
    }

    // Without a PID namespace: nothing that acts on another process by its id.
    if !policy.own_pid_namespace {
        for syscall in [
            libc::SYS_prlimit64,
            libc::SYS_sched_setaffinity,
            libc::SYS_sched_setscheduler,
            libc::SYS_sched_setparam,
            libc::SYS_sched_setattr,
        ] {
            deny(syscall, vec![vec![arg_ne(0, 0)]]);
        }
        // setpriority(which, who, _) and ioprio_set(which, who, _): only the caller itself
        // (who = 0, as a process or its own group); never "every process of this user".
        deny(
            libc::SYS_setpriority,
            vec![vec![arg_eq(0, libc::PRIO_USER as u64)], vec![arg_ne(1, 0)]],
        );
        const IOPRIO_WHO_USER: u64 = 3;
        deny(
            libc::SYS_ioprio_set,
            vec![vec![arg_eq(0, IOPRIO_WHO_USER)], vec![arg_ne(1, 0)]],
        );
    }

    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .ok()?;
    let mut program: BpfProgram = filter.try_into().ok()?;
    deny_other_abi_numbers(&mut program);
    Some(program)
}

fn target_arch() -> Option<seccompiler::TargetArch> {
    std::env::consts::ARCH.try_into().ok()
}

/// An `ioctl` request number as an argument value (`c_ulong` with glibc, `c_int` with musl).
#[allow(clippy::unnecessary_cast)]
pub(super) fn request(number: libc::Ioctl) -> u64 {
    number as u64
}

/// Compares an argument's low 32 bits, as the kernel reads an `int` or `unsigned int` argument
/// (a value with high bits set is the same value to the kernel).
fn arg_eq(index: u8, value: u64) -> SeccompCondition {
    condition(index, SeccompCmpOp::Eq, value)
}

fn arg_ne(index: u8, value: u64) -> SeccompCondition {
    condition(index, SeccompCmpOp::Ne, value)
}

fn arg_masked(index: u8, mask: libc::mode_t, value: libc::mode_t) -> SeccompCondition {
    condition(
        index,
        SeccompCmpOp::MaskedEq(u64::from(mask)),
        u64::from(value),
    )
}

fn condition(index: u8, op: SeccompCmpOp, value: u64) -> SeccompCondition {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value)
        .expect("argument index is below 6")
}

/// On x86-64, the x32 ABI reaches the same calls under numbers with bit 30 set: right after the
/// architecture check, every such number answers `ENOSYS`. (Elsewhere there is nothing to add:
/// the architecture check already kills other ABIs.)
fn deny_other_abi_numbers(program: &mut BpfProgram) {
    if cfg!(target_arch = "x86_64") {
        const X32_SYSCALL_BIT: u32 = 0x4000_0000;
        const LOAD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, offset 0: seccomp_data.nr
        const JUMP_GE: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
        const RETURN: u16 = 0x06; // BPF_RET | BPF_K
        let guard = [
            sock_filter {
                code: LOAD_NR,
                jt: 0,
                jf: 0,
                k: 0,
            },
            sock_filter {
                code: JUMP_GE,
                jt: 0,
                jf: 1,
                k: X32_SYSCALL_BIT,
            },
            sock_filter {
                code: RETURN,
                jt: 0,
                jf: 0,
                k: libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
            },
        ];
        // seccompiler's program starts with the three instructions of the architecture check,
        // whose match jumps to the fourth: the guard goes there.
        let at = ARCH_CHECK_LEN.min(program.len());
        program.splice(at..at, guard);
    }
}

/// The instructions seccompiler's architecture check takes at the start of a program.
const ARCH_CHECK_LEN: usize = 3;

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
