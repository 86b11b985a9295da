//! What can go wrong logging in to an MCP server or connecting with its tokens.

use std::time::Duration;

use rmcp::transport::auth::AuthError;

use crate::error::McpError;

/// A failed login or OAuth connection. No variant carries a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// There is no usable token for the server (none stored, or the refresh token was refused):
    /// log in first. Nothing was sent to the MCP server with a token.
    #[error(
        "no usable OAuth token for the MCP server at {server} ({reason}); log in first with \
         `agent_mcp::client::oauth::login` (with the eugene CLI: `eugene mcp login {server}`)"
    )]
    LoginRequired {
        /// The server's URL.
        server: String,
        /// Why the stored credentials cannot be used.
        reason: String,
    },
    /// The token store failed or holds something that is not a token file (the message names
    /// the file for [`FileTokenStore`](super::FileTokenStore)).
    #[error("the OAuth token store failed: {message}")]
    Store {
        /// What went wrong, and where.
        message: String,
    },
    /// The URL is not an `http://` or `https://` URL.
    #[error("`{url}` is not an MCP server URL: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// A step of OAuth failed (discovery, registration, the token exchange, a refresh).
    #[error("OAuth with the MCP server at {server} failed while {action}: {source}")]
    Auth {
        /// The server's URL.
        server: String,
        /// What was being done.
        action: &'static str,
        /// rmcp's error (boxed: it is large).
        #[source]
        source: Box<AuthError>,
    },
    /// The authorization redirect's `state` was missing or not the one this login sent: the
    /// redirect was refused and nothing was stored.
    #[error(
        "the authorization redirect was refused: its `state` {0}; nothing was stored (log in again)"
    )]
    StateMismatch(&'static str),
    /// The authorization server sent the person back with an error (they declined, say).
    #[error("the authorization server refused the login: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The OAuth error code (`access_denied`, ...).
        error: String,
        /// Its `error_description`, if any.
        description: Option<String>,
    },
    /// No authorization redirect arrived in time.
    #[error("no authorization redirect arrived within {0:?}; log in again")]
    Timeout(Duration),
    /// The loopback redirect listener failed.
    #[error("the login's redirect listener failed: {0}")]
    Redirect(String),
    /// Connecting to the MCP server failed after the token was ready.
    #[error(transparent)]
    Mcp(#[from] McpError),
}

impl OAuthError {
    pub(super) fn auth(server: &str, action: &'static str, source: AuthError) -> Self {
        match source {
            AuthError::CredentialStoreError(message) => OAuthError::Store { message },
            AuthError::AuthorizationRequired => OAuthError::LoginRequired {
                server: server.to_owned(),
                reason: "the stored tokens have expired and cannot be refreshed".into(),
            },
            source => OAuthError::Auth {
                server: server.to_owned(),
                action,
                source: Box::new(source),
            },
        }
    }
}
