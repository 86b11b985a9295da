//! `remember` and `recall`: a persistent key-value memory in [redb], an embedded transactional
//! store (copy-on-write B-trees, every commit flushed to disk before it returns).
//!
//! - **Where**: `<workspace>/.agent/memory.redb`, created through the sandbox by the first
//!   `remember`, or the file named by [`MemoryConfig::path`]. A `recall` before that answers
//!   "Nothing has been remembered yet." and creates nothing (no `.agent`, no file).
//! - **Never through a link**: the default store is opened without following a symbolic link at
//!   `.agent` or at `memory.redb`, wherever it points (out of the workspace or to a file inside
//!   it, which the store would overwrite). Such a link is a [`SkillError::Safety`] refusal that
//!   says to remove it; a `.agent` that is not a directory, or a `memory.redb` that is not a
//!   regular file, is refused too. The store is opened first and checked after (non-blocking,
//!   then `fstat`), so a FIFO or device put in its place at any moment is refused, never handed
//!   to redb; the same holds for a store at [`MemoryConfig::path`].
//! - **Never through a hard link**: a default store whose file has other names (`st_nlink` > 1)
//!   is refused the same way, for `recall` too: the other name may be a file outside the
//!   workspace, and redb writes to a file it opens even to read it (it marks the file in use, and
//!   repairs one that was not closed cleanly). The refusal says to delete the name in `.agent`,
//!   which leaves the other file as it is. (A store at [`MemoryConfig::path`] is the user's
//!   choice and is opened as it is, links included.) The other skills that write files
//!   (`write_file`, `apply_patch`) write a temporary file and rename it into place, which
//!   replaces a hard link's name rather than writing into the file it shares.
//! - **Damaged**: a store redb cannot read (truncated, overwritten) is an error that names the
//!   file, says it is damaged and that moving it away or deleting it starts a new store; the file
//!   is kept, not reset. redb panics on some damage; those panics are caught.
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

mod store;

use std::path::PathBuf;
use std::time::Duration;

use agent_core::{SkillContext, SkillError, skill};
use redb::{ReadableTable, TableDefinition, TableError};

use crate::blocking::blocking;
pub use store::LINGER;
use store::{Create, DbFile, store_error};

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
    let Some(file) = DbFile::for_context(ctx, Create::Yes)? else {
        return Err(SkillError::tool("the memory store could not be created"));
    };
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
    // Reading creates nothing: no store yet means nothing was remembered.
    let Some(file) = DbFile::for_context(ctx, Create::No)? else {
        return Ok(NOTHING_YET.to_owned());
    };
    blocking(move || {
        file.with_db(|db| {
            let txn = db.begin_read().map_err(store_error)?;
            let table = match txn.open_table(TABLE) {
                Ok(table) => Some(table),
                Err(TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(store_error(e)),
            };
            let Some(table) = table else {
                return Ok(NOTHING_YET.to_owned());
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
                (None, true) => NOTHING_YET.to_owned(),
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

/// What `recall` answers when nothing is stored.
const NOTHING_YET: &str = "Nothing has been remembered yet.";
