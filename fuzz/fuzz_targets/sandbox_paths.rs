//! Random paths (with `..`, `/`, NUL, unicode) against a tree that holds symbolic links pointing
//! inside and out: whatever the path, nothing outside the workspace is read or written.
#![no_main]

use agent_std_tools::sandbox::Workspace;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = String::from_utf8_lossy(data);
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("ws");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "SECRET").unwrap();
    std::fs::write(root.join("sub/inner.txt"), "inner").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink("../outside/secret.txt", root.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink("sub/inner.txt", root.join("ok.txt")).unwrap();
    let workspace = Workspace::open(&root).unwrap();

    if let Ok(bytes) = workspace.read(&path) {
        assert_ne!(bytes, b"SECRET", "read outside the workspace through {path:?}");
    }
    let _ = workspace.write_atomic(&path, b"FUZZ");
    let _ = workspace.remove_file(&path);
    assert_eq!(std::fs::read(outside.join("secret.txt")).unwrap(), b"SECRET", "{path:?}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "created outside through {path:?}");
});
