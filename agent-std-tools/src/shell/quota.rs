//! The optional quota on what a call adds to the disk ([`super::ShellConfig::max_disk_growth`]):
//! the free space of the filesystems the command may write (the workspace's and `TMPDIR`'s) is
//! read when the call starts and then every [`POLL`], and the call is stopped, like one past its
//! time limit, once the space they lost together passes the quota.
//!
//! Free space is one `statvfs` per filesystem: cheap enough to read often, whatever the
//! workspace holds. What it cannot tell apart: other writers on the same filesystems count too
//! (a quota is for a filesystem the agent has to itself, or a generous one), and a command that
//! writes faster than the quota per [`POLL`] can pass it by what it writes in that time, which
//! [`super::ShellConfig::max_file_size`] bounds per file.

use std::path::Path;
use std::time::Duration;

/// How often the free space is read.
pub(super) const POLL: Duration = Duration::from_millis(20);

/// The filesystems a call may write, and their free space when it started.
pub(super) struct Quota {
    limit: u64,
    watched: Vec<(std::ffi::CString, u64)>,
}

impl Quota {
    /// A quota of `limit` bytes over the filesystems of `paths` (each counted once).
    pub(super) fn start(limit: u64, paths: &[&Path]) -> Quota {
        let mut watched: Vec<(std::ffi::CString, u64, u64)> = Vec::new();
        for path in paths {
            let Ok(name) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
                continue;
            };
            let Some((device, free)) = stat(&name) else {
                continue;
            };
            if !watched.iter().any(|(_, d, _)| *d == device) {
                watched.push((name, device, free));
            }
        }
        Quota {
            limit,
            watched: watched.into_iter().map(|(n, _, f)| (n, f)).collect(),
        }
    }

    /// The bytes the filesystems lost since the call started.
    fn used(&self) -> u64 {
        self.watched
            .iter()
            .map(|(name, before)| stat(name).map_or(0, |(_, free)| before.saturating_sub(free)))
            .sum()
    }

    /// Resolves when the quota is passed (never when nothing could be watched): how much was
    /// added.
    pub(super) async fn passed(&self) -> u64 {
        if self.watched.is_empty() {
            return std::future::pending().await;
        }
        loop {
            let used = self.used();
            if used > self.limit {
                return used;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The quota, in bytes.
    pub(super) fn limit(&self) -> u64 {
        self.limit
    }
}

/// The filesystem's device (`st_dev`: `f_fsid` is 0 on some filesystems) and its free space
/// (for an unprivileged writer), in bytes.
fn stat(path: &std::ffi::CStr) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let device = std::fs::metadata(std::ffi::OsStr::from_bytes(path.to_bytes()))
        .ok()?
        .dev();
    // SAFETY: `statvfs` writes the struct it is given and reads the NUL-terminated path.
    let mut info: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut info) } != 0 {
        return None;
    }
    Some((
        device,
        (info.f_bavail as u64).saturating_mul(info.f_frsize as u64),
    ))
}
