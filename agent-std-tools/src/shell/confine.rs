//! The Landlock sandbox around a command: what it may read, write and reach.
//!
//! The ruleset is built here, in the agent, before the command is started (opening the allowed
//! folders needs memory and may fail with a message); the command's process only calls
//! `landlock_restrict_self` on it between `fork` and `exec` (by the per-call supervisor).
//!
//! | right | where |
//! |---|---|
//! | read, execute | the system's program, library and configuration folders ([`SYSTEM_READ_PATHS`]), `/sys`, the toolchains under the home directory ([`toolchain_paths`]), [`ShellConfig::read_paths`]; `/proc` (the command's own, added by the command's process once it is mounted) |
//! | read, write, create, delete, rename, link, truncate | the workspace, the call's private temporary directory, the toolchains' caches, [`ShellConfig::write_paths`] |
//! | read, write | `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom` |
//! | make character or block devices, device `ioctl`s | nowhere: a device file made in the workspace could reach the user's terminal or the kernel log ([`write_access`]) |
//! | TCP connect and bind | nowhere, unless [`ShellConfig::network`] |
//! | signals, abstract Unix sockets | only to processes of the same sandbox (Landlock scopes, ABI 6) |
//!
//! Landlock also keeps a sandboxed process from `ptrace`-ing processes outside its sandbox, and
//! the kernel applies that rule to `/proc/<pid>/environ`, `/proc/<pid>/mem` and the like: the
//! agent's environment and memory are unreadable to the commands it runs. Everything else (the
//! home directory with `~/.ssh` and `~/.aws`, other projects, `/tmp`, `/root`) is neither
//! readable nor writable.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

use super::ShellConfig;

/// Folders every command may read and execute from: where programs, their libraries and the
/// system's configuration live.
pub const SYSTEM_READ_PATHS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/run/current-system",
    "/sys",
];

/// The rights on the folders commands may write: everything Landlock knows but making character
/// and block devices and `ioctl` on devices (`/dev/null` and the like get only read and write).
pub fn write_access(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev)
}

/// The rights on `/proc`: reading (bits every Landlock ABI handles).
pub(super) fn proc_access() -> u64 {
    AccessFs::from_read(ABI::V1).bits()
}

/// Device files a command may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The Landlock ABI version the running kernel offers (0 when it offers none).
pub(super) fn kernel_abi() -> i32 {
    // SAFETY: `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` only returns the
    // ABI version (or -1 with ENOSYS/EOPNOTSUPP); it reads and writes no memory of ours.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    i32::try_from(abi).unwrap_or(0).max(0)
}

/// What the kernel leaves unconfined, in a sentence for the result, or `None` when everything
/// this module asks for is enforced.
pub(super) fn gaps(abi: i32, network_allowed: bool) -> Option<String> {
    match abi {
        0 => Some(
            "this kernel offers no Landlock sandbox, so the command ran with the agent's rights: \
             it could read and write any of the agent's files, use the network and signal the \
             agent's processes"
                .to_owned(),
        ),
        1..=3 if !network_allowed => Some(format!(
            "this kernel's Landlock (ABI {abi}) confines files only: the command could use the \
             network and signal the agent's processes"
        )),
        1..=5 => Some(format!(
            "this kernel's Landlock (ABI {abi}) does not scope signals: the command could signal \
             the agent's processes"
        )),
        _ => None,
    }
}

