//! Opening a file or directory by name in a directory without following a symbolic link, even
//! where cap-std's fallback resolution would.

use std::io;
use std::path::Path;

use cap_std::fs::{Dir, File, MetadataExt, OpenOptions, OpenOptionsExt};

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
/// link in the last place, the file opened is then checked to be the very one at `name`.
pub(crate) fn open_nofollow(
    parent: &Dir,
    name: &Path,
    options: &mut OpenOptions,
    flags: i32,
) -> io::Result<File> {
    let file = parent.open_with(name, options.custom_flags(flags | libc::O_NOFOLLOW))?;
    let opened = file.metadata()?;
    let there = parent.symlink_metadata(name)?;
    if there.file_type().is_symlink() || (opened.dev(), opened.ino()) != (there.dev(), there.ino())
    {
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok(file)
}
