//! What eugene's MCP server serves besides tools: skills that ask the client (elicitation and
//! sampling), Agent Skills as resources, prompt templates, media (`media.rs`). Against rmcp's client in process and
//! against the official Python SDK as a client, over stdio and HTTP.

mod fixtures;
mod in_process;
mod media;
mod python;
mod task_bounds;
mod task_support;
mod tasks;
mod url_elicitation;
