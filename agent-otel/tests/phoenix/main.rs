//! agent-otel against a real OTLP receiver: Arize Phoenix (`phoenix serve`, PyPI `arize-phoenix`),
//! started by this binary on free loopback ports (`test_support::phoenix`). Each scenario runs in a process of
//! its own ([`child`]) that installs the exporter, runs a scripted agent ([`agent`]) and shuts the
//! export down; the test then reads the spans back through Phoenix's REST API and checks their
//! names, parents and attributes.
//!
//! - `export.rs`: a run with a tool call and a sub-agent, over HTTP (set up from the environment)
//!   and over gRPC (set up explicitly); content absent by default and present when turned on;
//!   string values cut at the limit.
//! - `resume.rs`: a run paused in one process and approved in another is one trace; a pause inside
//!   a child agent is no error, and the child resumed elsewhere is under its call there.
//! - `failing.rs`: a collector that refuses connections, or accepts them and never answers: the
//!   run ends as usual, the guard comes back within its bound, and there is one warning.
//! - `settings.rs`: bad settings fail at install, naming the setting, and set nothing up.

mod agent;
mod child;
mod export;
mod failing;
mod resume;
mod settings;

/// The receiver this binary shares ([`test_support::phoenix::phoenix`]).
fn phoenix() -> &'static test_support::phoenix::Phoenix {
    test_support::phoenix::phoenix(env!("CARGO_TARGET_TMPDIR"))
}
