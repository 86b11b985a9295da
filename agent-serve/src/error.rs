//! [`EdgeError`]: why the edge would not start serving. Every one of them is found before the
//! first connection is accepted; once serving, the edge does not return.

use std::net::SocketAddr;

/// Why [`Edge::serve`](crate::Edge::serve) (or making a token) failed. Each case is one a
/// caller may want to tell apart: the settings are unsafe or impossible, the address cannot be
/// bound, or the operating system has no randomness for a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EdgeError {
    /// [`Edge::without_auth`](crate::Edge::without_auth) on an address other hosts can reach.
    #[error(
        "`without_auth` is allowed only on a loopback address, and {bound} can be reached from \
         other hosts; set a bearer token (agent_serve::generate_token())"
    )]
    WithoutAuthOffLoopback {
        /// The address the listener is bound to.
        bound: SocketAddr,
    },
    /// The bearer token cannot be required as it is: too short, or not header-safe.
    #[error("the bearer token is refused: {0}; use agent_serve::generate_token()")]
    WeakToken(String),
    /// An allowed origin is not `scheme://host[:port]`.
    #[error("`{0}` is not an origin; write scheme://host[:port], e.g. https://app.example.com")]
    BadOrigin(String),
    /// A limit or timeout that must be at least 1 (or above zero) is zero.
    #[error("`{0}` must not be zero")]
    Zero(&'static str),
    /// The operating system gave no random bytes for a token.
    #[error("no random bytes for a bearer token: {0}")]
    NoRandomness(String),
    /// The address could not be bound or read.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}
