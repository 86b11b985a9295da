//! The memory store's file: found and opened (never through a symbolic or hard link at the
//! default place), opened as a redb database with a small cache (waiting for another process that
//! holds it, damage reported as such), and shared by the calls of this process, one at a time,
//! closed [`LINGER`] after the last one.

use std::collections::HashMap;
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use agent_core::{SkillContext, SkillError};
use redb::{Database, DatabaseError, StorageError};

use super::{DEFAULT_MEMORY_PATH, MemoryConfig};
use crate::sandbox::{
    Links, NotRegular, Workspace, open_dir_nofollow, open_regular, open_regular_ambient,
};

pub(super) fn store_error(e: impl Into<redb::Error>) -> SkillError {
    let e: redb::Error = e.into();
    SkillError::from_error(format!("the memory database failed: {e}"))
}

/// The error for a store redb cannot read: what it is, where, and how to start afresh.
fn damaged(shown: &str, detail: &str) -> SkillError {
    SkillError::tool(format!(
        "the memory store at `{shown}` is damaged and cannot be read ({detail}); the file was \
         kept, not reset. To start a new, empty store, move the file away (to keep it for \
         recovery) or delete it; the next `remember` creates a new one"
    ))
}

/// What a panic of redb's says about the file. Not the assertion's text, which means nothing to
/// the model; the panic hook has written that, with its place in redb, to the process's stderr.
const INCONSISTENT: &str = "it failed the database's consistency checks";

/// Whether a missing store is created (`remember`) or means "nothing remembered" (`recall`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Create {
    /// `remember`.
    Yes,
    /// `recall`.
    No,
}

/// The database file of a call, opened (not yet locked by redb).
pub(super) struct DbFile {
    file: File,
    shown: String,
    lock_wait: Duration,
}

impl DbFile {
    /// The store of `ctx`'s call, opened; `None` when there is none and `create` is
    /// [`Create::No`].
    pub(super) fn for_context(
        ctx: &SkillContext,
        create: Create,
    ) -> Result<Option<DbFile>, SkillError> {
        let config = ctx.extension::<MemoryConfig>().cloned().unwrap_or_default();
        let lock_wait = config.lock_wait;
        let (file, shown) = match config.path {
            Some(path) => {
                let path = if path.is_absolute() {
                    path
                } else {
                    ctx.workspace_root().join(path)
                };
                let shown = path.display().to_string();
                match open_configured(&path, &shown, create)? {
                    Some(file) => (file, shown),
                    None => return Ok(None),
                }
            }
            None => match open_default(&Workspace::from_context(ctx)?, create)? {
                Some(file) => (file, DEFAULT_MEMORY_PATH.to_owned()),
                None => return Ok(None),
            },
        };
        // An empty file is a store not yet written (redb fills it on first open): for a read,
        // nothing was remembered, and nothing is written.
        if create == Create::No && file.metadata().map_err(SkillError::from_error)?.len() == 0 {
            return Ok(None);
        }
        Ok(Some(DbFile {
            file,
            shown,
            lock_wait,
        }))
    }

    /// Runs `work` on the database, taking turns with the other calls of this process on the same
    /// file. The database stays open while calls keep coming and is closed [`LINGER`] after the
    /// last one, which lets other processes in.
    pub(super) fn with_db<T>(
        self,
        work: impl FnOnce(&Database, &DbFile) -> Result<T, SkillError>,
    ) -> Result<T, SkillError> {
        let slot = slot_for(&self.file)?;
        let mut guard = slot.lock().unwrap_or_else(|p| p.into_inner());
        if guard.db.is_none() {
            guard.db = Some(self.open()?);
        }
        let db = guard.db.as_ref().expect("opened above");
        // redb may panic on a file damaged in a way it does not check for.
        let result = match catch_unwind(AssertUnwindSafe(|| work(db, &self))) {
            Ok(result) => result,
            Err(_) => {
                // Whatever state the handle is in, it is not used again.
                let db = guard.db.take();
                let _ = catch_unwind(AssertUnwindSafe(move || drop(db)));
                return Err(damaged(&self.shown, INCONSISTENT));
            }
        };
        guard.last_used = Instant::now();
        if !guard.closer {
            guard.closer = true;
            let slot = slot.clone();
            std::thread::spawn(move || close_when_idle(&slot));
        }
        result
    }

