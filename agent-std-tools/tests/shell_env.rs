//! `run_shell` never hands the agent's keys to the commands it runs. A test binary of its own:
//! it changes this process's environment, which no other test may be reading at the time.

mod common;

use agent_core::SkillContext;
use serde_json::json;

#[test]
fn secrets_are_stripped_from_the_child_environment_and_the_rest_is_kept() {
    // SAFETY: this is the only test in this binary and it sets the variables before starting
    // any thread of its own, so nothing reads the environment concurrently.
    unsafe {
        std::env::set_var("EUGENE_TEST_API_KEY", "sk-should-not-leak-1");
        std::env::set_var("EUGENE_TEST_TOKEN", "tok-should-not-leak-2");
        std::env::set_var("eugene_test_secret", "sec-should-not-leak-3");
        std::env::set_var("EUGENE_TEST_PASSWORD", "pw-should-not-leak-4");
        std::env::set_var("EUGENE_TEST_PLAIN", "visible-5");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    let answer = runtime.block_on(common::call(&ctx, "run_shell", json!({"command": "env"})));
    let text = answer.ok();
    for leaked in ["sk-should", "tok-should", "sec-should", "pw-should"] {
        assert!(
            !text.contains(leaked),
            "{leaked} reached the child:\n{text}"
        );
    }
    assert!(text.contains("EUGENE_TEST_PLAIN=visible-5"), "{text}");
    assert!(text.contains("PATH="), "ordinary variables are kept");
}
