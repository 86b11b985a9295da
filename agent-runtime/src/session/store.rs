//! What a session keeps ([`SessionRecord`]), the [`SessionStore`] trait with its version check, and
//! [`MemorySessionStore`].

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::runtime::RunState;
use agent_llm::message::Message;

use super::error::StoreError;

/// What a session keeps: the conversation, and the paused run when it waits for a decision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The conversation so far.
    pub transcript: Vec<Message>,
    /// The run paused for approval, if the session's last run did.
    pub paused: Option<RunState>,
    /// The seal a runtime with [`StateKeys`](crate::StateKeys) puts on what it saves, over the
    /// session's id and the two fields above; checked when it loads the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<crate::runtime::Seal>,
}

/// A session as loaded: its data and the version to name when saving it back.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSession {
    /// The data.
    pub data: SessionRecord,
    /// The version read; [`SessionStore::save`] refuses to write over any other.
    pub version: u64,
}

/// Where sessions are kept. Implementations must make [`SessionStore::save`] atomic with its
/// version check: of two saves naming the same version, exactly one succeeds.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// The session `id`, or `None` when there is none.
    async fn load(&self, id: &str) -> Result<Option<LoadedSession>, StoreError>;

    /// Saves `data` as session `id` if the stored version is still `expected` (`None`: the
    /// session must not exist yet), and returns the new version; otherwise
    /// [`StoreError::Conflict`] and nothing is written.
    async fn save(
        &self,
        id: &str,
        data: &SessionRecord,
        expected: Option<u64>,
    ) -> Result<u64, StoreError>;
}

/// A [`SessionStore`] in memory, for tests and for processes that keep their sessions to
/// themselves. [`RedbSessionStore`](super::RedbSessionStore) keeps them on disk.
///
/// It is also a [`PauseClaims`](super::PauseClaims) for the states of one process.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    sessions: Mutex<HashMap<String, (u64, SessionRecord)>>,
    claimed: Mutex<std::collections::HashSet<String>>,
}

#[async_trait]
impl super::PauseClaims for MemorySessionStore {
    async fn claim(&self, pause_id: &str) -> Result<bool, StoreError> {
        let mut claimed = self.claimed.lock().unwrap_or_else(|p| p.into_inner());
        Ok(claimed.insert(pause_id.to_owned()))
    }
}

#[async_trait]
impl SessionStore for MemorySessionStore {
    async fn load(&self, id: &str) -> Result<Option<LoadedSession>, StoreError> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        Ok(sessions.get(id).map(|(version, data)| LoadedSession {
            data: data.clone(),
            version: *version,
        }))
    }

    async fn save(
        &self,
        id: &str,
        data: &SessionRecord,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let found = sessions.get(id).map(|(version, _)| *version);
        next_version(id, expected, found).inspect(|&version| {
            sessions.insert(id.to_owned(), (version, data.clone()));
        })
    }
}

/// The version a save writes, if the stored one (`found`) is the `expected` one.
pub(crate) fn next_version(
    id: &str,
    expected: Option<u64>,
    found: Option<u64>,
) -> Result<u64, StoreError> {
    if found != expected {
        return Err(StoreError::Conflict {
            id: id.to_owned(),
            expected,
            found: found.unwrap_or(0),
        });
    }
    Ok(found.map_or(1, |v| v + 1))
}
