//! The HTTP settings of an [`McpServer`](crate::McpServer) that are MCP's own (its sessions),
//! and their defaults; the rest (tokens, origins, connections, timeouts) are the network
//! edge's, an [`agent_serve::Edge`] the server holds. Both are checked only when serving starts.

use std::time::Duration;

/// How many MCP sessions may live at once unless
/// [`McpServer::max_sessions`](crate::McpServer::max_sessions) says otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 100;

/// How long a session with no open request lives unless
/// [`McpServer::session_idle_timeout`](crate::McpServer::session_idle_timeout) says otherwise.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The session settings of an [`McpServer`](crate::McpServer), as its builder methods left them.
#[derive(Debug, Clone)]
pub(crate) struct HttpSettings {
    pub(crate) max_sessions: usize,
    pub(crate) session_idle_timeout: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
        }
    }
}
