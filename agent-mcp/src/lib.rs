//! Model Context Protocol for eugene, through the official Rust SDK, [`rmcp`]: serve any
//! [`Registry`](agent_core::Registry) as an MCP server, and use any MCP server's tools as skills.
//! The facade crate re-exports this crate as `eugene::mcp` behind its cargo feature `mcp`.
//!
//! The crate has two halves, each a module with its entry point at the root:
//!
//! | half | entry point | what it is for |
//! |---|---|---|
//! | [`server`] | [`McpServer`] (and [`server::ServeMcp`]'s one-liners) | serving skills: a registry's skills as an MCP server's tools, its Agent Skills as resources, prompt templates; a served skill asks the client that called it through [`server::ConnectedClient`] |
//! | [`client`] | [`McpSkills`] | using servers' tools: an MCP server's tools as skills, its resources and prompts, and answering its questions ([`client::Elicitation`]) and sampling requests ([`client::Sampling`]) |
//!
//! Both halves deal in elicitation and sampling, from opposite ends, so their types are named by
//! their side: a served skill gets its client's answer as a [`server::ClientAnswer`] and asks
//! its client's model with a [`server::CompletionRequest`]; an application that uses a server
//! answers the server's question with a [`client::ElicitationAnswer`] and sees its sampling
//! request as a [`client::SamplingRequest`]. The root holds only the two entry points,
//! [`McpError`], [`generate_token`] and [`rmcp`]; everything else is named by its half,
//! `agent_mcp::server::…` or `agent_mcp::client::…`. [`media`] maps content both ways.
//!
//! # Serve
//!
//! ```no_run
//! use agent_core::Registry;
//! use agent_mcp::server::ServeMcp;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_mcp::McpError> {
//! let registry = Registry::discover().expect("skills are linked");
//! registry.serve_mcp_stdio().await // or .serve_mcp_http("127.0.0.1:8080"): http://127.0.0.1:8080/mcp
//! # }
//! ```
//!
//! Over HTTP every request must carry `Authorization: Bearer <token>`: choose the token with
//! [`McpServer::bearer_token`] ([`generate_token`] makes one), or let the server generate one
//! and print it on standard error. Only on a loopback address may
//! [`McpServer::without_auth`] switch this off. Cross-origin requests from browsers are
//! refused, and connections, slow clients and sessions are bounded; see [`http`]. The
//! endpoint is also an axum router ([`McpServer::into_router`]) for an application's own app,
//! on one port with A2A if you like.
//!
//! Every skill is a tool with its name, description, input schema and annotations
//! (`readOnlyHint`, `destructiveHint`); calls go through [`Registry::run_one`](agent_core::Registry::run_one), with the hooks,
//! timeouts, retries and truncation of in-process calls, and every failure is a result with
//! `isError: true`. [`McpServer`] chooses the workspace and the server's name; see
//! [`server`] for sessions, deferred skills and `tools/list_changed`.
//!
//! The example `mcp_server` serves every standard skill, confined to the workspace given as
//! its argument (`cargo build --release -p agent-mcp --example mcp_server`). Any MCP client
//! starts it as a child process; for Claude Desktop (`claude_desktop_config.json`), Cursor
//! (`.cursor/mcp.json`) and most others the configuration is:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "eugene": {
//!       "command": "/path/to/target/release/examples/mcp_server",
//!       "args": ["/path/to/project"]
//!     }
//!   }
//! }
//! ```
//!
//! ## Beyond tools: asking the client, resources, prompts
//!
//! A skill served over MCP can ask the client that called it: its user for input
//! (elicitation) or its model for a completion (sampling), through the call's context.
//!
//! ```
//! use agent_core::{SkillContext, SkillError};
//! use agent_mcp::server::{ClientAnswer, CompletionRequest, client_of};
//! use serde_json::json;
//!
//! async fn deploy(ctx: &SkillContext) -> Result<String, SkillError> {
//!     let client = client_of(ctx)?; // an error outside an MCP server's call
//!     let form = json!({
//!         "type": "object",
//!         "properties": {"env": {"type": "string", "enum": ["staging", "production"]}},
//!         "required": ["env"]
//!     });
//!     let env = match client.elicit("Deploy where?", form).await? {
//!         ClientAnswer::Accept(answer) => answer["env"].to_string(),
//!         ClientAnswer::Decline | ClientAnswer::Cancel => return Ok("not deployed".into()),
//!     };
//!     let note = client
//!         .sample(&CompletionRequest::new(100).user(format!("One line of release notes for {env}.")))
//!         .await?;
//!     Ok(format!("deployed to {env}: {}", note.text))
//! }
//! ```
//!
//! A client that did not declare `elicitation` or `sampling` gets a tool error saying so; the
//! client has [`McpServer::client_request_timeout`] to answer (five minutes by default), and a
//! request the skill stops waiting for (the call cancelled, timed out, or the server's token
//! fired) is withdrawn with `notifications/cancelled`. See [`server::ask_client`].
//!
//! A skill can also send the client's user to a URL ([`server::ConnectedClient::elicit_url`],
//! URL-mode elicitation, for what must not pass through the client: a sign-in, a payment) and
//! tell the client when that is done ([`server::ConnectedClient::elicitation_complete`]).
//!
//! Long-running skills are served as MCP tasks (the Tasks extension) to clients that support
//! them: [`McpServer::tasks`] names the skills, whose `tools/call` then answers at once with a
//! task the client polls (`tasks/get`) and cancels (`tasks/cancel`, which fires the skill's
//! cancellation token); a task is bounded by a TTL and a cap on open tasks per session, and a
//! skill that asks the client from a task makes it `input_required`. Other clients get the
//! synchronous call. See [`server::tasks`].
//!
//! The registry's Agent Skills are served as resources, `skill://NAME/SKILL.md` and
//! `skill://NAME/PATH` for each other file of the folder ([`server::resources`]), and an
//! application adds prompt templates with [`McpServer::prompt`] ([`server::prompts`]). Each
//! capability is advertised only when there is something behind it.
//!
//! # Consume
//!
//! ```no_run
//! use agent_core::Registry;
//! use agent_mcp::McpSkills;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_mcp::McpError> {
//! let mut registry = Registry::new();
//! let files = McpSkills::connect_stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."])
//!     .await?
//!     .with_prefix("fs_");
//! files.add_to(&mut registry)?;
//! let remote = McpSkills::connect_http("http://127.0.0.1:8080/mcp").await?;
//! remote.add_to(&mut registry)?;
//! # Ok(()) }
//! ```
//!
//! Each tool becomes a [`DynSkill`](agent_core::DynSkill) with the server's schema; read-only
//! and destructive flags come from the tool's annotations and fail closed. Images, audio and
//! embedded files in a tool's result (and in a server's sampling request) reach the model as
//! media parts, decoded within [`MediaLimits`](agent_core::content::MediaLimits) and checked; a
//! skill's media is served as MCP image, audio, resource and resource-link blocks. The mapping,
//! both ways, is in [`media`]. A server that exits
//! or a connection that breaks gives error results, never a hang; [`McpSkills::reconnect`]
//! connects again. See [`client`].
//!
//! ## OAuth 2.1 for remote servers (feature `oauth`)
//!
//! A server behind OAuth is logged in to once, with `client::oauth::login` (the authorization code
//! flow with PKCE: the authorization server is discovered from the MCP server, the client
//! registers dynamically, the browser comes back to a listener on `127.0.0.1`, a forged or
//! missing `state` is refused), and then connected to with `McpSkills::connect_http_oauth`,
//! which uses the stored access token and refreshes it when it has expired. The tokens live
//! in a store the application provides (rmcp's `CredentialStore`, re-exported), or in
//! `client::oauth::FileTokenStore`: one JSON file per server, written atomically with mode `0600`.
//! Without a usable token nothing is sent to the server and the error says how to log in.
//! Tokens are never logged. See the `client::oauth` module (it exists with the feature on).
//!
//! ## Beyond tools: questions, sampling, resources, prompts of a remote server
//!
//! ```no_run
//! use std::sync::Arc;
//! use agent_core::Decision;
//! use agent_mcp::McpSkills;
//! use agent_mcp::client::{Elicitation, Sampling};
//! use agent_runtime::{AgentRuntime, FinishReason};
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let provider = Arc::new(agent_llm::MockProvider::new([]));
//! # let app_model = agent_llm::MockProvider::new([]);
//! let server = McpSkills::connect_stdio("python", ["booking_server.py"])
//!     .await?
//!     .with_sampling(Sampling::asking(provider)) // a person approves each sampling request
//!     .with_resource_skill()                     // the model may read the server's resources
//!     .await?;
//! let mut registry = agent_core::Registry::new();
//! server.add_to(&mut registry)?;
//! let runtime = AgentRuntime::new(app_model, registry);
//! let mut outcome = runtime.run("Book a table for Friday.").await?;
//! while let FinishReason::AwaitingApproval { pending } = &outcome.finish {
//!     let decisions: Vec<(String, Decision)> = pending
//!         .iter()
//!         .map(|call| match Elicitation::of(call) {
//!             // The server asks "Who is the table for?" with a form's schema: show it, answer it.
//!             Some(question) => {
//!                 println!("{} {:?}", question.message(), question.schema());
//!                 (call.id(), Decision::Edit(serde_json::json!({"name": "Ada", "guests": 2})))
//!             }
//!             None => (call.id(), Decision::Approve), // a sampling request, or a tool call
//!         })
//!         .collect();
//!     let state = *outcome.state.take().expect("a paused run keeps its state");
//!     outcome = runtime.continue_paused(state, decisions).await?;
//! }
//! let prompt = server.get_prompt("review", serde_json::Map::new()).await?; // messages
//! # Ok(()) }
//! ```
//!
//! A remote tool that asks the user for input (`elicitation/create`, form or URL mode) suspends
//! its call: the run ends with [`FinishReason::AwaitingApproval`](
//! https://docs.rs/agent-runtime) whose pending call (named [`client::ELICITATION_CALL`], id
//! `CALL/elicitation`) carries the server's message and requested schema
//! ([`client::Elicitation::of`]). A [`Decision`](agent_core::Decision) answers it as
//! [`client::ElicitationAnswer`] documents (`Edit(content)` accepts, `Deny` declines,
//! `Edit({"$action": "cancel"})` cancels); accepted content is checked against the requested
//! schema first, and a refused answer pauses again with the reason, sending nothing. A question
//! goes to the call whose request it came with, also when calls run at once. A question asked
//! during an open request can be answered only by the process (and connection) that asked it;
//! continued after a restart, the call fails saying the question expired. With
//! [`client::Handshake::Discover`], a server that speaks MCP 2026-07-28 asks with an `input_required`
//! result instead, kept in the paused run's state, so it can be answered after a restart.
//!
//! A server's sampling requests (`sampling/createMessage`) are refused unless
//! [`McpSkills::with_sampling`] gave a model: [`client::Sampling::asking`] pauses the run on each (the
//! request is the pending call, named [`client::SAMPLING_CALL`]; approve lets the model answer,
//! deny refuses), [`client::Sampling::new`] lets a [`client::SamplingHook`] allow, deny, edit or ask. The
//! tokens spent count in the run of the call the request came with (its usage, cost, budgets
//! and `agents` under [`client::sampling_source`]), and per connection in
//! [`McpSkills::sampling_usage`] and a `tracing` event.
//!
//! The server's resources, resource templates and prompts are the application's:
//! [`McpSkills::resources`], [`McpSkills::read_resource`], [`McpSkills::prompts`],
//! [`McpSkills::get_prompt`]; [`McpSkills::with_resource_skill`] offers the model a
//! `read_resource` skill too. A server's `list_changed` notifications are seen in
//! [`McpSkills::changes`]. Its tools follow its `tools/list_changed` while a runtime holds the
//! registry: [`McpSkills::add_to`] adds them as a live set ([`agent_core::LiveSkills`]), read
//! again when the server announces a change, so the model is offered the new list from its next
//! turn. See [`client`] for all of it.
//!
//! # Dependencies, and why
//!
//! `rmcp` (the protocol, its client and server, the stdio, pipe and streamable-HTTP
//! transports), `agent-serve` (the network edge, shared with agent-a2a: the listener, the
//! pending and admitted pools, bearer tokens, the `Origin` and `Host` checks, the body's limit
//! and deadline), `axum` without default features (the endpoint as a router the edge serves
//! or an application mounts), `tower-service` (the endpoint as the tower service the router
//! mounts), `hyper`/`http-body-util`/`bytes` (the requests, responses and bodies between the
//! router and rmcp's HTTP service), `rustls` with `ring` (HTTPS for the HTTP client without
//! building aws-lc), `futures-core`
//! (the `Stream` trait of the bounded session manager), `tokio` (processes, sockets,
//! timeouts), `tokio-util` (the cancellation token that withdraws a request to the client when
//! its call stops), `base64` (binary files of Agent Skills served as resource blobs),
//! `url` (the URL of a URL-mode elicitation, checked before a person is sent there; with
//! `oauth` also the server's URL and the redirect's query),
//! `agent-llm` (the application's model, which answers a server's sampling
//! requests), `jsonschema` (a person's answer to a server's question is checked against the
//! schema the server requested before it is sent), `serde` (the state a call suspended on a
//! question keeps in a paused run), `serde_json`, `thiserror`, `tracing`. rmcp's `elicitation`
//! feature gives the server's `elicitation/create` request.
//!
//! With the `oauth` feature: rmcp's `auth` feature (metadata discovery, dynamic client
//! registration, PKCE, refresh; it brings the `oauth2` crate), `reqwest` (the HTTP client
//! rmcp's `AuthClient` wraps, the version rmcp uses), `async-trait` (rmcp's `CredentialStore` is an `#[async_trait]` trait).

#![warn(missing_docs)]

pub mod client;
pub mod error;
pub mod http;
mod http_settings;
mod jsonrpc;
pub mod media;
pub mod server;
mod sessions;

pub use agent_serve::generate_token;
pub use client::McpSkills;
pub use error::McpError;
pub use rmcp;
pub use server::McpServer;
