//! Random patches against a small tree in a temporary directory: never a panic, and when the
//! patch is refused the tree is byte-for-byte unchanged.
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;

use agent_std_tools::patch::apply_patch_in;
use agent_std_tools::sandbox::Workspace;
use libfuzzer_sys::fuzz_target;

fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                out.insert(name + "/", Vec::new());
                stack.push(path);
            } else {
                out.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    let before = snapshot(dir.path());
    let workspace = Workspace::open(dir.path()).unwrap();
    if apply_patch_in(&workspace, text).is_err() {
        assert_eq!(snapshot(dir.path()), before, "a refused patch changed the tree");
    }
});
