//! The call's private temporary directory (`TMPDIR`): made before the command starts, removed
//! when the call ends, however deep the command nested it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_core::SkillError;

use crate::sandbox::Workspace;

/// The call's private temporary directory, removed on drop.
pub(super) struct TempDir {
    base: PathBuf,
    name: String,
}

impl TempDir {
    /// Makes a new directory, readable only by its owner, in the system's temporary directory.
    pub fn new() -> Result<TempDir, SkillError> {
        use std::os::unix::fs::DirBuilderExt;
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        for _ in 0..16 {
            let name = format!(
                "eugene-shell-{}-{}-{:08x}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos())
            );
            match std::fs::DirBuilder::new()
                .mode(0o700)
                .create(base.join(&name))
            {
                Ok(()) => return Ok(TempDir { base, name }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(SkillError::tool(format!(
                        "could not create a temporary directory in {}: {e}",
                        base.display()
                    )));
                }
            }
        }
        Err(SkillError::tool(
            "could not create a temporary directory: every name was taken",
        ))
    }

    /// Where it is.
    pub fn path(&self) -> PathBuf {
        self.base.join(&self.name)
    }

    /// Removes it and everything in it with the file skills' bounded delete (a few directories
    /// open at once, whatever the depth, never through a link), so a tree nested past the
    /// open-file limit goes too.
    fn remove(&self) -> Result<(), SkillError> {
        Workspace::open(&self.base)?.remove_dir_all(&self.name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // What cannot be removed (a file the command made immutable, where it could) stays; the
        // call's result has been made by then.
        let _ = self.remove();
    }
}
