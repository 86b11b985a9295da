//! Test-only helpers shared by the workspace's crates, so no test includes another crate's files
//! by path: [`server`], a real HTTP/1.1 server on loopback that answers with scripted replies and
//! records what it received, and [`server::fixture`], the recorded wire traffic kept in
//! `fixtures/recordings` (see its README for where each recording came from); and [`provision`],
//! the outside programs some tests need (Python's `mcp` package, Arize Phoenix, npm packages),
//! installed on first use; [`python_server`], a Python test server on loopback;
//! [`phoenix`], Arize Phoenix as a real OTLP receiver; and [`traced`],
//! for reading `tracing` events and spans.

pub mod phoenix;
pub mod provision;
pub mod python_server;
pub mod server;
pub mod traced;
