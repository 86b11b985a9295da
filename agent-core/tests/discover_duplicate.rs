//! Two registrations with one name: `discover` names both source locations.

mod common;

use agent_core::__private::inventory;
use agent_core::{DynSkill, Registry, RegistryError, SkillRegistration};
use common::*;

fn make_echo() -> Box<dyn DynSkill> {
    Box::new(Echo)
}

inventory::submit!(SkillRegistration::new(
    "echo",
    "app::one",
    "src/one.rs",
    10,
    make_echo
));
inventory::submit!(SkillRegistration::new(
    "echo",
    "app::two",
    "src/two.rs",
    20,
    make_echo
));

#[test]
fn duplicate_registrations_are_an_error_naming_both_locations() {
    let error = Registry::discover().unwrap_err();
    assert!(matches!(error, RegistryError::Duplicate { ref name, .. } if name == "echo"));
    assert_eq!(
        error.to_string(),
        "two skills are named `echo`: one at src/one.rs:10 (app::one) and one at src/two.rs:20 (app::two); \
         rename one (`#[skill(name = \"...\")]`) or keep only one with `Registry::discover_where`"
    );
    // Keeping one of them resolves it.
    let registry = Registry::discover_where(|r| r.module_path() == "app::two").unwrap();
    assert_eq!(registry.location("echo").unwrap().line, 20);
}
