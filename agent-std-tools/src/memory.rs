//! `remember` and `recall`: a persistent key-value memory in [redb], an embedded transactional
//! store (copy-on-write B-trees, every commit flushed to disk before it returns).
//!
//! - **Where**: `<workspace>/.agent/memory.redb`, created through the sandbox (a `.agent` or
//!   `memory.redb` that is a symbolic link out of the workspace is refused), or the file named by
//!   [`MemoryConfig::path`].
//! - **Durable**: a `remember` that returned is on disk; killing the process afterwards loses
//!   nothing, and killing it half-way leaves the previous state (redb's commits are atomic).
//! - **Concurrent callers**: each call runs one transaction. Calls in one process take turns
//!   through a lock per database file, so parallel `remember`s (from several registries, sessions
//!   or tasks) never lose a write. The database stays open while calls keep coming and is closed
//!   [`LINGER`] (1 s) after the last one. Another process that wants it meanwhile (redb locks the
//!   file while it is open) waits up to [`MemoryConfig::lock_wait`], then gets a
//!   [`SkillError::Transient`] error, which the registry retries. Within one batch of calls,
//!   `remember` is not concurrency-safe, so a `recall` after it in the same turn sees its write.
//!
//! [redb]: https://docs.rs/redb

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use agent_core::{SkillContext, SkillError, skill};
use redb::{Database, DatabaseError, ReadableTable, TableDefinition, TableError};

use crate::sandbox::Workspace;

/// Where the memory lives. Put one in the context with [`SkillContext::with_extension`]; without
/// one, the database is `<workspace>/.agent/memory.redb`.
///
/// ```
/// use agent_core::SkillContext;
/// use agent_std_tools::MemoryConfig;
///
/// let ctx = SkillContext::new(".").with_extension(MemoryConfig::at("/var/lib/agent/memory.redb"));
/// # let _ = ctx;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryConfig {
    /// The database file. A relative path is relative to the workspace root. `None` (the
    /// default): `.agent/memory.redb` in the workspace. A path set here is the user's choice, so
    /// it is not confined to the workspace.
    pub path: Option<PathBuf>,
    /// How long a call waits for another process that has the database open before it fails
    /// with a [`SkillError::Transient`] error (which the registry retries). Default 5 s.
    pub lock_wait: Duration,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            path: None,
            lock_wait: Duration::from_secs(5),
        }
    }
}

impl MemoryConfig {
    /// Memory kept in the database file at `path`.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        MemoryConfig {
            path: Some(path.into()),
            ..MemoryConfig::default()
        }
    }
}

/// The default database, relative to the workspace root.
pub const DEFAULT_MEMORY_PATH: &str = ".agent/memory.redb";

/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 512;

/// The longest value, in bytes.
pub const MAX_VALUE_BYTES: usize = 100_000;

const TABLE: TableDefinition<&str, &str> = TableDefinition::new("memory");

/// Remember a piece of information across sessions under a key, replacing what was stored under
/// that key before. Use it for facts worth keeping: the user's preferences, decisions, where
/// things are in the project.
///
/// # Arguments
/// * `key` - A short name for the memory, e.g. `test-command` or `user.preferred-style`.
/// * `value` - What to remember.
#[skill(search_hint = "memory store save note persist fact")]
pub async fn remember(
    ctx: &SkillContext,
    key: String,
    value: String,
) -> Result<String, SkillError> {
    let key = check_key(&key, "key")?;
    if value.len() > MAX_VALUE_BYTES {
        return Err(SkillError::bad_args(
            "value",
            format!(
                "is {} bytes; at most {MAX_VALUE_BYTES} can be remembered under one key",
                value.len()
            ),
        ));
    }
    let file = DbFile::for_context(ctx)?;
    blocking(move || {
        file.with_db(|db| {
            let txn = db.begin_write().map_err(store_error)?;
            let replaced = {
                let mut table = txn.open_table(TABLE).map_err(store_error)?;
                let old = table
                    .insert(key.as_str(), value.as_str())
                    .map_err(store_error)?;
                old.is_some()
            };
            txn.commit().map_err(store_error)?;
            Ok(if replaced {
                format!("Remembered `{key}` (replacing what was stored under it).")
            } else {
                format!("Remembered `{key}`.")
            })
        })
    })
    .await
}

