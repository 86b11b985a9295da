//! A pids cgroup per call: at most [`super::ShellConfig::max_processes`] processes and threads,
//! for commands of a root agent, which `RLIMIT_NPROC` does not limit.
//!
//! Where the agent may create cgroups in the `pids` hierarchy (root, with the cgroup filesystem
//! mounted writable: cgroup v1's `pids` hierarchy, or cgroup v2 with the `pids` controller
//! available to the agent's cgroup), each call gets a cgroup of its own below the agent's
//! (`eugene-shell-<pid>-<n>`), with `pids.max` set. The supervisor moves itself into it
//! before it starts the command, so the command and everything it starts are counted; a `fork`
//! past the limit fails with `EAGAIN` ("Resource temporarily unavailable"), and `pids.events`
//! tells the result that it happened. The cgroup is removed when the call ends. The command
//! cannot move itself out: the cgroup filesystem is read-only inside the sandbox.
//!
//! Where no cgroup can be made (an ordinary user, a container with `/sys/fs/cgroup` read-only),
//! an ordinary user's commands are limited by `RLIMIT_NPROC` in their user namespace
//! ([`super::namespaces`]); a root agent's are not limited, and the first result says so.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// One call's pids cgroup; removed on drop.
#[derive(Debug)]
pub(super) struct PidsCgroup {
    dir: PathBuf,
    procs: File,
}

impl PidsCgroup {
    /// Creates a cgroup for one call allowing `max` tasks (plus the supervisor), or `None` where
    /// none can be made.
    pub fn create(max: usize) -> Option<PidsCgroup> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let parent = parent()?;
        let dir = parent.join(format!(
            "eugene-shell-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir).ok()?;
        let cgroup = (|| {
            // The supervisor is one of the tasks.
            std::fs::write(dir.join("pids.max"), (max + 1).to_string()).ok()?;
            let procs = File::options()
                .write(true)
                .open(dir.join("cgroup.procs"))
                .ok()?;
            Some(procs)
        })();
        match cgroup {
            Some(procs) => Some(PidsCgroup { dir, procs }),
            None => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The open `cgroup.procs`: writing `0` to it moves the writing process into the cgroup.
    pub fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// Whether a `fork` was refused because the cgroup was full (`pids.events`' `max` count).
    pub fn limit_was_hit(&self) -> bool {
        std::fs::read_to_string(self.dir.join("pids.events"))
            .ok()
            .and_then(|events| {
                events
                    .lines()
                    .find_map(|line| line.strip_prefix("max "))
                    .and_then(|n| n.trim().parse::<u64>().ok())
            })
            .is_some_and(|n| n > 0)
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Empty once the supervisor has exited, which it does after every process of the
        // command is gone. Where one is still dying (the supervisor itself had to be killed),
        // a thread tries again for a while; a cgroup that stays busy is left to the kernel and
        // counted in no later call.
        if std::fs::remove_dir(&self.dir).is_err() {
            let dir = std::mem::take(&mut self.dir);
            let _ = std::thread::Builder::new()
                .name("eugene-cgroup-cleanup".into())
                .spawn(move || {
                    for _ in 0..100 {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        if std::fs::remove_dir(&dir).is_ok() {
                            return;
                        }
                    }
                });
        }
    }
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is open as `procs`.
///
/// # Safety
/// One `write` system call: callable between `fork` and `exec`.
pub(super) unsafe fn join(procs: RawFd) -> bool {
    // SAFETY: writes one byte from a constant.
    unsafe { libc::write(procs, b"0".as_ptr().cast(), 1) == 1 }
}

/// The agent's own cgroup in a hierarchy with the `pids` controller, where calls' cgroups go;
/// found once per process.
fn parent() -> Option<&'static Path> {
    static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
    PARENT
        .get_or_init(|| {
            let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
            let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
            find_parent(&mountinfo, &membership).filter(|dir| writable_pids(dir))
        })
        .as_deref()
}

/// Whether calls' cgroups can be made in `dir` with the pids controller: always on cgroup v1,
/// on v2 when `pids` is (or can be) enabled for `dir`'s children.
fn writable_pids(dir: &Path) -> bool {
    let subtree = dir.join("cgroup.subtree_control");
    match std::fs::read_to_string(&subtree) {
        // cgroup v1 has no subtree_control: the hierarchy is the pids controller's own.
        Err(_) => dir.join("pids.max").exists() || dir.join("cgroup.procs").exists(),
        Ok(enabled) if enabled.split_whitespace().any(|c| c == "pids") => true,
        Ok(_) => File::options()
            .write(true)
            .open(&subtree)
            .and_then(|mut file| file.write_all(b"+pids"))
            .is_ok(),
    }
}

/// The directory of the agent's cgroup in the pids hierarchy, from `/proc/self/mountinfo` and
/// `/proc/self/cgroup`: cgroup v1's `pids` hierarchy first, else the v2 one when it offers `pids`.
fn find_parent(mountinfo: &str, membership: &str) -> Option<PathBuf> {
    let mut v2 = None;
    for line in mountinfo.lines() {
        // 36 35 98:0 /root /mnt/point rw,noatime master:1 - cgroup cgroup rw,pids
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(point), Some(fstype)) = (fields.get(3), fields.get(4), right.first())
        else {
            continue;
        };
        let options = right.get(2).copied().unwrap_or("");
        if *fstype == "cgroup" && options.split(',').any(|o| o == "pids") {
            let path = membership.lines().find_map(|line| {
                let mut parts = line.splitn(3, ':');
                let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                controllers.split(',').any(|c| c == "pids").then_some(path)
            })?;
            return Some(join_below(point, root, path));
        }
        if *fstype == "cgroup2" && v2.is_none() {
            let path = membership.lines().find_map(|line| line.strip_prefix("0::"));
            if let Some(path) = path {
                let dir = join_below(point, root, path);
                let controllers =
                    std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
                if controllers.split_whitespace().any(|c| c == "pids") {
                    v2 = Some(dir);
                }
            }
        }
    }
    v2
}

/// `point` (where the hierarchy's `root` is mounted) joined with the cgroup `path`.
fn join_below(point: &str, root: &str, path: &str) -> PathBuf {
    let inside = path.strip_prefix(root).unwrap_or(path);
    Path::new(point).join(inside.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v1_pids_hierarchy_is_found_from_mountinfo_and_membership() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n\
             39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
             41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let membership = "8:pids:/user.slice\n4:memory:/x\n0::/\n";
        assert_eq!(
            find_parent(mountinfo, membership),
            Some(PathBuf::from("/sys/fs/cgroup/pids/user.slice"))
        );
    }

    #[test]
    fn a_mount_of_a_subtree_is_joined_below_its_root() {
        assert_eq!(
            join_below("/sys/fs/cgroup", "/docker/abc", "/docker/abc/inner"),
            PathBuf::from("/sys/fs/cgroup/inner")
        );
        assert_eq!(
            join_below("/sys/fs/cgroup", "/", "/"),
            PathBuf::from("/sys/fs/cgroup/")
        );
    }
}
