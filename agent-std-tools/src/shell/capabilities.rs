//! The capabilities a confined command keeps: [`KEPT`], nothing else.
//!
//! A command run by an agent that is root (as in many containers) would otherwise hold every
//! capability root has: setting the clock (`CAP_SYS_TIME`), rebooting (`CAP_SYS_BOOT`), making
//! device files (`CAP_MKNOD`), marking files immutable so the agent can no longer write them
//! (`CAP_LINUX_IMMUTABLE`), changing its user (`CAP_SETUID`), reading the kernel log
//! (`CAP_SYSLOG`), opening any file by handle (`CAP_DAC_READ_SEARCH`), and so on. What commands
//! need inside the workspace was decided from `cargo build`, `git`, `npm install` and
//! `python3 -m venv` run there as root: none of them needs a capability for files that root owns;
//! [`KEPT`] lets root's commands read and write the workspace's files whoever owns them, as the
//! agent can.
//!
//! Before `exec`, every other capability leaves the bounding set (so no program the command runs
//! gets it back, setuid or not), and the permitted, effective and inheritable sets and the
//! ambient set are cut to [`KEPT`]. An ordinary user's command holds no capability anyway; in a
//! user namespace of its own ([`super::namespaces`]) a command's capabilities count only inside
//! it, and are cut the same way.
//!
//! Everything here runs between `fork` and `exec` (async-signal-safe system calls only).

/// Capabilities a confined command keeps: `CAP_DAC_OVERRIDE` (read and write files whatever
/// their mode says, as the root agent can) and `CAP_FOWNER` (change the mode and times of files it
/// does not own). Numbers from `linux/capability.h`.
pub const KEPT: &[u32] = &[1, 3];

/// The highest capability number a kernel may know (`CAP_LAST_CAP` is 40 in Linux 6.x).
const LAST_POSSIBLE: u32 = 63;

const VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct Header {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The [`KEPT`] capabilities as the two 32-bit words of the kernel's sets.
fn kept_words() -> [u32; 2] {
    let mut words = [0u32; 2];
    for &capability in KEPT {
        words[(capability / 32) as usize] |= 1 << (capability % 32);
    }
    words
}

/// Cuts this process's capabilities to [`KEPT`]: the bounding set first (which needs
/// `CAP_SETPCAP`, held by root and by a process in a user namespace of its own), then the
/// permitted, effective and inheritable sets, then the ambient set. Returns whether no capability
/// outside [`KEPT`] is left that a program it runs could use (see [`only_kept_left`]).
///
/// # Safety
/// Only async-signal-safe system calls on this frame's memory: callable between `fork` and `exec`.
pub(super) unsafe fn restrict() -> bool {
    let kept = kept_words();
    // SAFETY (whole body): prctl and capget/capset on structs this frame owns.
    unsafe {
        for capability in 0..=LAST_POSSIBLE {
            if KEPT.contains(&capability) {
                continue;
            }
            // EINVAL past the kernel's last capability; EPERM without CAP_SETPCAP (checked below).
            libc::prctl(libc::PR_CAPBSET_DROP, capability as libc::c_ulong, 0, 0, 0);
        }
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let mut data = [Data::default(); 2];
        if libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) == 0 {
            for (word, kept) in data.iter_mut().zip(kept) {
                word.effective &= kept;
                word.permitted &= kept;
                word.inheritable &= kept;
            }
            header.version = VERSION_3;
            libc::syscall(libc::SYS_capset, &mut header, data.as_ptr());
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
        only_kept_left(kept)
    }
}

/// Whether no capability outside [`KEPT`] is left in the permitted, effective or inheritable
/// set (the ambient set is a subset of those). With no new privileges set before `exec`, the
/// kernel gives a program no capability its process was not permitted, so these sets decide;
/// a bounding set that could not be cut (no `CAP_SETPCAP`) only loses the second layer.
unsafe fn only_kept_left(kept: [u32; 2]) -> bool {
    // SAFETY: capget writes into this frame's structs.
    unsafe {
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let mut data = [Data::default(); 2];
        if libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) != 0 {
            return false;
        }
        data.iter()
            .zip(kept)
            .all(|(word, kept)| (word.effective | word.permitted | word.inheritable) & !kept == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_capabilities_are_dac_override_and_fowner_only() {
        assert_eq!(kept_words(), [0b1010, 0]);
    }
}
