//! Durable eugene agents on [Restate](https://restate.dev): runs that survive crashes of the
//! process running them, wait for a person's approval for as long as it takes, and scale past one
//! machine.
//!
//! [`DurableAgent`] serves an [`AgentRuntime`] as a Restate *virtual object* named `Agent`, keyed
//! by session id. Restate delivers each call to some instance of the service, keeps one run at a
//! time per session (later calls for the same session queue; other sessions run in parallel), and
//! keeps a journal of each invocation:
//!
//! - **Each step is journaled.** Every model call, compaction summary and tool call of a run is one
//!   `ctx.run` step (through agent-runtime's [`Journal`](agent_runtime::Journal)). When the process
//!   dies mid-run, Restate invokes the handler again, on this instance or another; the journal
//!   replays: the model is not asked again for a turn already answered, and a tool that already ran
//!   does not run again. A step that was running when the process died runs again (it has no result
//!   to replay), so a tool in flight at a crash may run twice: make side effects idempotent, or
//!   check, where that matters. Tool calls of a journaled run go one at a time, in call order.
//! - **Approvals wait durably.** A run that pauses ([`FinishReason::AwaitingApproval`]) waits, in the
//!   same invocation, on one Restate awakeable per pending call. A decision sent later through
//!   Restate's ingress — from any machine, after any time, across restarts of the service —
//!   completes it and the run goes on ([`AgentRuntime::continue_paused`]): approved calls run
//!   exactly once. A call waiting inside an agent used as a skill waits the same way, and its
//!   decision names its path id (`p1/c2`: call `c2` of the agent called by `p1`), which
//!   [`Approval::id`] gives.
//! - **Hooks, budgets and guards work as in-process**: the loop is the same; a replay hands it the
//!   same results in the same order. **Events** go to the sinks of the process running the
//!   invocation. A process that replays holds events back until it knows whether the attempt
//!   before got past them: events before a step found in the journal are dropped (the earlier
//!   attempt sent them), the rest are sent. So events are delivered at least once, and an event is
//!   sent twice only when it came after the last step the failed attempt journaled and before it
//!   died.
//! - **One trace across attempts.** Each `run` invocation runs in a `durable_run` span, and its
//!   first journaled step (`trace`) keeps the W3C `traceparent` of the span the first attempt
//!   was called in (the Restate SDK's): an attempt that replays on another instance makes its
//!   own `durable_run` span a child of it, so an exporter (agent-otel) shows every attempt, and
//!   the runs and steps inside them, in one trace (a propagated parent, not a link); only the
//!   SDK's own span around a replaying attempt, opened before the journal is read, stays a root
//!   of its own. The step is journaled whether or not anything traces, so attempts with and
//!   without an exporter replay alike; an invocation journaled by a version before this step
//!   does not replay on this one. Tested with a real Phoenix and a killed instance
//!   (`tests/durable/traces.rs`).
//!
//! | handler | kind | input | answer |
//! |---|---|---|---|
//! | `run` | exclusive | the goal, a JSON string | [`RunSummary`], once the run ends (approvals included) |
//! | `run_message` | exclusive | a user message with media, as eugene writes a `Message`: `{"role": "user", "content": "…", "parts": [{"type": "media", "media_type": "image/png", "data": "<base64>"}]}` | as `run`; the bytes are journaled with the transcript, so a replay sends the same ones |
//! | `decide` | shared | `{"<call id>": {"decision": "approve"}}`, `"deny"` with `"with": "<reason>"`, `"edit"` with `"with": {<arguments>}` | the call ids decided |
//! | `pending` | shared | — | the [`Approval`]s the run waits on (the id to decide by, call, reason, awakeable id) |
//! | `outcome` | shared | — | the last [`RunSummary`] (empty before the first) |
//! | `transcript` | shared | — | the session's conversation |
//! | `reset` | exclusive | — | forgets the session |
//!
//! ```no_run
//! use agent_core::Registry;
//! use agent_llm::{MockProvider, MockReply};
//! use agent_runtime::AgentRuntime;
//! use agent_restate::DurableAgent;
//!
//! # async fn serve() {
//! let runtime = AgentRuntime::new(MockProvider::new([MockReply::text("Hi!")]), Registry::new());
//! // Then: restate deployments register http://localhost:9080
//! //       curl localhost:8080/Agent/session-1/run --json '"Say hi."'
//! DurableAgent::new(runtime)
//!     .listen("127.0.0.1:9080".parse().unwrap())
//!     .await;
//! # }
//! ```
//!
//! `docs/DURABLE.md` in the repository walks through running it with `restate-server`, approving
//! with `curl`, and running many instances behind one Restate cluster.

