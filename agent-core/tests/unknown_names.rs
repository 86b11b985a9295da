//! Unknown skill names of any length get a bounded error result: the "did you mean" search runs
//! only on names that could plausibly be a typo, and the error quotes a bounded prefix of the name.

mod common;

use std::time::Duration;

use agent_core::{Registry, SkillContext, ToolCall};
use common::*;
use serde_json::json;

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(Echo).add(Panicky);
    registry
}

async fn answer(registry: &Registry, name: &str) -> (String, bool) {
    let calls = [ToolCall::new("1", name, json!({}))];
    let results = tokio::time::timeout(
        Duration::from_secs(60),
        registry.run_many(&calls, &SkillContext::default()),
    )
    .await
    .expect("run_many did not answer");
    assert_eq!(results.len(), 1);
    (results[0].content().into_owned(), results[0].is_error())
}

#[tokio::test]
async fn a_huge_unknown_name_gets_a_short_error() {
    let name = "x".repeat(10 * 1024 * 1024);
    let (text, is_error) = answer(&registry(), &name).await;
    assert!(is_error);
    assert!(
        text.len() < 500,
        "the error should be short, not {} bytes",
        text.len()
    );
    assert_eq!(
        text,
        format!(
            "unknown skill `{}… (10485760 bytes)`; available skills: `echo`, `panicky`",
            "x".repeat(128)
        )
    );
}

#[tokio::test]
async fn a_long_name_still_gets_suggestions_up_to_the_cap() {
    let name = format!("echo{}", "_".repeat(100));
    let (text, _) = answer(&registry(), &name).await;
    assert_eq!(
        text,
        format!("unknown skill `{name}`; did you mean `echo`?")
    );

    let name = format!("echo{}", "_".repeat(200));
    let (text, _) = answer(&registry(), &name).await;
    assert_eq!(
        text,
        format!(
            "unknown skill `echo{}… (204 bytes)`; did you mean `echo`?",
            "_".repeat(124)
        )
    );

    let name = format!("echo{}", "_".repeat(300));
    let (text, _) = answer(&registry(), &name).await;
    assert!(
        text.ends_with("; available skills: `echo`, `panicky`"),
        "a name over 256 bytes is not compared: {text}"
    );
}

#[tokio::test]
async fn a_multibyte_name_is_cut_on_a_character_boundary() {
    let name = "é".repeat(1000);
    let (text, _) = answer(&registry(), &name).await;
    assert_eq!(
        text,
        format!(
            "unknown skill `{}… (2000 bytes)`; available skills: `echo`, `panicky`",
            "é".repeat(128)
        )
    );
}
