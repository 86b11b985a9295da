//! The HTTP settings of an [`McpServer`](crate::McpServer) and their defaults: what the builder
//! methods of [`crate::http`] set and what [`McpServer::serve_http`](crate::McpServer::serve_http)
//! checks before serving. The defaults are public as [`crate::http`]'s constants.

use std::time::Duration;

use crate::auth::Auth;

/// How many admitted connections (that sent a request with the token)
/// [`McpServer::serve_http`](crate::McpServer::serve_http) keeps open at once unless
/// [`McpServer::max_connections`](crate::McpServer::max_connections) says otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// How many connections not admitted yet [`McpServer::serve_http`](crate::McpServer::serve_http)
/// keeps open at once unless
/// [`McpServer::max_pending_connections`](crate::McpServer::max_pending_connections) says
/// otherwise.
pub const DEFAULT_MAX_PENDING_CONNECTIONS: usize = 256;

/// How long a client has to send a request's head (and how long a kept-alive connection may sit
/// idle) unless [`McpServer::header_read_timeout`](crate::McpServer::header_read_timeout) says
/// otherwise.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client has to send a request's body unless
/// [`McpServer::body_read_timeout`](crate::McpServer::body_read_timeout) says otherwise.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How many MCP sessions may live at once unless
/// [`McpServer::max_sessions`](crate::McpServer::max_sessions) says otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 100;

/// How long a session with no open request lives unless
/// [`McpServer::session_idle_timeout`](crate::McpServer::session_idle_timeout) says otherwise.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The HTTP settings of an [`McpServer`](crate::McpServer), as its builder methods left them
/// (checked only when serving starts).
#[derive(Debug, Clone)]
pub(crate) struct HttpSettings {
    pub(crate) auth: Auth,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) max_connections: usize,
    pub(crate) max_pending_connections: usize,
    pub(crate) header_read_timeout: Duration,
    pub(crate) body_read_timeout: Duration,
    pub(crate) max_sessions: usize,
    pub(crate) session_idle_timeout: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            auth: Auth::default(),
            allowed_origins: Vec::new(),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_pending_connections: DEFAULT_MAX_PENDING_CONNECTIONS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
        }
    }
}
