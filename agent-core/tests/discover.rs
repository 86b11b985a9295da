//! `Registry::discover` over registrations submitted through `inventory`, as `#[skill]` does.

mod common;

use agent_core::__private::inventory;
use agent_core::{DynSkill, Registry, RegistryError, SkillContext, SkillRegistration, ToolCall};
use common::*;

fn make_echo() -> Box<dyn DynSkill> {
    Box::new(Echo)
}

fn make_big() -> Box<dyn DynSkill> {
    Box::new(Big { chars: 2 })
}

inventory::submit!(SkillRegistration::new(
    "echo",
    "app::chat",
    file!(),
    line!(),
    make_echo
));
inventory::submit!(SkillRegistration::new(
    "big",
    "app::files::bulk",
    file!(),
    line!(),
    make_big
));

#[tokio::test]
async fn discover_finds_every_registration_ordered_by_name() {
    let registry = Registry::discover().expect("two registrations");
    assert_eq!(registry.names().collect::<Vec<_>>(), ["big", "echo"]);
    let location = registry
        .location("say")
        .expect("found through the alias too");
    assert_eq!(
        (location.module_path, location.file),
        ("app::chat", file!())
    );
    let result = registry
        .run_one(
            &ToolCall::new("1", "echo", serde_json::json!({"text": "found"})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(result.content(), "found");
}

#[test]
fn discover_where_keeps_skills_by_module_or_name() {
    let files = Registry::discover_where(|r| r.is_in_module("app::files")).unwrap();
    assert_eq!(files.names().collect::<Vec<_>>(), ["big"]);
    let chat = Registry::discover_where(|r| r.name() == "echo").unwrap();
    assert_eq!(chat.names().collect::<Vec<_>>(), ["echo"]);
}

#[test]
fn a_filter_that_keeps_nothing_is_an_error_listing_what_was_linked() {
    let error = Registry::discover_where(|r| r.is_in_module("app::web")).unwrap_err();
    assert!(matches!(
        error,
        RegistryError::NothingKept { linked: 2, .. }
    ));
    assert_eq!(
        error.to_string(),
        "the filter kept none of the 2 linked skills (big, echo)"
    );
}
