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
//! - **Limits**: a key is at most [`MAX_KEY_BYTES`] (512), a value [`MAX_VALUE_BYTES`]
//!   (100,000); a store holds at most [`MemoryConfig::max_keys`] keys (default [`MAX_KEYS`],
//!   10,000) and takes nothing more once its file has reached [`MemoryConfig::max_store_bytes`]
//!   (default [`MAX_STORE_BYTES`], 64 MiB). redb grows a full file by doubling it (when a write
//!   needs room, and when it closes the file), so the write that crosses the limit can take the
//!   file to about twice the limit, and no further; filled with memories of 30 KB or of 100 KB,
//!   stores stopped at 72 MB and at 68 MB. A
//!   `remember` past a limit is refused before anything is written, with an error that gives the
//!   limit and what to do (replace what an existing key holds; ask the user to move the full
//!   store away).
//! - **Bounded answers**: `recall` reads the store one memory at a time and keeps only what its
//!   answer shows, at most [`MemoryConfig::max_recall_chars`] (default 15,000); past that a
//!   search only counts what else matches, and the answer ends with a notice of how many did.
//!   With one value (which `recall` by `key` returns whole) and redb's cache of
//!   [`CACHE_BYTES`] (4 MiB), that is all it holds, so a store of any size, such as one an older
//!   version let grow to a gigabyte, is read in bounded memory. The time a search takes grows
//!   with the store; it stops when the call's time limit passes or its run is cancelled.
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

mod answer;
mod store;

use std::path::PathBuf;
use std::time::Duration;

use agent_core::{SkillContext, SkillError, skill};
use redb::{ReadableTable, ReadableTableMetadata, TableDefinition, TableError};

use crate::blocking::{blocking, blocking_until_stopped};
use crate::units::binary_size;
pub use store::{CACHE_BYTES, LINGER};
use store::{Create, DbFile, store_error};

/// Where the memory lives, and its limits. Put one in the context with
/// [`SkillContext::with_extension`]; without one, the database is
/// `<workspace>/.agent/memory.redb` and the limits are the defaults below.
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
    /// The most keys a store holds; a `remember` of a new key past it is refused (one that
    /// replaces what a key holds is not). Default [`MAX_KEYS`].
    pub max_keys: usize,
    /// The size of the store's file, in bytes, from which it takes nothing more. Default
    /// [`MAX_STORE_BYTES`].
    pub max_store_bytes: u64,
    /// The most characters a `recall` of many memories (a listing or a search) shows; a notice
    /// says how many there were in all. Default 15,000, so that the answer with its notice fits
    /// the registry's default budget of 16,000.
    pub max_recall_chars: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            path: None,
            lock_wait: Duration::from_secs(5),
            max_keys: MAX_KEYS,
            max_store_bytes: MAX_STORE_BYTES,
            max_recall_chars: 15_000,
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

/// The most keys a store holds, by default ([`MemoryConfig::max_keys`]). A listing of them all
/// would be 5 MB at most.
pub const MAX_KEYS: usize = 10_000;

/// The size of a store's file from which it takes nothing more, by default
/// ([`MemoryConfig::max_store_bytes`]): 64 MiB, room for [`MAX_KEYS`] memories of 1 KB (a
/// 17 MB file) or for some 250 of the longest (each takes a page of 128 KiB).
pub const MAX_STORE_BYTES: u64 = 64 << 20;

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
                "is {} bytes; at most {MAX_VALUE_BYTES} can be remembered under one key; \
                 remember a summary, or keep the text in a file with write_file and remember \
                 its path",
                value.len()
            ),
        ));
    }
    let config = config(ctx);
    let Some(file) = DbFile::for_context(ctx, Create::Yes)? else {
        return Err(SkillError::tool("the memory store could not be created"));
    };
    blocking(move || {
        file.with_db(|db, file| {
            // Checked with the store open, so no other caller writes in between.
            let len = file.len()?;
            if len >= config.max_store_bytes {
                return Err(full(file.shown(), len, config.max_store_bytes));
            }
            let txn = db.begin_write().map_err(store_error)?;
            let replaced = {
                let mut table = txn.open_table(TABLE).map_err(store_error)?;
                let exists = table.get(key.as_str()).map_err(store_error)?.is_some();
                let keys = table.len().map_err(store_error)?;
                if !exists && keys >= config.max_keys as u64 {
                    // Dropping the transaction aborts it: nothing was written.
                    return Err(SkillError::tool(format!(
                        "the memory store `{}` holds {keys} keys, the most it may hold; nothing \
                         was remembered. Store this under a key that exists instead, to replace \
                         what it holds (recall without arguments lists the keys, a `query` finds \
                         them)",
                        file.shown()
                    )));
                }
                table
                    .insert(key.as_str(), value.as_str())
                    .map_err(store_error)?;
                exists
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
    let max_chars = config(ctx).max_recall_chars;
    // Reading creates nothing: no store yet means nothing was remembered.
    let Some(file) = DbFile::for_context(ctx, Create::No)? else {
        return Ok(NOTHING_YET.to_owned());
    };
    blocking_until_stopped(ctx, move |stop| {
        file.with_db(|db, _| {
            let txn = db.begin_read().map_err(store_error)?;
            let table = match txn.open_table(TABLE) {
                Ok(table) => table,
                Err(TableError::TableDoesNotExist(_)) => return Ok(NOTHING_YET.to_owned()),
                Err(e) => return Err(store_error(e)),
            };
            match (key, query) {
                (Some(key), _) => Ok(match table.get(key.as_str()).map_err(store_error)? {
                    Some(value) => value.value().to_owned(),
                    None => format!(
                        "Nothing is remembered under `{key}`. Call recall without arguments to list the keys."
                    ),
                }),
                (None, Some(query)) => answer::search(&table, &query, max_chars, stop),
                (None, None) => answer::list_keys(&table, max_chars, stop),
            }
        })
    })
    .await
}

fn config(ctx: &SkillContext) -> MemoryConfig {
    ctx.extension::<MemoryConfig>().cloned().unwrap_or_default()
}

/// The refusal of a `remember` on a store whose file is `len` bytes, `max` or more.
fn full(shown: &str, len: u64, max: u64) -> SkillError {
    SkillError::tool(format!(
        "the memory store `{shown}` is {len} bytes, at or over its limit of {max} bytes ({}); \
         nothing was remembered. What it holds can still be recalled. To make room, the user can \
         move the file away or delete it (the next `remember` starts a new, empty store), or \
         raise `MemoryConfig::max_store_bytes`",
        binary_size(max)
    ))
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
