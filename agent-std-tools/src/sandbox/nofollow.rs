//! Opening a file or directory by name in a directory without following a symbolic link, even
//! where cap-std's fallback resolution would.

use std::fmt;
use std::io;
use std::path::Path;

use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};

/// Opens the directory `name` in `parent`, refusing a symbolic link (`ELOOP`).
pub(crate) fn open_dir_nofollow(parent: &Dir, name: &Path) -> io::Result<Dir> {
    let file = open_nofollow(
        parent,
        name,
        OpenOptions::new().read(true),
        libc::O_DIRECTORY,
    )?;
    Ok(Dir::from_std_file(file.into_std()))
}

/// Opens the file `name` in `parent` with `options` and the extra `flags` (`O_*`), refusing a
/// symbolic link (`ELOOP`).
///
/// `O_NOFOLLOW` is added; as cap-std's fallback resolution (Linux before 5.6) may still follow a
/// link in the last place, the file opened is then checked to be the very one at `name`
/// ([`check_opened_is_named`]).
fn open_nofollow(
    parent: &Dir,
    name: &Path,
    options: &mut OpenOptions,
    flags: i32,
) -> io::Result<File> {
    let file = parent.open_with(name, options.custom_flags(flags | libc::O_NOFOLLOW))?;
    check_opened_is_named(parent, name, &file.metadata()?)?;
    Ok(file)
}

/// Checks that `opened` (the metadata of a file just opened as `name` in `parent`) is what is at
/// `name` now, not followed through a link: `ELOOP` if a symbolic link is there, [`Replaced`] if
/// something else is (it was swapped while being opened).
pub(crate) fn check_opened_is_named(
    parent: &Dir,
    name: &Path,
    opened: &Metadata,
) -> io::Result<()> {
    let there = parent.symlink_metadata(name)?;
    if there.file_type().is_symlink() {
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    if (opened.dev(), opened.ino()) != (there.dev(), there.ino()) {
        return Err(io::Error::other(Replaced));
    }
    Ok(())
}

/// The file at a path was replaced by another while it was being opened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replaced;

impl Replaced {
    /// Whether `err` is this refusal.
    pub(crate) fn is(err: &io::Error) -> bool {
        err.get_ref().is_some_and(|e| e.is::<Replaced>())
    }
}

impl fmt::Display for Replaced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("it was replaced by another file while being opened")
    }
}

impl std::error::Error for Replaced {}
