//! Helpers shared by the integration tests: a discovered registry and one-call dispatch through
//! `Registry::run_many`, as an agent would use them.
#![allow(dead_code)]

pub mod child;

use std::path::Path;
use std::sync::OnceLock;

use agent_core::{DestructiveCalls, Registry, SkillContext, ToolCall};
use serde_json::Value;

// Links the crate, and with it its `#[skill]` registrations.
use agent_std_tools as _;

/// Every skill of the crate, found the way a binary finds them. Destructive calls run: these
/// tests are about what the skills do, and a person's approval is the loop's concern (its own
/// tests pause on them).
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = Registry::discover().expect("the crate's skills are linked");
        registry.destructive_calls(DestructiveCalls::Allow);
        registry
    })
}

/// What one call answered.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
}

impl Answer {
    /// The text of a successful call; panics with the error otherwise.
    pub fn expect_ok(&self) -> &str {
        assert!(!self.is_error, "expected success, got error: {}", self.text);
        &self.text
    }

    /// The text of a failed call; panics with the output otherwise.
    pub fn err(&self) -> &str {
        assert!(self.is_error, "expected an error, got: {}", self.text);
        &self.text
    }

    /// Asserts a `Safety` refusal that names `path`.
    pub fn assert_safety(&self, path: &str) {
        let text = self.err();
        assert!(
            text.starts_with("refused for safety:"),
            "expected a safety refusal for `{path}`, got: {text}"
        );
        assert!(
            text.contains(path),
            "the refusal should name `{path}`: {text}"
        );
    }
}

/// Runs one call through `Registry::run_many` and returns its answer.
pub async fn call(ctx: &SkillContext, name: &str, args: Value) -> Answer {
    let results = registry()
        .run_many(&[ToolCall::new("call_1", name, args)], ctx)
        .await;
    assert_eq!(results.len(), 1);
    Answer {
        text: results[0].content().into_owned(),
        is_error: results[0].is_error(),
    }
}

/// Runs several calls in one `run_many` and returns their answers in order.
pub async fn call_many(ctx: &SkillContext, calls: &[(&str, Value)]) -> Vec<Answer> {
    let calls: Vec<ToolCall> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| ToolCall::new(format!("call_{i}"), *name, args.clone()))
        .collect();
    registry()
        .run_many(&calls, ctx)
        .await
        .iter()
        .map(|r| Answer {
            text: r.content().into_owned(),
            is_error: r.is_error(),
        })
        .collect()
}

/// Writes `content` to `root/rel`, creating parents.
pub fn put(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// Reads `root/rel` as a string.
pub fn get(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

/// Every file and directory under `root` (recursively, links not followed) with file contents,
/// to compare a tree before and after.
pub fn snapshot(root: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.push((rel + "/", None));
                walk(root, &path, out);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.push((rel, Some(target.to_string_lossy().as_bytes().to_vec())));
            } else {
                out.push((rel, Some(std::fs::read(&path).unwrap())));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}