#![warn(missing_docs)]

mod journal;
mod object;
mod outcome;

use std::net::SocketAddr;

#[cfg(doc)]
use agent_runtime::FinishReason;
use agent_runtime::{AgentRuntime, OutputType};
use restate_sdk::endpoint::{Endpoint, ServiceOptions};
use restate_sdk::http_server::HttpServer;
use restate_sdk::service::{IntoServiceDefinition, ServiceDefinition};

pub use object::AgentObject;
pub use outcome::{Approval, RunSummary};
/// The Restate SDK this crate builds on (its [`ServiceOptions`], [`Endpoint`], ...).
pub use restate_sdk;

/// The name of the virtual object in Restate, as in `/Agent/<session>/run`.
pub const SERVICE_NAME: &str = "Agent";

/// An agent served as a Restate virtual object. See the [crate docs](crate).
pub struct DurableAgent {
    runtime: AgentRuntime,
    output: Option<OutputType>,
    options: Option<ServiceOptions>,
}

impl DurableAgent {
    /// Serves `runtime`: each invocation runs on a clone of it with its own journal and its own
    /// cancellation token (cancel a run through Restate: `restate invocations cancel <id>`). The
    /// runtime's event sinks receive the events (see the crate docs for when).
    pub fn new(runtime: AgentRuntime) -> Self {
        DurableAgent {
            runtime,
            output: None,
            options: None,
        }
    }

    /// Makes every run typed: it ends when the model answers with a value that passes `output`'s
    /// check ([`OutputType::of::<T>()`](OutputType::of) for a Rust type), which the [`RunSummary`]'s
    /// `output` then holds (see [`OutputMode`](agent_runtime::OutputMode) for how the model is
    /// asked).
    pub fn output(mut self, output: OutputType) -> Self {
        self.output = Some(output);
        self
    }

    /// Restate options for the service: timeouts, retry policy, retention. A step that may
    /// take longer than Restate's `abort_timeout` (10 minutes by default) needs a longer one.
    pub fn options(mut self, options: ServiceOptions) -> Self {
        self.options = Some(options);
        self
    }

    /// The service, to bind into an [`Endpoint`] beside others.
    pub fn service(self) -> ServiceDefinition {
        let service = AgentObject {
            runtime: self.runtime,
            output: self.output,
        }
        .into_service_definition();
        match self.options {
            Some(options) => service.options(options),
            None => service,
        }
    }

    /// An endpoint serving this agent alone.
    pub fn endpoint(self) -> Endpoint {
        Endpoint::builder().bind(self.service()).build()
    }

    /// Serves the agent over HTTP/2 on `address` until Ctrl-C. Register the address with Restate
    /// (`restate deployments register http://HOST:PORT`) before calling it.
    pub async fn listen(self, address: SocketAddr) {
        HttpServer::new(self.endpoint())
            .listen_and_serve(address)
            .await;
    }

    /// Serves the agent on a listener already bound, until `stop` completes.
    pub async fn serve_until(
        self,
        listener: tokio::net::TcpListener,
        stop: impl std::future::Future,
    ) {
        HttpServer::new(self.endpoint())
            .serve_with_cancel(listener, stop)
            .await;
    }
}
