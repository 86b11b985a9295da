//! Why a session could not be loaded or saved: its own file, so that [`AgentError`](
//! crate::AgentError) can carry it without the runtime and the sessions importing each other.

/// Why a session could not be loaded or saved.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Someone saved the session since it was read: this save was refused, and nothing was
    /// written. Load it again and decide.
    #[error(
        "session `{id}` changed since it was read (read version {expected:?}, now {found}): \
         another run saved it first; load it again"
    )]
    Conflict {
        /// The session.
        id: String,
        /// The version this save expected (`None`: that the session did not exist).
        expected: Option<u64>,
        /// The version in the store.
        found: u64,
    },
    /// The stored data cannot be read (damaged, or written by an incompatible version).
    #[error("session `{id}` cannot be read: {message}")]
    Corrupt {
        /// The session.
        id: String,
        /// What is wrong.
        message: String,
    },
    /// The store itself failed (a file, a lock held too long, a database).
    #[error("the session store failed: {0}")]
    Backend(String),
}
