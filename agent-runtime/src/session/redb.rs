//! [`RedbSessionStore`]: sessions in one [redb] file, an embedded transactional store, so several
//! processes on one machine share them.
//!
//! The file handling and the version check are described on [`RedbSessionStore`].

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ::redb::{Database, DatabaseError, ReadableTable, TableDefinition, TableError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::claims::PauseClaims;
use super::error::StoreError;
use super::store::{LoadedSession, SessionRecord, SessionStore, next_version};

/// Session id → the session's version and data, as JSON.
const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("sessions");

/// Pause id → when it was claimed (seconds since the Unix epoch): [`PauseClaims`].
const CLAIMED: TableDefinition<&str, u64> = TableDefinition::new("claimed pauses");

/// Sessions in a redb file, shared by the processes of one machine.
///
/// redb lets one process have a file open at a time. The store therefore opens the file for each
/// load or save and closes it after; a process that finds it open elsewhere waits (up to
/// [`RedbSessionStore::with_wait`], 5 s by default) and tries again. A save reads the stored
/// version and writes the new one in one write transaction, so its version check is atomic.
///
/// **Size.** The file starts at about 3.6 MB (1.6 MB of it on disk; the rest is sparse) however
/// little it holds: redb lays a file out in regions with their allocator state, and sizes it in
/// steps, not per session. Sessions fill that space first: 200 more small sessions, each saved
/// twice, left the length at 3,686,400 B and added 60 KB on disk (measured by the test
/// `a_redb_files_size_is_a_fixed_layout_plus_what_the_sessions_hold`). redb 2 offers no setting
/// for a smaller layout outside its own tests, so the store does not try to shrink it.
#[derive(Debug, Clone)]
pub struct RedbSessionStore {
    path: PathBuf,
    wait: Duration,
}

/// What one session's value holds.
#[derive(Serialize, Deserialize)]
struct Record {
    version: u64,
    data: SessionRecord,
}

impl RedbSessionStore {
    /// A store in the file at `path`, created (with its directory) on the first save.
    pub fn open(path: impl Into<PathBuf>) -> Self {
        RedbSessionStore {
            path: path.into(),
            wait: Duration::from_secs(5),
        }
    }

    /// How long to wait for another process that has the file open (default 5 s).
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the database, waiting for another process to close it. `None`: there is no file and
    /// `create` is false.
    fn database(&self, create: bool) -> Result<Option<Database>, StoreError> {
        if !create && !self.path.exists() {
            return Ok(None);
        }
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| backend(&self.path, e))?;
        }
        let deadline = Instant::now() + self.wait;
        loop {
            match Database::create(&self.path) {
                Ok(db) => return Ok(Some(db)),
                Err(DatabaseError::DatabaseAlreadyOpen) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(error) => return Err(backend(&self.path, error)),
            }
        }
    }

    fn load_now(&self, id: &str) -> Result<Option<LoadedSession>, StoreError> {
        let Some(db) = self.database(false)? else {
            return Ok(None);
        };
        let read = db.begin_read().map_err(|e| backend(&self.path, e))?;
        let table = match read.open_table(SESSIONS) {
            Ok(table) => table,
            Err(TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(error) => return Err(backend(&self.path, error)),
        };
        let Some(value) = table.get(id).map_err(|e| backend(&self.path, e))? else {
            return Ok(None);
        };
        let record = decode(id, value.value())?;
        Ok(Some(LoadedSession {
            data: record.data,
            version: record.version,
        }))
    }

    fn save_now(
        &self,
        id: &str,
        data: &SessionRecord,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        let db = self.database(true)?.expect("created");
        let write = db.begin_write().map_err(|e| backend(&self.path, e))?;
        let version = {
            let mut table = write
                .open_table(SESSIONS)
                .map_err(|e| backend(&self.path, e))?;
            let found = match table.get(id).map_err(|e| backend(&self.path, e))? {
                Some(value) => Some(decode(id, value.value())?.version),
                None => None,
            };
            let version = next_version(id, expected, found)?;
            let bytes = serde_json::to_vec(&Record {
                version,
                data: data.clone(),
            })
            .map_err(|e| StoreError::Backend(format!("cannot encode session `{id}`: {e}")))?;
            table
                .insert(id, bytes.as_slice())
                .map_err(|e| backend(&self.path, e))?;
            version
        };
        // Dropped without commit on any error above: nothing is written.
        write.commit().map_err(|e| backend(&self.path, e))?;
        Ok(version)
    }
}

impl RedbSessionStore {
    fn claim_now(&self, pause_id: &str) -> Result<bool, StoreError> {
        let db = self.database(true)?.expect("created");
        let write = db.begin_write().map_err(|e| backend(&self.path, e))?;
        let first = {
            let mut table = write
                .open_table(CLAIMED)
                .map_err(|e| backend(&self.path, e))?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let before = table
                .insert(pause_id, now)
                .map_err(|e| backend(&self.path, e))?;
            before.is_none()
        };
        if !first {
            // Claimed before: leave the record as it was.
            return Ok(false);
        }
        write.commit().map_err(|e| backend(&self.path, e))?;
        Ok(true)
    }
}

/// Claims are kept in the same file, in a table of their own, in one write transaction each, so
/// processes that share the file claim each pause once. Restoring an old copy of the file
/// restores its claims too: keep the claims of states kept in this file in another file.
#[async_trait]
impl PauseClaims for RedbSessionStore {
    async fn claim(&self, pause_id: &str) -> Result<bool, StoreError> {
        let (store, id) = (self.clone(), pause_id.to_owned());
        blocking(move || store.claim_now(&id)).await
    }
}

#[async_trait]
impl SessionStore for RedbSessionStore {
    async fn load(&self, id: &str) -> Result<Option<LoadedSession>, StoreError> {
        let (store, id) = (self.clone(), id.to_owned());
        blocking(move || store.load_now(&id)).await
    }

    async fn save(
        &self,
        id: &str,
        data: &SessionRecord,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        let (store, id, data) = (self.clone(), id.to_owned(), data.clone());
        blocking(move || store.save_now(&id, &data, expected)).await
    }
}

/// Runs file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Backend(format!("the session store's task failed: {e}")))?
}

fn decode(id: &str, bytes: &[u8]) -> Result<Record, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        id: id.to_owned(),
        message: e.to_string(),
    })
}

fn backend(path: &Path, error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("{}: {error}", path.display()))
}
