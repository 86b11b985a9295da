//! Random JSON as arguments to the standard skills through `Registry::run_many`: every call gets
//! exactly one result, in order, and nothing panics or escapes the temporary workspace.
#![no_main]

use agent_core::{Registry, SkillContext, ToolCall};
use agent_std_tools as _;
use libfuzzer_sys::fuzz_target;

const SKILLS: &[&str] = &["read_file", "list_dir", "search_files", "recall", "tool_search", "nonexistent"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let args = serde_json::from_slice(rest).unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(rest).into_owned()));
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "hello\n").unwrap();
    let registry = Registry::discover_where(|r| SKILLS.contains(&r.name())).unwrap();
    let calls: Vec<ToolCall> = (0..3)
        .map(|i| ToolCall::new(format!("c{i}"), SKILLS[(pick as usize + i) % SKILLS.len()], args.clone()))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let results = runtime.block_on(registry.run_many(&calls, &SkillContext::new(workspace.path())));
    assert_eq!(results.len(), calls.len());
    for (call, result) in calls.iter().zip(&results) {
        assert_eq!(call.id, result.call_id);
    }
});
