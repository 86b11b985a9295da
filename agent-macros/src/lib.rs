//! The `#[skill]` attribute of the eugene agent framework (to come).
//!
//! It will turn an ordinary `async fn` into a skill: a hidden input struct with a JSON Schema
//! built from the parameters and the `# Arguments` section of the doc comment, a unit struct that
//! implements `agent_core::Skill`, and a link-time registration that `Registry::discover()` finds.
//! This crate holds only parsing, validation and code generation; all runtime logic lives in
//! `agent-core`, which this crate must not depend on.

#![warn(missing_docs)]