/// Recall what was remembered: the value stored under `key`; or every memory whose key or value
/// contains `query`; or, with neither, the list of keys.
///
/// # Arguments
/// * `key` - The exact key to look up.
/// * `query` - Text to look for in keys and values (case-insensitive).
#[skill(read_only, search_hint = "memory recall lookup remembered notes facts")]
pub async fn recall(
    ctx: &SkillContext,
    key: Option<String>,
    query: Option<String>,
) -> Result<String, SkillError> {
    if key.is_some() && query.is_some() {
        return Err(SkillError::bad_args(
            "query",
            "give either `key` (exact lookup) or `query` (search), not both",
        ));
    }
    let key = key.map(|k| check_key(&k, "key")).transpose()?;
    let file = DbFile::for_context(ctx)?;
    blocking(move || {
        file.with_db(|db| {
            let txn = db.begin_read().map_err(store_error)?;
            let table = match txn.open_table(TABLE) {
                Ok(table) => Some(table),
                Err(TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(store_error(e)),
            };
            let Some(table) = table else {
                return Ok("Nothing has been remembered yet.".to_owned());
            };
            if let Some(key) = key {
                return Ok(match table.get(key.as_str()).map_err(store_error)? {
                    Some(value) => value.value().to_owned(),
                    None => format!(
                        "Nothing is remembered under `{key}`. Call recall without arguments to list the keys."
                    ),
                });
            }
            let mut lines = Vec::new();
            let needle = query.as_deref().map(str::to_lowercase);
            for entry in table.iter().map_err(store_error)? {
                let (k, v) = entry.map_err(store_error)?;
                let (k, v) = (k.value(), v.value());
                match &needle {
                    None => lines.push(k.to_owned()),
                    Some(needle) => {
                        if k.to_lowercase().contains(needle) || v.to_lowercase().contains(needle) {
                            lines.push(format!("{k}: {v}"));
                        }
                    }
                }
            }
            Ok(match (&query, lines.is_empty()) {
                (None, true) => "Nothing has been remembered yet.".to_owned(),
                (Some(q), true) => format!("No memory contains `{q}`."),
                _ => lines.join("\n"),
            })
        })
    })
    .await
}

fn check_key(key: &str, field: &str) -> Result<String, SkillError> {
    let key = key.trim();
    if key.is_empty() {
        return Err(SkillError::bad_args(field, "must not be empty"));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(SkillError::bad_args(
            field,
            format!("is {} bytes; keys are at most {MAX_KEY_BYTES}", key.len()),
        ));
    }
    Ok(key.to_owned())
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SkillError> + Send + 'static,
) -> Result<T, SkillError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(SkillError::from_error)?
}

fn store_error(e: impl Into<redb::Error>) -> SkillError {
    let e: redb::Error = e.into();
    SkillError::from_error(format!("the memory database failed: {e}"))
}

/// The database file of a call, opened (not yet locked by redb).
struct DbFile {
    file: File,
    shown: String,
    lock_wait: Duration,
}

