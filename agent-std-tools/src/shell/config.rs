//! [`ShellConfig`]: the limits and the sandbox of `run_shell`, and [`Confinement`], whether there
//! is one.

use std::path::PathBuf;
use std::time::Duration;

/// Whether `run_shell` confines its commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Confinement {
    /// Confined with Landlock where the kernel offers it; where it does not, commands run
    /// unconfined and the first result says so. The default.
    #[default]
    BestEffort,
    /// Refuse to run a command the kernel cannot confine fully: files, network and signals
    /// (Landlock ABI 6), namespaces of its own with its own `/proc`, a process limit, cut
    /// capabilities and the seccomp filter. Nothing runs when one is missing, and the error says
    /// which.
    Required,
    /// No sandbox: commands run with the agent's rights. They still get the allowlisted
    /// environment, and nothing they start outlives the call.
    Off,
}

/// Limits and sandbox of `run_shell`. Put one in the context with
/// [`SkillContext::with_extension`](agent_core::SkillContext::with_extension); without one, [`ShellConfig::default`] applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellConfig {
    /// The time limit when the call gives no `timeout_ms`. Default 120 s.
    pub default_timeout: Duration,
    /// The largest `timeout_ms` a call may ask for. Default 600 s.
    pub max_timeout: Duration,
    /// How many characters of stdout, and as many of stderr, the result keeps (half from the
    /// start, half from the end). Default 7,500, so both fit the registry's default budget.
    pub max_output_chars: usize,
    /// Whether commands are sandboxed. Default [`Confinement::BestEffort`].
    pub confinement: Confinement,
    /// Whether commands may open TCP connections and listen on ports. Default `false`.
    pub network: bool,
    /// More folders (or files) commands may read and execute, beyond the system's and the
    /// workspace.
    pub read_paths: Vec<PathBuf>,
    /// More folders (or files) commands may write, beyond the workspace and their temporary
    /// directory.
    pub write_paths: Vec<PathBuf>,
    /// More variables of the agent's environment to hand to commands, by exact name, beyond
    /// [`DEFAULT_ENV_ALLOWLIST`](super::env::DEFAULT_ENV_ALLOWLIST).
    pub env_passthrough: Vec<String>,
    /// Variables set for every command (they win over inherited ones).
    pub env: Vec<(String, String)>,
    /// Whether the first call makes the agent's process non-dumpable
    /// ([`harden_process`](super::harden_process)), so that commands cannot read its environment
    /// or memory through `/proc/<pid>/`. Default `true` (ignored with [`Confinement::Off`]).
    pub harden_agent: bool,
    /// How many processes and threads one call may have at once, the command included. Default
    /// 1,024 (a `cargo build` on 64 cores stays well below). A `fork` past it fails with "Resource
    /// temporarily unavailable", and the result says the limit was reached. Kept by a pids cgroup
    /// for a root agent where one can be made, else by `RLIMIT_NPROC` in the command's user
    /// namespace (see [the module docs](super)); ignored with [`Confinement::Off`].
    pub max_processes: usize,
    /// Whether commands may create Unix sockets (to connect to one by path: a Docker daemon's,
    /// an SSH agent's, D-Bus). Default `false`: such a socket can be a way out of the sandbox
    /// (the Docker socket starts containers as root). `socketpair` works either way.
    pub unix_sockets: bool,
    /// The largest file a command may write, in bytes (`RLIMIT_FSIZE`: a write past it fails
    /// with "File too large" and the writer gets `SIGXFSZ`). Default `None`: no limit but the
    /// disk's. It bounds each file, not their sum: give the workspace a filesystem of its own
    /// (a quota, a tmpfs) to bound the total.
    pub max_file_size: Option<u64>,
    /// The most a call may add to the disk, in bytes: the free space of the workspace's and
    /// `TMPDIR`'s filesystems is read every 20 ms, and a call whose command made them lose more
    /// is stopped (every process killed) and says so. Default `None`. Other writers on the same
    /// filesystems count too, and a command may pass it by what it writes in 20 ms (see
    /// `shell/quota.rs`).
    pub max_disk_growth: Option<u64>,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            max_output_chars: 7_500,
            confinement: Confinement::BestEffort,
            network: false,
            read_paths: Vec::new(),
            write_paths: Vec::new(),
            env_passthrough: Vec::new(),
            env: Vec::new(),
            harden_agent: true,
            max_processes: 1_024,
            unix_sockets: false,
            max_file_size: None,
            max_disk_growth: None,
        }
    }
}
