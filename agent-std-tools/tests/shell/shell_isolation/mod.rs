//! `run_shell` attacked where the first sandbox left ways out (the second audit): the user's
//! terminal through a device file made in the workspace, the agent disabled with `prlimit` and
//! `renice`, a root command's capabilities, a fork bomb, Unix sockets by path, a `TMPDIR` nested
//! past the open-file limit. Real commands in real processes: a real terminal (a pseudo-terminal
//! with a real `sh` reading it afterwards), a real agent process as root and as `nobody`, with
//! and without user namespaces.
//!
//! They need Linux with Landlock (ABI 6) and user namespaces; they fail and say so without them.

use crate::common;

mod agent;
mod capabilities;
mod processes;
mod terminal;

/// Fails the test, saying what is missing, unless this is root: the attacks of a root command
/// (capabilities, device files) and the runs as another user need it.
fn require_root() {
    // SAFETY: reads this process's effective user id.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test attacks as a root agent would: run the tests as root (CI does)"
    );
}

/// The unprivileged user the agent process runs as in the tests for ordinary users.
const NOBODY: u32 = 65534;