    /// The store as messages name it.
    pub(super) fn shown(&self) -> &str {
        &self.shown
    }

    /// The size of the store's file now, in bytes.
    pub(super) fn len(&self) -> Result<u64, SkillError> {
        Ok(self.file.metadata().map_err(SkillError::from_error)?.len())
    }

    /// Opens the database, waiting up to `lock_wait` for another process that holds it.
    fn open(&self) -> Result<Database, SkillError> {
        let deadline = Instant::now() + self.lock_wait;
        loop {
            // redb takes the file; a duplicate keeps ours for another attempt.
            let attempt = self.file.try_clone().map_err(SkillError::from_error)?;
            // redb checks much of a file as it opens it, and panics on some damage it finds.
            let opened = catch_unwind(AssertUnwindSafe(|| {
                redb::Builder::new()
                    .set_cache_size(CACHE_BYTES)
                    .create_file(attempt)
            }))
            .map_err(|_| damaged(&self.shown, INCONSISTENT))?;
            match opened {
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
                Err(DatabaseError::Storage(StorageError::Corrupted(detail))) => {
                    return Err(damaged(&self.shown, &detail));
                }
                Err(DatabaseError::Storage(StorageError::Io(e)))
                    if e.kind() == ErrorKind::UnexpectedEof =>
                {
                    return Err(damaged(
                        &self.shown,
                        "the file is shorter than it should be",
                    ));
                }
                // What redb says of a file that does not start like one of its databases.
                Err(DatabaseError::Storage(StorageError::Io(e)))
                    if e.kind() == ErrorKind::InvalidData =>
                {
                    return Err(damaged(
                        &self.shown,
                        "it does not start like a memory database",
                    ));
                }
                Err(e) => return Err(store_error(e)),
            }
        }
    }
}

/// Opens the default store, `.agent/memory.redb` in the workspace, never through a symbolic link
/// (at `.agent` or at `memory.redb`, wherever it would lead) nor a hard link (a `memory.redb` that
/// has other names). `None` when it does not exist and `create` is [`Create::No`]; then nothing
/// is created.
fn open_default(ws: &Workspace, create: Create) -> Result<Option<File>, SkillError> {
    let path = Path::new(DEFAULT_MEMORY_PATH);
    let (dir_name, file_name) = (
        path.parent().expect("the default path has a directory"),
        Path::new(path.file_name().expect("the default path names a file")),
    );
    let shown_dir = dir_name.to_string_lossy();
    let dir = match open_dir_nofollow(ws.dir(), dir_name) {
        Ok(dir) => dir,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            if create == Create::No {
                return Ok(None);
            }
            match ws.dir().create_dir(dir_name) {
                // Created, or by another caller meanwhile: open it.
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                Err(e) => return Err(ws.fs_error(&shown_dir, e)),
            }
            open_dir_nofollow(ws.dir(), dir_name)
                .map_err(|e| not_openable(ws, ws.dir(), dir_name, &shown_dir, true, e))?
        }
        Err(e) => return Err(not_openable(ws, ws.dir(), dir_name, &shown_dir, true, e)),
    };
    let refuse = |e| not_openable(ws, &dir, file_name, DEFAULT_MEMORY_PATH, false, e);
    match dir.symlink_metadata(file_name) {
        Ok(meta) if meta.is_file() => {}
        // Worded from what was seen: it may be something else by the time the refusal is.
        Ok(meta) => {
            use cap_std::fs::MetadataExt;
            let seen = match NotRegular::from_mode(meta.mode()) {
                Some(kind) if !meta.file_type().is_symlink() => kind.into(),
                _ => std::io::Error::from_raw_os_error(libc::ELOOP),
            };
            return Err(refuse(seen));
        }
        Err(e) if e.kind() == ErrorKind::NotFound && create == Create::No => return Ok(None),
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(refuse(e)),
    }
    // The check above words the usual refusals; this open is what keeps them: without following
    // a link, and checked once opened, so a FIFO or device put there since is refused too.
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).write(true).create(create == Create::Yes);
    let file = match open_regular(&dir, file_name, &mut options, Links::Refuse) {
        Ok(file) => file.into_std(),
        Err(e) if e.kind() == ErrorKind::NotFound && create == Create::No => return Ok(None),
        Err(e) => return Err(refuse(e)),
    };
    // Checked on the file opened, which is the one redb gets: a name given to it later is a new
    // name for this store, not a file that was elsewhere before.
    let links = file.metadata().map_err(refuse)?.nlink();
    if links > 1 {
        return Err(SkillError::Safety(format!(
            "`{DEFAULT_MEMORY_PATH}` is one of {links} names of the same file (hard links), so \
             the file is also elsewhere, perhaps outside the workspace; the memory store is never \
             opened through a hard link (redb writes to a file it opens, even to read it), so \
             nothing was read or written. Delete `{DEFAULT_MEMORY_PATH}` (the file keeps its \
             other names and its content) and the next `remember` creates a new store there; \
             to keep memory elsewhere, set `MemoryConfig::path`"
        )));
    }
    Ok(Some(file))
}

