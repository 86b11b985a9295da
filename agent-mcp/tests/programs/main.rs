//! Other programs and eugene's server, in one test binary: the `mcp_server` example's command
//! line, and the official Python SDK as a client (`python_client.py`, beside this file).

#[path = "../support/mod.rs"]
mod support;

mod mcp_server_cli;
mod python_client;
