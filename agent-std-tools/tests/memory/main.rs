//! `remember` and `recall` in one test binary: their calls, the store's limits (measured in child
//! processes of this binary) and its file attacked.

#[path = "../common/mod.rs"]
mod common;

mod memory;
mod memory_bounds;
mod memory_store;
