//! Opening a regular file, and nothing else, without waiting on what else a name may be.
//!
//! Checking what a path is and then opening it leaves a gap in which another process can put a
//! FIFO in its place (`rename(2)`, or `renameat2(RENAME_EXCHANGE)` in a loop), and opening a FIFO
//! for reading waits for a writer, forever if none comes. So every file the crate opens to read
//! (or, for the memory store, to read and write in place) is opened first and checked after, by
//! [`open_regular`] (or [`open_regular_ambient`] for a path outside any workspace):
//!
//! - It is opened with `O_NONBLOCK`, so a FIFO opens at once instead of waiting for its other end
//!   and a device does not wait for a carrier, and `O_NOCTTY`, so a terminal never becomes the
//!   process's controlling terminal. With [`Links::Refuse`], cap-std is told not to follow a
//!   symbolic link in the last place (`O_NOFOLLOW`; `ELOOP`).
//! - The descriptor opened is then `fstat`ed, and anything but a regular file (a directory, a
//!   FIFO, a socket, a device) is closed again and refused with a [`NotRegular`] error that says
//!   what it is. Nothing is read from it or written to it.
//! - Opening a socket fails (`ENXIO`), as does opening a FIFO for writing while nothing reads it;
//!   those are refused as [`NotRegular`] too, named after what is at the path then.
//! - `O_NONBLOCK` is cleared again on the regular file, so that reading and writing it behave as
//!   they always do (a file with a lease held elsewhere fails to open with `EAGAIN` instead of
//!   waiting for the lease to break).
//!
//! What remains: a device node at the path is opened (non-blocking, without becoming the
//! controlling terminal) and closed again, so its driver sees an `open` and a `close`; only the
//! kernel could check the type before opening. Creating device nodes takes `CAP_MKNOD`.

use std::fmt;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

use cap_std::fs::{Dir, File, MetadataExt, OpenOptions, OpenOptionsExt};

use super::nofollow::open_nofollow;

/// Whether the last component of a path may be a symbolic link (one that stays where the
/// capability allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// Follow a symbolic link in the last place.
    Follow,
    /// Refuse one (`ELOOP`).
    Refuse,
}

/// What was found where a regular file was to be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotRegular {
    /// A directory.
    Directory,
    /// A FIFO (named pipe).
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device (a terminal, `/dev/null`, …).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// Anything else that is not a regular file.
    Other,
}

impl NotRegular {
    /// What the file type bits of a `st_mode` name, or `None` for a regular file.
    pub(crate) fn from_mode(mode: u32) -> Option<NotRegular> {
        Some(match mode & libc::S_IFMT {
            libc::S_IFREG => return None,
            libc::S_IFDIR => NotRegular::Directory,
            libc::S_IFIFO => NotRegular::Fifo,
            libc::S_IFSOCK => NotRegular::Socket,
            libc::S_IFCHR => NotRegular::CharDevice,
            libc::S_IFBLK => NotRegular::BlockDevice,
            _ => NotRegular::Other,
        })
    }

    /// The [`NotRegular`] an I/O error carries, if it is one of [`open_regular`]'s refusals.
    pub(crate) fn of(err: &io::Error) -> Option<NotRegular> {
        err.get_ref()?.downcast_ref::<NotRegular>().copied()
    }
}

impl fmt::Display for NotRegular {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotRegular::Directory => "a directory",
            NotRegular::Fifo => "a FIFO (a named pipe)",
            NotRegular::Socket => "a Unix socket",
            NotRegular::CharDevice => "a character device",
            NotRegular::BlockDevice => "a block device",
            NotRegular::Other => "a file of an unknown type",
        })
    }
}

impl std::error::Error for NotRegular {}

impl From<NotRegular> for io::Error {
    fn from(kind: NotRegular) -> io::Error {
        let error_kind = match kind {
            NotRegular::Directory => io::ErrorKind::IsADirectory,
            _ => io::ErrorKind::InvalidInput,
        };
        io::Error::new(error_kind, kind)
    }
}

/// The flags every open of a regular file adds: never wait on a FIFO or a device, never take a
/// terminal as the controlling one.
const FLAGS: i32 = libc::O_NONBLOCK | libc::O_NOCTTY;

/// Opens `path` in `dir` with `options` if it is a regular file, and refuses anything else
/// without waiting on it (see the [module docs](self)). `options`' custom flags are replaced.
pub(crate) fn open_regular(
    dir: &Dir,
    path: &Path,
    options: &mut OpenOptions,
    links: Links,
) -> io::Result<File> {
    let opened = match links {
        Links::Follow => dir.open_with(path, options.custom_flags(FLAGS)),
        Links::Refuse => open_nofollow(dir, path, options, FLAGS),
    };
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            let seen = match links {
                Links::Follow => dir.metadata(path),
                Links::Refuse => dir.symlink_metadata(path),
            };
            return Err(there(seen.map(|m| m.mode()), e));
        }
        Err(e) => return Err(e),
    };
    let opened = file.metadata()?;
    if let Some(kind) = NotRegular::from_mode(opened.mode()) {
        return Err(kind.into());
    }
    blocking_again(&file)?;
    Ok(file)
}

/// [`open_regular`] for a path outside any workspace (one the user configured), by ambient
/// authority, following symbolic links.
pub(crate) fn open_regular_ambient(
    path: &Path,
    options: &mut std::fs::OpenOptions,
) -> io::Result<std::fs::File> {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let file = match options.custom_flags(FLAGS).open(path) {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            return Err(there(std::fs::metadata(path).map(|m| m.mode()), e));
        }
        Err(e) => return Err(e),
    };
    if let Some(kind) = NotRegular::from_mode(file.metadata()?.mode()) {
        return Err(kind.into());
    }
    blocking_again(&file)?;
    Ok(file)
}

/// The refusal for an open that failed with `ENXIO` (a socket, a FIFO opened for writing with no
/// reader, a device without its driver): named after what is at the path now, if that is not a
/// regular file; `err` as it is otherwise.
fn there(mode: io::Result<u32>, err: io::Error) -> io::Error {
    match mode.ok().and_then(NotRegular::from_mode) {
        Some(kind) => kind.into(),
        None => err,
    }
}

/// Clears `O_NONBLOCK` on an opened regular file.
fn blocking_again(file: &impl AsRawFd) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file` for the duration of both calls, and
    // F_GETFL / F_SETFL take no pointers.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
