//! A binary with no registration linked: `discover` says so instead of returning an empty registry.

use agent_core::{Registry, RegistryError};

#[test]
fn discovering_nothing_is_an_error_that_explains_linking() {
    let error = Registry::discover().unwrap_err();
    assert!(matches!(error, RegistryError::NothingDiscovered));
    assert!(
        error
            .to_string()
            .contains("no `#[skill]` registration is linked into this binary")
    );
}
