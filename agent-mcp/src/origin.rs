//! The `Origin` check MCP's streamable HTTP transport requires ("servers MUST validate the
//! Origin header"): a request whose `Origin` is present and not allowed is answered
//! `403 Forbidden` before it reaches rmcp. The check is agent-serve's `Origins`, which
//! agent-a2a's server shares.
//!
//! The rule:
//! - no `Origin` header (every non-browser client): allowed;
//! - an origin listed with [`McpServer::allowed_origins`](crate::McpServer::allowed_origins):
//!   allowed;
//! - on a loopback bind, the server's own origins `http://localhost:PORT`,
//!   `http://127.0.0.1:PORT` and `http://[::1]:PORT` (PORT the port bound): allowed — no page
//!   can come from them, since the server serves none;
//! - anything else, `null` and a malformed or repeated header included: `403`.
//!
//! Origins are compared as RFC 6454 tuples: scheme and host in any case, the default port
//! (80 for `http`, 443 for `https`) written or not.