impl DbFile {
    fn for_context(ctx: &SkillContext) -> Result<DbFile, SkillError> {
        let config = ctx.extension::<MemoryConfig>().cloned().unwrap_or_default();
        let lock_wait = config.lock_wait;
        match config.path {
            Some(path) => {
                let path = if path.is_absolute() {
                    path
                } else {
                    ctx.workspace_root().join(path)
                };
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(SkillError::from_error)?;
                }
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&path)
                    .map_err(|e| {
                        SkillError::tool(format!(
                            "cannot open the memory database `{}`: {e}",
                            path.display()
                        ))
                    })?;
                Ok(DbFile {
                    file,
                    shown: path.display().to_string(),
                    lock_wait,
                })
            }
            None => {
                let ws = Workspace::from_context(ctx)?;
                let dir = std::path::Path::new(DEFAULT_MEMORY_PATH)
                    .parent()
                    .expect("the default path has a directory");
                match ws.dir().create_dir(dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(ws.fs_error(&dir.to_string_lossy(), e)),
                }
                let file = ws
                    .dir()
                    .open_with(
                        DEFAULT_MEMORY_PATH,
                        cap_std::fs::OpenOptions::new()
                            .read(true)
                            .write(true)
                            .create(true),
                    )
                    .map_err(|e| ws.fs_error(DEFAULT_MEMORY_PATH, e))?;
                Ok(DbFile {
                    file: file.into_std(),
                    shown: DEFAULT_MEMORY_PATH.to_owned(),
                    lock_wait,
                })
            }
        }
    }

    /// Runs `work` on the database, taking turns with the other calls of this process on the same
    /// file. The database stays open while calls keep coming and is closed [`LINGER`] after the
    /// last one, which lets other processes in.
    fn with_db<T>(
        self,
        work: impl FnOnce(&Database) -> Result<T, SkillError>,
    ) -> Result<T, SkillError> {
        let slot = slot_for(&self.file)?;
        let mut guard = slot.lock().unwrap_or_else(|p| p.into_inner());
        if guard.db.is_none() {
            guard.db = Some(self.open()?);
        }
        let db = guard.db.as_ref().expect("opened above");
        let result = work(db);
        guard.last_used = Instant::now();
        if !guard.closer {
            guard.closer = true;
            let slot = slot.clone();
            std::thread::spawn(move || close_when_idle(&slot));
        }
        result
    }

    /// Opens the database, waiting up to `lock_wait` for another process that holds it.
    fn open(&self) -> Result<Database, SkillError> {
        let deadline = Instant::now() + self.lock_wait;
        loop {
            // redb takes the file; a duplicate keeps ours for another attempt.
            let attempt = self.file.try_clone().map_err(SkillError::from_error)?;
            match redb::Builder::new().create_file(attempt) {
                Ok(db) => return Ok(db),
                Err(DatabaseError::DatabaseAlreadyOpen) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(DatabaseError::DatabaseAlreadyOpen) => {
                    return Err(SkillError::Transient(format!(
                        "the memory database `{}` is in use by another process",
                        self.shown
                    )));
                }
                Err(e) => return Err(store_error(e)),
            }
        }
    }
}

/// How long an open database stays open after its last call.
pub const LINGER: Duration = Duration::from_secs(1);

/// A database file's state in this process: whose turn it is, and the open handle.
struct Slot {
    db: Option<Database>,
    last_used: Instant,
    closer: bool,
}

/// Closes the database once no call used it for [`LINGER`].
fn close_when_idle(slot: &Mutex<Slot>) {
    loop {
        let wait = {
            let mut guard = slot.lock().unwrap_or_else(|p| p.into_inner());
            let idle = guard.last_used.elapsed();
            if idle >= LINGER {
                guard.db = None; // closes the file and releases redb's lock
                guard.closer = false;
                return;
            }
            LINGER - idle
        };
        std::thread::sleep(wait);
    }
}

/// The slot of a database file (by device and inode) in this process.
fn slot_for(file: &File) -> Result<Arc<Mutex<Slot>>, SkillError> {
    use std::os::unix::fs::MetadataExt;
    type Slots = HashMap<(u64, u64), Arc<Mutex<Slot>>>;
    static SLOTS: LazyLock<Mutex<Slots>> = LazyLock::new(Default::default);
    let meta = file.metadata().map_err(SkillError::from_error)?;
    let mut slots = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
    Ok(slots
        .entry((meta.dev(), meta.ino()))
        .or_insert_with(|| {
            Arc::new(Mutex::new(Slot {
                db: None,
                last_used: Instant::now(),
                closer: false,
            }))
        })
        .clone())
}
