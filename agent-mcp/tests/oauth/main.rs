//! OAuth 2.1 against an OAuth-protected MCP server written with the official Python MCP SDK
//! (`tests/programs/oauth_server.py`, started by each test on a free loopback port): logging
//! in with the test as the browser, runs with the stored token, refreshing, refusals, and the
//! token file. Every tracing event of the binary is captured to check that no token is logged.

mod connect;
mod login;
mod server;
mod store;
