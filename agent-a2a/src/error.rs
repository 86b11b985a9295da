//! [`A2aError`]: what goes wrong serving or calling an A2A agent.

use std::time::Duration;

/// What went wrong, worded to say what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// A setting cannot work (a short token, a zero limit, a URL that does not parse).
    #[error("invalid A2A configuration: {0}")]
    Config(String),
    /// The network edge would not serve (an unsafe or impossible setting, an address that
    /// cannot be bound, no randomness for a token): see [`agent_serve::EdgeError`].
    #[error("refusing to serve A2A: {0}")]
    Edge(#[from] agent_serve::EdgeError),
    /// A socket could not be bound, read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The remote agent could not be reached, or the connection broke.
    #[error("could not reach the A2A agent at {url}: {message}")]
    Connect {
        /// The URL asked.
        url: String,
        /// What failed.
        message: String,
    },
    /// The remote agent answered with an HTTP error status.
    #[error("the A2A agent at {url} answered HTTP {status}: {body}")]
    Status {
        /// The URL asked.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The remote agent answered with a JSON-RPC error.
    #[error("the A2A agent answered {method} with error {code}: {message}")]
    Rpc {
        /// The method called.
        method: String,
        /// The JSON-RPC error code (A2A's are -32001 to -32099).
        code: i64,
        /// Its message.
        message: String,
    },
    /// The remote agent's answer is not what the protocol says it must be.
    #[error("the A2A agent's answer to {method} is malformed: {message}")]
    Protocol {
        /// The method called (or `agent card`).
        method: String,
        /// What is wrong with it.
        message: String,
    },
    /// The remote agent did not finish within the time allowed.
    #[error("the A2A agent did not answer {method} within {}s", .after.as_secs_f64())]
    Timeout {
        /// The method called.
        method: String,
        /// The time allowed.
        after: Duration,
    },
}

impl A2aError {
    pub(crate) fn protocol(method: &str, message: impl Into<String>) -> Self {
        A2aError::Protocol {
            method: method.to_owned(),
            message: message.into(),
        }
    }
}
