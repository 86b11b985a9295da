//! Model Context Protocol for eugene, through the official Rust SDK, [`rmcp`]: serve any
//! [`Registry`](agent_core::Registry) as an MCP server, and use any MCP server's tools as skills.
//! The facade crate re-exports this crate as `eugene::mcp` behind its cargo feature `mcp`.
//!
//! # Serve
//!
//! ```no_run
//! use agent_core::Registry;
//! use agent_mcp::ServeMcp;
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
//! refused, and connections, slow clients and sessions are bounded; see [`http`].
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
//! use agent_mcp::server::{ElicitAnswer, SampleRequest, client_of};
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
//!         ElicitAnswer::Accept(answer) => answer["env"].to_string(),
//!         ElicitAnswer::Decline | ElicitAnswer::Cancel => return Ok("not deployed".into()),
//!     };
//!     let note = client
//!         .sample(&SampleRequest::new(100).user(format!("One line of release notes for {env}.")))
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
//! and destructive flags come from the tool's annotations and fail closed. A server that exits
//! or a connection that breaks gives error results, never a hang; [`McpSkills::reconnect`]
//! connects again. See [`client`].
//!
//! ## OAuth 2.1 for remote servers (feature `oauth`)
//!
//! A server behind OAuth is logged in to once, with `oauth::login` (the authorization code
//! flow with PKCE: the authorization server is discovered from the MCP server, the client
//! registers dynamically, the browser comes back to a listener on `127.0.0.1`, a forged or
//! missing `state` is refused), and then connected to with `McpSkills::connect_http_oauth`,
//! which uses the stored access token and refreshes it when it has expired. The tokens live
//! in a store the application provides (rmcp's `CredentialStore`, re-exported), or in
//! `oauth::FileTokenStore`: one JSON file per server, written atomically with mode `0600`.
//! Without a usable token nothing is sent to the server and the error says how to log in.
//! Tokens are never logged. See the `oauth` module (it exists with the feature on).
//!
//! # Dependencies, and why
//!
//! `rmcp` (the protocol, its client and server, the stdio, pipe and streamable-HTTP
//! transports), `agent-serve` (the connections of the HTTP server: the listen queue, the
//! pending and admitted pools, the `Origin` check; shared with agent-a2a),
//! `hyper`/`http-body-util`/`bytes` (the requests, responses and bodies between agent-serve
//! and rmcp's HTTP service, the body's time and size limits), `rustls` with `ring` (HTTPS for
//! the HTTP client without building aws-lc), `agent-bearer` (bearer tokens: made from the
//! operating system's random number generator, compared in constant time; shared with
//! agent-a2a), `futures-core`
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
//!
//! # Questions and sampling (work in progress)
//!
//! A remote tool that asks the user for input (`elicitation/create`, form or URL mode) suspends
//! its call ([`agent_core::SkillError::Suspended`]): the run pauses with a pending call named
//! [`client::ELICITATION_CALL`] whose arguments are the [`Elicitation`] (message and requested
//! schema). A [`Decision`](agent_core::Decision) answers it as [`ElicitationAnswer`] documents
//! (`Edit(content)` accepts, `Deny` declines, `Edit({"$action": "cancel"})` cancels); accepted
//! content is checked against the requested schema first, and a refused answer pauses again
//! with the reason, sending nothing. A question asked during an open request can be answered
//! only in the process (and on the connection) that asked it; continued after a restart, the
//! call fails saying the question expired. A multi-round-trip `input_required` result (MCP
//! 2026-07-28) keeps everything in the paused state instead, so it can be answered after a
//! restart. Sampling requests are refused unless [`McpSkills::with_sampling`] gave a model and a
//! [`SamplingHook`]. These paths are not yet covered by tests against the Python SDK.

#![warn(missing_docs)]

pub mod auth;
pub mod client;
pub mod error;
pub mod http;
mod http_settings;
mod jsonrpc;
pub mod origin;
pub mod server;
mod sessions;

pub use auth::generate_token;
#[cfg(feature = "oauth")]
pub use client::oauth;
pub use client::{
    Elicitation, ElicitationAnswer, Handshake, McpSkills, Sampling, SamplingHook, SamplingRequest,
    SamplingVerdict, from_call_tool_result, skill_name,
};
pub use error::McpError;
pub use rmcp;
pub use server::{
    ConnectedClient, ElicitAnswer, McpServer, PromptArg, SampleAnswer, SampleRequest, ServeMcp,
    client_of, mcp_output_schema, to_call_tool_result, to_call_tool_result_for,
};
