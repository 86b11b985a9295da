//! [`CassetteError`]: why a cassette could not be read, written, recorded or replayed.

use std::path::PathBuf;

use super::limits::MODE_VAR;

/// Why a cassette could not be read, recorded, written or replayed. Every variant names the
/// cassette's file; a malformed one names the line too.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The cassette.
        path: PathBuf,
        /// What the system said, and what was being done.
        message: String,
    },
    /// The file is not a cassette: where, and what is wrong there. Nothing was replayed.
    #[error("{}{}: not a cassette: {message}", path.display(), location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Malformed {
        /// The cassette.
        path: PathBuf,
        /// The line and column (from 1) where the problem is, when the YAML parser knows it
        /// (it does for every problem but an alias bomb's repetition limit).
        location: Option<(usize, usize)>,
        /// What is wrong there.
        message: String,
    },
    /// The file is larger than a cassette may be ([`MAX_CASSETTE_BYTES`](super::MAX_CASSETTE_BYTES)):
    /// it was not read.
    #[error("{}: {size} bytes is more than the {limit} bytes a cassette may have; it was not read", path.display())]
    TooLarge {
        /// The cassette.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Replay was asked for and the file does not exist.
    #[error(
        "{}: no such cassette. Record it once against the real API: run the test with \
         {MODE_VAR}=record and the API key in the environment (e.g. `{MODE_VAR}=record \
         ANTHROPIC_API_KEY=... cargo test NAME`), then commit the file",
        path.display()
    )]
    Missing {
        /// The cassette.
        path: PathBuf,
    },
    /// [`MODE_VAR`](super::MODE_VAR) holds something other than `record` or `replay`.
    #[error("{MODE_VAR}={value:?} is not a cassette mode: use `record` or `replay` (the default)")]
    Mode {
        /// What it holds.
        value: String,
    },
    /// Recording needs the real key and the variable that should hold it is unset or empty.
    #[error("{MODE_VAR}=record needs the real API key in {var}, which is unset or empty")]
    ApiKey {
        /// The environment variable.
        var: String,
    },
    /// A secret the recording was given (a redacted header's or query parameter's value, or one
    /// named with [`RecordingProxy::secret`](super::RecordingProxy::secret)) still appears in
    /// what would be written: the cassette was not written. The secret itself is never shown.
    #[error("{}: not written: {what}", path.display())]
    Secret {
        /// The cassette.
        path: PathBuf,
        /// Which secret (by where it came from) and where it appears.
        what: String,
    },
    /// What was recorded cannot make a cassette (an answer that broke off, a compressed or
    /// binary body, too much of it, requests still unanswered): nothing was written.
    #[error("{}: not written: {message}", path.display())]
    Recording {
        /// The cassette.
        path: PathBuf,
        /// What is wrong, exchange by exchange.
        message: String,
    },
    /// Replay did not go as recorded: requests no recorded interaction matched, or recorded
    /// interactions no request used.
    #[error("{}: {message}", path.display())]
    Replay {
        /// The cassette.
        path: PathBuf,
        /// What differed, with the diffs.
        message: String,
    },
    /// The replay server or recording proxy could not start (no loopback port, a bad upstream
    /// URL, the TLS settings).
    #[error("cannot start the cassette's server: {0}")]
    Start(String),
}
