//! MCP with rmcp on the other side, in one test binary: our server seen by rmcp's client, a server
//! written with rmcp alone used through `McpSkills`, and typed outputs and media both ways.

#[path = "../support/mod.rs"]
mod support;

mod changing;
mod consume;
mod media;
mod serve;
mod typed_outputs;