/// Why `name` in `parent` (shown as `shown`) cannot be the store's directory (`want_dir`) or
/// file: a symbolic link, something else than a directory or regular file, or `err` as it is.
fn not_openable(
    ws: &Workspace,
    parent: &cap_std::fs::Dir,
    name: &Path,
    shown: &str,
    want_dir: bool,
    err: std::io::Error,
) -> SkillError {
    if let Some(kind) = NotRegular::of(&err) {
        return not_a_store(shown, &format!("not a regular file but {kind}"));
    }
    let Ok(meta) = parent.symlink_metadata(name) else {
        return ws.fs_error(shown, err);
    };
    if meta.file_type().is_symlink() {
        let target = parent
            .read_link_contents(name)
            .map(|t| format!(" (to `{}`)", t.display()))
            .unwrap_or_default();
        return SkillError::Safety(format!(
            "`{shown}` is a symbolic link{target}; the memory store is never opened through a \
             link, so nothing was read or written. To keep memory in this workspace, remove the \
             link (the next `remember` creates a new store at `{DEFAULT_MEMORY_PATH}`); to keep \
             it elsewhere, set `MemoryConfig::path`"
        ));
    }
    let (is_wanted, wanted) = if want_dir {
        (meta.is_dir(), "a directory")
    } else {
        (meta.is_file(), "a regular file")
    };
    if !is_wanted {
        return not_a_store(shown, &format!("not {wanted}"));
    }
    ws.fs_error(shown, err)
}

/// The refusal of `shown` as the store's directory or file, because it `is` (`not a directory`,
/// `not a regular file but a FIFO`, …).
fn not_a_store(shown: &str, is: &str) -> SkillError {
    SkillError::tool(format!(
        "`{shown}` is {is}, so the memory store cannot be kept there; move it away and the next \
         `remember` creates the store at `{DEFAULT_MEMORY_PATH}`"
    ))
}

/// Opens the store at a path the user configured (not confined to the workspace). `None` when it
/// does not exist and `create` is [`Create::No`]; then nothing is created.
fn open_configured(path: &Path, shown: &str, create: Create) -> Result<Option<File>, SkillError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            return Err(SkillError::tool(format!(
                "the memory store `{shown}` is not a regular file"
            )));
        }
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound && create == Create::No => return Ok(None),
        Err(_) => {}
    }
    if create == Create::Yes
        && let Some(parent) = path.parent()
    {
        std::fs::create_dir_all(parent).map_err(SkillError::from_error)?;
    }
    // Checked once opened too: a FIFO or device put there since the check above is refused
    // without being waited on.
    let mut options = std::fs::OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(create == Create::Yes)
        .truncate(false);
    match open_regular_ambient(path, &mut options) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == ErrorKind::NotFound && create == Create::No => Ok(None),
        Err(e) => match NotRegular::of(&e) {
            Some(kind) => Err(SkillError::tool(format!(
                "the memory store `{shown}` is not a regular file but {kind}"
            ))),
            None => Err(SkillError::tool(format!(
                "cannot open the memory database `{shown}`: {e}"
            ))),
        },
    }
}

/// The memory redb may use to cache the store's pages (4 MiB; redb's default is 1 GiB, which a
/// `recall` over a large store would fill). Pages past it are read again from the file (and the
/// operating system's cache).
pub const CACHE_BYTES: usize = 4 << 20;

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
