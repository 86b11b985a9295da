//! Durable runs against a real Restate server: the `durable_agent` example served as a child
//! process, registered with a `restate-server` started for each test (free loopback ports, a
//! temporary data folder), the model scripted by a loopback server in this process that counts
//! the requests it gets. The service is killed with SIGKILL in the middle of a run and started
//! again; the skills log on disk what ran, so exactly-once is checked where it happens.
//!
//! `restate-server` comes from npm (`@restatedev/restate-server`, 1.7): `.ci/run` installs it
//! under `target/restate-server`, or `RESTATE_SERVER_BIN` names a binary. Without one these tests
//! fail, saying how to install it. `traces.rs` exports to Arize Phoenix too
//! (`test_support::phoenix`; `.ci/run` installs it, `AGENT_PHOENIX_BIN` names it).

mod approvals;
mod crashes;
mod payments;
mod sessions;
mod support;
mod traces;
