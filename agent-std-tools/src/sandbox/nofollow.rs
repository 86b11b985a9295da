//! Opening a file or directory by name in a directory without following a symbolic link in the
//! last place of the path (`ELOOP` instead).
//!
//! cap-std is told not to follow ([`FollowSymlinks::No`]), which it keeps in both of its ways of
//! resolving a path: `openat2` with `O_NOFOLLOW` (Linux 5.6 and later), and its own resolution one
//! component at a time (older kernels), which otherwise follows a link in the last place itself.
//! So the refusal holds however the path changes meanwhile, with nothing to check afterwards.

use std::io;
use std::path::Path;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, File, OpenOptions, OpenOptionsExt};

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

/// Opens the file `name` in `parent` with `options` and the extra `flags` (`O_*`, replacing
/// `options`' custom flags), refusing a symbolic link in the last place (`ELOOP`).
pub(super) fn open_nofollow(
    parent: &Dir,
    name: &Path,
    options: &mut OpenOptions,
    flags: i32,
) -> io::Result<File> {
    parent.open_with(
        name,
        options
            .follow(FollowSymlinks::No)
            .custom_flags(flags | libc::O_NOFOLLOW),
    )
}
