//! What can go wrong when serving a registry or connecting to an MCP server ([`McpError`]).
//!
//! These are errors of the plumbing: a server that cannot be started, a handshake that fails, a
//! name clash in a registry. Failures of single tool calls are never `McpError`s: a served call
//! answers with an `isError` result, and a call to a remote tool answers the model with a
//! [`SkillError`](agent_core::SkillError).

use std::time::Duration;

use agent_core::RegistryError;

/// The ways serving or connecting can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// A process, a socket or standard I/O failed; `what` says which.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, e.g. "starting the MCP server `npx`".
        what: String,
        /// The operating system's words.
        #[source]
        source: std::io::Error,
    },
    /// The MCP handshake (`initialize`) did not succeed.
    #[error("could not connect to the MCP server {server}: {message}")]
    Connect {
        /// The server: its command line or URL.
        server: String,
        /// rmcp's description of the failure.
        message: String,
    },
    /// The server did not finish the handshake or answer `tools/list` in time.
    #[error("the MCP server {server} did not answer within {timeout:?}")]
    Timeout {
        /// The server: its command line or URL.
        server: String,
        /// How long we waited.
        timeout: Duration,
    },
    /// A request to the server failed after the handshake (listing its tools, for example).
    #[error("the MCP server {server} failed to {action}: {source}")]
    Service {
        /// The server: its command line or URL.
        server: String,
        /// What was asked of it, e.g. "list its tools".
        action: &'static str,
        /// rmcp's error.
        #[source]
        source: Box<rmcp::ServiceError>,
    },
    /// The server's tools could not be added to a registry (a name is taken or invalid).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// [`McpSkills::reconnect`](crate::McpSkills::reconnect) on a connection made from a
    /// transport that cannot be made again.
    #[error(
        "the connection to {server} was made from a ready transport and cannot be reconnected; connect with `connect_stdio` or `connect_http` to be able to reconnect"
    )]
    NotReconnectable {
        /// The server's description.
        server: String,
    },
    /// A setting of the HTTP server's own is impossible (a zero session limit or idle
    /// timeout), so it did not start. The message names it.
    #[error("refusing to serve MCP over HTTP: {0}")]
    HttpConfig(String),
    /// The network edge would not serve (an unsafe or impossible setting, an address that
    /// cannot be bound, no randomness for a token): see [`agent_serve::EdgeError`].
    #[error("refusing to serve MCP over HTTP: {0}")]
    Edge(#[from] agent_serve::EdgeError),
    /// Media the server sent (an image in a prompt) was refused: not base64, past the limit, or
    /// not what its type says (see [`crate::media`]).
    #[error("the MCP server {server} sent media that was refused ({what}): {source}")]
    Media {
        /// The server: its command line or URL.
        server: String,
        /// Where the media was, e.g. "the prompt `review`".
        what: String,
        /// Why it was refused.
        #[source]
        source: agent_core::content::MediaError,
    },
    /// Serving ended with an error from rmcp's service loop.
    #[error("the MCP service stopped: {0}")]
    Serve(String),
}

impl McpError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        McpError::Io {
            what: what.into(),
            source,
        }
    }
}
