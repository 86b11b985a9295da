//! Agent2Agent (A2A 1.0) for eugene, both ways: serve an
//! [`AgentRuntime`](agent_runtime::AgentRuntime) as an A2A agent ([`A2aServer`]), and use a
//! remote A2A agent as a skill ([`RemoteAgent`], [`RemoteAgentSkill`]). The facade crate
//! re-exports this crate as `eugene::a2a` behind its cargo feature `a2a`.
//!
//! # Serve
//!
//! ```no_run
//! use agent_a2a::A2aServer;
//! # use agent_core::Registry;
//! # use agent_llm::MockProvider;
//! use agent_runtime::AgentRuntime;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_a2a::A2aError> {
//! # let (provider, registry) = (MockProvider::new([]), Registry::new());
//! let runtime = AgentRuntime::new(provider, registry).streaming(true);
//! A2aServer::new(runtime)
//!     .name("helper")
//!     .bearer_token(agent_a2a::generate_token()?)
//!     .serve_at("127.0.0.1:8080")
//!     .await
//! # }
//! ```
//!
//! The card is at `/.well-known/agent-card.json` (skills from the registry, streaming, a bearer
//! scheme); JSON-RPC at `/`, with every request carrying `Authorization: Bearer <token>`
//! (`401` otherwise). Browser pages on other origins are refused (`403`), and connections
//! without the token cannot keep a client with it waiting ([`http`]). The methods are `SendMessage`, `SendStreamingMessage`, `GetTask`,
//! `ListTasks`, `CancelTask` and `SubscribeToTask` (push notifications and the extended card
//! answer their A2A "not supported" errors); a task is a run, its lifecycle as [`run`] describes; a run that pauses for approval is an
//! input-required task that the client's next message decides ([`decision`]); the limits are
//! in [`server`] and [`http`]. A message's file parts (bytes or URL) are attached to the run's
//! goal as media, checked first ([`media`]).
//!
//! # Consume
//!
//! ```no_run
//! # #[tokio::main] async fn main() -> Result<(), agent_a2a::A2aError> {
//! let mut registry = agent_core::Registry::new();
//! let remote = agent_a2a::RemoteAgent::connect("https://agent.example.com", Some("<token>")).await?;
//! registry.add(remote.into_skill());
//! # Ok(()) }
//! ```
//!
//! See [`client`] for the calls and their bounds, [`reply`] for what an answer says (its text
//! and its files), [`skill`] for what a skill call answers (its
//! text, and the files of the answer as media, checked as [`media`] says; a remote
//! input-required task suspends the call).
//!
//! # Why written here, and the dependencies
//!
//! The protocol's types and its JSON-RPC binding are written in this crate from the A2A 1.0
//! specification (`a2a.proto` and its ProtoJSON form), over the HTTP stack the workspace
//! already builds. The Rust A2A crates on crates.io were not a fit: `a2a-rs`'s newest release
//! needs Rust 1.96 (the workspace builds on 1.95), and its releases that build speak the 0.x
//! protocol (lowercase states, `message/send`) and bring axum, a second server stack; the
//! others are young, speak 0.x, or are types only. What the binding needs is small (a dozen
//! types, six methods, SSE), and interoperability is checked against the official Python SDK
//! (`a2a-sdk` 1.3.0) in both directions by this crate's tests.
//!
//! `agent-serve` (the network edge, shared with agent-mcp: the listener, pending and admitted
//! pools so that connections without the token cannot starve one with it, bearer tokens, the
//! `Origin` and `Host` checks, the body's limit and deadline), `axum` without default features
//! (the server as a router the edge serves or an application mounts),
//! `hyper`/`http-body-util`/`bytes` (responses, the SSE bodies), `reqwest` with `agent-tls`
//! (the client, the workspace's one HTTP client and its TLS settings), `agent_llm::sse`
//! (reading SSE within bounds), `getrandom` (ids), `tokio`,
//! `tokio-util` (the runtime's cancellation token), `futures`, `serde`/`serde_json`,
//! `thiserror`, `tracing`, `async-trait`, `base64` (file parts' bytes); and `agent-core`,
//! `agent-runtime`, `agent-llm`.

#![warn(missing_docs)]

pub mod card;
pub mod client;
pub mod decision;
pub mod error;
pub mod http;
mod ids;
pub mod jsonrpc;
pub mod media;
mod methods;
pub mod reply;
pub mod run;
pub mod server;
pub mod skill;
mod tasks;
pub mod types;

pub use agent_serve::generate_token;
pub use card::AgentCard;
pub use client::RemoteAgent;
pub use error::A2aError;
pub use reply::Reply;
pub use server::A2aServer;
pub use skill::{RemoteAgentSkill, skill_name};
pub use tasks::{
    MAX_CONTEXT_BYTES, MAX_CONTEXT_MESSAGES, MAX_CONVERSATION_BYTES, MAX_TASK_BYTES, apply,
};
