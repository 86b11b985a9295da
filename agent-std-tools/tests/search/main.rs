//! `search_files` in one test binary: its calls over a real tree, and its bounds.

#[path = "../common/mod.rs"]
mod common;

mod search;
mod search_bounds;
