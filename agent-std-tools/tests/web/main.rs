//! `web_fetch` in one test binary: its calls against loopback servers, its bounds, and hostile
//! tables (measured in child processes of this binary).

#[path = "../common/mod.rs"]
mod common;

mod web;
mod web_bounds;
mod web_tables;
