//! The filters run on a small classic-BPF interpreter over `seccomp_data` as the kernel lays it
//! out, so every rule is checked on both sides of its condition, on every argument width and ABI.
//! (The tests in `tests/shell/shell_isolation/` attack the installed filter with real programs.)

use super::*;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

/// `struct seccomp_data`: nr, arch, instruction pointer, six arguments (little-endian).
fn data(arch: u32, nr: u32, args: [u64; 6]) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend(nr.to_le_bytes());
    bytes.extend(arch.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    for arg in args {
        bytes.extend(arg.to_le_bytes());
    }
    bytes
}

/// Runs `program` on `data` with the semantics of the kernel's classic BPF.
fn run(program: &[sock_filter], data: &[u8]) -> u32 {
    let word = |at: u32| {
        let at = at as usize;
        u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
    };
    let (mut a, mut pc) = (0u32, 0usize);
    loop {
        let i = &program[pc];
        pc += 1;
        let jump = |taken: bool| usize::from(if taken { i.jt } else { i.jf });
        match i.code {
            0x20 => a = word(i.k),            // ld [k]
            0x00 => a = i.k,                  // ld #k
            0x54 => a &= i.k,                 // and #k
            0x05 => pc += i.k as usize,       // ja
            0x15 => pc += jump(a == i.k),     // jeq #k
            0x25 => pc += jump(a > i.k),      // jgt #k
            0x35 => pc += jump(a >= i.k),     // jge #k
            0x45 => pc += jump(a & i.k != 0), // jset #k
            0x06 => return i.k,               // ret #k
            code => panic!("instruction {code:#x} is not interpreted here"),
        }
    }
}

fn native_arch() -> u32 {
    if cfg!(target_arch = "x86_64") {
        62 | 0x8000_0000 | 0x4000_0000
    } else if cfg!(target_arch = "aarch64") {
        183 | 0x8000_0000 | 0x4000_0000
    } else {
        243 | 0x8000_0000 | 0x4000_0000
    }
}

fn call(policy: Policy, nr: libc::c_long, args: [u64; 6]) -> u32 {
    let program = program(policy).expect("a filter for this architecture");
    run(program, &data(native_arch(), nr as u32, args))
}

const CONFINED: Policy = Policy {
    unix_sockets: false,
    own_pid_namespace: false,
};
const ISOLATED: Policy = Policy {
    unix_sockets: false,
    own_pid_namespace: true,
};

#[test]
fn terminal_injection_is_denied_and_other_ioctls_pass() {
    for policy in [CONFINED, ISOLATED] {
        let tiocsti = request(libc::TIOCSTI);
        assert_eq!(
            call(policy, libc::SYS_ioctl, [0, tiocsti, 0, 0, 0, 0]),
            EPERM
        );
        // The kernel reads the request as 32 bits: high bits do not hide it.
        let hidden = tiocsti | 0xffff_ffff_0000_0000;
        assert_eq!(
            call(policy, libc::SYS_ioctl, [0, hidden, 0, 0, 0, 0]),
            EPERM
        );
        let tioclinux = request(libc::TIOCLINUX);
        assert_eq!(
            call(policy, libc::SYS_ioctl, [0, tioclinux, 0, 0, 0, 0]),
            EPERM
        );
        let tcgets = request(libc::TCGETS);
        assert_eq!(
            call(policy, libc::SYS_ioctl, [0, tcgets, 0, 0, 0, 0]),
            ALLOW
        );
    }
}

#[test]
fn device_files_cannot_be_made_but_fifos_and_files_can() {
    let mode = |kind: libc::mode_t| u64::from(kind | 0o644);
    for kind in [libc::S_IFCHR, libc::S_IFBLK] {
        assert_eq!(
            call(
                CONFINED,
                libc::SYS_mknodat,
                [0, 0, mode(kind), 0x0500, 0, 0]
            ),
            EPERM
        );
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            call(CONFINED, libc::SYS_mknod, [0, mode(kind), 0x0500, 0, 0, 0]),
            EPERM
        );
    }
    for kind in [libc::S_IFIFO, libc::S_IFREG, libc::S_IFSOCK] {
        assert_eq!(
            call(CONFINED, libc::SYS_mknodat, [0, 0, mode(kind), 0, 0, 0]),
            ALLOW
        );
    }
}

