//! `apply_patch` in one test binary: the V4A suite, its bounds, marker-like text, and the
//! property tests of the parser, the applier and the indexed context search. Proptest keeps the
//! failures it found in `tests/proptest-regressions/<module>.txt` (beside this folder, as for any
//! target with a `main.rs`).

#[path = "../common/mod.rs"]
mod common;

mod patch;
mod patch_bounds;
mod patch_markers;
mod patch_properties;
mod patch_seek;
