//! Model Context Protocol for eugene (to come): serve any `Registry` as an MCP server, and use any
//! MCP server's tools as skills, through the official Rust SDK, `rmcp`.

#![warn(missing_docs)]