#[test]
fn unix_sockets_are_refused_unless_allowed() {
    let unix = libc::AF_UNIX as u64;
    let stream = libc::SOCK_STREAM as u64;
    assert_eq!(
        call(CONFINED, libc::SYS_socket, [unix, stream, 0, 0, 0, 0]),
        EPERM
    );
    let inet = libc::AF_INET as u64;
    assert_eq!(
        call(CONFINED, libc::SYS_socket, [inet, stream, 0, 0, 0, 0]),
        ALLOW
    );
    assert_eq!(
        call(CONFINED, libc::SYS_socketpair, [unix, stream, 0, 0, 0, 0]),
        ALLOW
    );
    let allowed = Policy {
        unix_sockets: true,
        ..CONFINED
    };
    assert_eq!(
        call(allowed, libc::SYS_socket, [unix, stream, 0, 0, 0, 0]),
        ALLOW
    );
}

#[test]
fn other_processes_cannot_be_limited_or_slowed_without_a_pid_namespace() {
    let agent = 4242u64;
    for nr in [
        libc::SYS_prlimit64,
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
    ] {
        assert_eq!(call(CONFINED, nr, [agent, 0, 0, 0, 0, 0]), EPERM, "{nr}");
        assert_eq!(call(CONFINED, nr, [0, 0, 0, 0, 0, 0]), ALLOW, "{nr}");
        // A pid the kernel reads as 0 is the caller itself; one it reads as 4242 is not.
        assert_eq!(call(CONFINED, nr, [1 << 32, 0, 0, 0, 0, 0]), ALLOW, "{nr}");
        assert_eq!(
            call(CONFINED, nr, [agent | 1 << 32, 0, 0, 0, 0, 0]),
            EPERM,
            "{nr}"
        );
        assert_eq!(call(ISOLATED, nr, [agent, 0, 0, 0, 0, 0]), ALLOW, "{nr}");
    }
    let (process, group, user) = (
        libc::PRIO_PROCESS as u64,
        libc::PRIO_PGRP as u64,
        libc::PRIO_USER as u64,
    );
    assert_eq!(
        call(CONFINED, libc::SYS_setpriority, [process, 0, 19, 0, 0, 0]),
        ALLOW
    );
    assert_eq!(
        call(CONFINED, libc::SYS_setpriority, [group, 0, 19, 0, 0, 0]),
        ALLOW
    );
    assert_eq!(
        call(
            CONFINED,
            libc::SYS_setpriority,
            [process, agent, 19, 0, 0, 0]
        ),
        EPERM
    );
    assert_eq!(
        call(CONFINED, libc::SYS_setpriority, [user, 0, 19, 0, 0, 0]),
        EPERM
    );
    assert_eq!(
        call(CONFINED, libc::SYS_ioprio_set, [1, 0, 0, 0, 0, 0]),
        ALLOW
    );
    assert_eq!(
        call(CONFINED, libc::SYS_ioprio_set, [1, agent, 0, 0, 0, 0]),
        EPERM
    );
    assert_eq!(
        call(CONFINED, libc::SYS_ioprio_set, [3, 0, 0, 0, 0, 0]),
        EPERM
    );
}

#[test]
fn keyrings_the_kernel_log_and_file_handles_are_denied() {
    for nr in [
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_syslog,
        libc::SYS_open_by_handle_at,
        libc::SYS_settimeofday,
        libc::SYS_reboot,
    ] {
        assert_eq!(call(ISOLATED, nr, [0; 6]), EPERM, "{nr}");
    }
    for nr in [
        libc::SYS_read,
        libc::SYS_openat,
        libc::SYS_clone,
        libc::SYS_execve,
    ] {
        assert_eq!(call(ISOLATED, nr, [0; 6]), ALLOW, "{nr}");
    }
}

#[test]
fn other_abis_do_not_reach_the_same_calls() {
    let program = program(CONFINED).unwrap();
    if cfg!(target_arch = "x86_64") {
        let x32 = 0x4000_0000 | libc::SYS_prlimit64 as u32;
        assert_eq!(
            run(program, &data(native_arch(), x32, [4242, 0, 0, 0, 0, 0])),
            ENOSYS
        );
        let x32_getpid = 0x4000_0000 | libc::SYS_getpid as u32;
        assert_eq!(
            run(program, &data(native_arch(), x32_getpid, [0; 6])),
            ENOSYS
        );
    }
    let i386 = 3 | 0x4000_0000;
    assert_eq!(
        run(program, &data(i386, 0, [0; 6])),
        libc::SECCOMP_RET_KILL_PROCESS
    );
}
