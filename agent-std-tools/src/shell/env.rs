//! The environment a command starts with: built from an allowlist, never by filtering the agent's.
//!
//! A denylist of secret-looking names always misses one (`DATABASE_URL` with its password,
//! `PGPASSWORD`, `SSH_AUTH_SOCK`, `SENTRY_DSN`, …), so commands get only the variables named in
//! [`DEFAULT_ENV_ALLOWLIST`] (plus `LC_*`), those the user adds in
//! [`ShellConfig::env_passthrough`](super::ShellConfig::env_passthrough), and the values set in
//! [`ShellConfig::env`](super::ShellConfig::env). `TMPDIR` points at the call's private temporary
//! directory.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use super::ShellConfig;

/// Variables a command inherits from the agent unless configured otherwise: what programs need
/// to find themselves, their locale and their terminal. None of them holds a credential.
pub const DEFAULT_ENV_ALLOWLIST: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "COLORTERM",
    "NO_COLOR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
];

/// Whether the agent's variable `name` is handed to commands under `config`.
fn inherited(name: &OsStr, config: &ShellConfig) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    DEFAULT_ENV_ALLOWLIST.contains(&name)
        || name.starts_with("LC_")
        || config.env_passthrough.iter().any(|allowed| allowed == name)
}

/// The whole environment of a command: allowlisted variables of the agent, then the configured
/// values, then `TMPDIR` (and its twins) at the call's private temporary directory.
pub(super) fn command_env(config: &ShellConfig, tmp: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| inherited(name, config))
        .collect();
    let mut set = |name: OsString, value: OsString| {
        env.retain(|(n, _)| *n != name);
        env.push((name, value));
    };
    for (name, value) in &config.env {
        set(name.into(), value.into());
    }
    for name in ["TMPDIR", "TMP", "TEMP"] {
        set(name.into(), tmp.as_os_str().to_owned());
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowlisted_names_are_inherited() {
        let config = ShellConfig::default();
        for name in ["PATH", "HOME", "LC_ALL", "LC_CTYPE"] {
            assert!(inherited(OsStr::new(name), &config), "{name}");
        }
        for name in [
            "DATABASE_URL",
            "PGPASSWORD",
            "SSH_AUTH_SOCK",
            "OPENAI_APIKEY",
            "AWS_ACCESS_KEY_ID",
            "path",
        ] {
            assert!(!inherited(OsStr::new(name), &config), "{name}");
        }
    }

    #[test]
    fn configured_names_and_values_are_added() {
        let config = ShellConfig {
            env_passthrough: vec!["CI".into()],
            env: vec![("GREETING".into(), "hi".into())],
            ..ShellConfig::default()
        };
        assert!(inherited(OsStr::new("CI"), &config));
        let env = command_env(&config, Path::new("/tmp/x"));
        assert!(env.contains(&("GREETING".into(), "hi".into())));
        assert!(env.contains(&("TMPDIR".into(), "/tmp/x".into())));
    }
}