/// The home-directory folders of the toolchains a coding agent's commands use: Rust's (`cargo`,
/// `rustup`), `~/.local/bin` and `~/.local/lib`, and the Python and Node version managers'
/// (`~/.pyenv`, `~/.nvm`, `~/.volta`). Read-only, except the package caches cargo writes to (and its lock
/// files), so `cargo build` works offline, and npm's cache (`~/.npm`), so `npm install` works.
/// Git's own configuration (`~/.gitconfig`, `~/.config/git/`) is readable: git stops at a
/// configuration file it may not read. `~/.cargo/credentials.toml`, `~/.npmrc` (where npm keeps
/// tokens) and `~/.git-credentials` are not among them.
pub fn toolchain_paths(home: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".cargo"));
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".rustup"));
    let read = vec![
        cargo.join("bin"),
        cargo.join("config.toml"),
        cargo.join("config"),
        rustup,
        home.join(".local/bin"),
        home.join(".local/lib"),
        home.join(".pyenv"),
        home.join(".nvm"),
        home.join(".volta"),
        home.join(".gitconfig"),
        home.join(".config/git"),
    ];
    let write = vec![
        cargo.join("registry"),
        cargo.join("git"),
        cargo.join(".package-cache"),
        cargo.join(".package-cache-mutate"),
        cargo.join(".global-cache"),
        home.join(".npm"),
    ];
    (read, write)
}

/// Builds the ruleset for one command, or `None` when the kernel offers no Landlock. The folders
/// that do not exist are skipped.
pub(super) fn ruleset(
    config: &ShellConfig,
    workspace: &Path,
    tmp: &Path,
    home: Option<&Path>,
) -> Result<Option<OwnedFd>, String> {
    let abi = ABI::V6;
    let (mut read, mut write): (Vec<PathBuf>, Vec<PathBuf>) = match home {
        Some(home) => toolchain_paths(home),
        None => (Vec::new(), Vec::new()),
    };
    read.extend(SYSTEM_READ_PATHS.iter().map(PathBuf::from));
    read.extend(config.read_paths.iter().cloned());
    write.extend([workspace.to_path_buf(), tmp.to_path_buf()]);
    write.extend(config.write_paths.iter().cloned());
    let devices: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();

    let fail = |e: landlock::RulesetError| format!("could not build the shell's sandbox: {e}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(fail)?;
    if !config.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(fail)?;
    }
    let created = ruleset
        .scope(Scope::from_all(abi))
        .map_err(fail)?
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(
            existing(&read),
            AccessFs::from_read(abi),
        ))
        .map_err(fail)?
        .add_rules(path_beneath_rules(existing(&write), write_access(abi)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(
            existing(&devices),
            AccessFs::ReadFile | AccessFs::WriteFile,
        ))
        .map_err(fail)?;
    Ok(created.into())
}

fn existing(paths: &[PathBuf]) -> Vec<&Path> {
    paths
        .iter()
        .map(PathBuf::as_path)
        .filter(|p| p.exists())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_name_what_each_abi_leaves_open() {
        assert!(gaps(0, false).unwrap().contains("no Landlock"));
        assert!(gaps(3, false).unwrap().contains("network"));
        assert!(gaps(3, true).unwrap().contains("signal"));
        assert!(gaps(5, false).unwrap().contains("signal"));
        assert_eq!(gaps(6, false), None);
        assert_eq!(gaps(7, true), None);
    }

    #[test]
    fn written_folders_get_no_device_rights() {
        let rights = write_access(ABI::V6);
        assert!(!rights.contains(AccessFs::MakeChar));
        assert!(!rights.contains(AccessFs::MakeBlock));
        assert!(!rights.contains(AccessFs::IoctlDev));
        assert!(rights.contains(AccessFs::WriteFile | AccessFs::MakeReg | AccessFs::RemoveDir));
        assert!(rights.contains(AccessFs::MakeFifo | AccessFs::MakeSock | AccessFs::Truncate));
    }

    #[test]
    fn credentials_are_not_among_the_toolchain_paths() {
        let (read, write) = toolchain_paths(Path::new("/home/u"));
        for path in read.iter().chain(&write) {
            assert!(!path.ends_with("credentials.toml"), "{}", path.display());
            assert!(!path.ends_with(".npmrc"), "{}", path.display());
            assert!(!path.ends_with(".git-credentials"), "{}", path.display());
            assert!(!path.starts_with("/home/u/.ssh"), "{}", path.display());
            assert_ne!(path, Path::new("/home/u"));
        }
    }
}
