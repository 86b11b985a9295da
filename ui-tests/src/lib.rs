//! The compile-time tests of `#[skill]` and `agent_skills!` live in `tests/ui.rs`; this package
//! holds nothing else (it exists so that trybuild builds the cases against a small dependency
//! graph).
