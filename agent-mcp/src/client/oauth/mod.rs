//! OAuth 2.1 for remote MCP servers (cargo feature `oauth`): log in once, then connect with the
//! stored tokens.
//!
//! ```no_run
//! use agent_mcp::McpSkills;
//! use agent_mcp::client::oauth::{self, FileTokenStore};
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_mcp::client::oauth::OAuthError> {
//! let url = "https://mcp.example.com/mcp";
//! let store = FileTokenStore::in_dir("/home/me/.config/my-app/mcp-tokens", url)?;
//! // Once: the person opens the URL, signs in, and the browser comes back to a loopback port.
//! oauth::login(url, store.clone(), |auth_url| println!("Open {auth_url}")).await?;
//! // Every run: the stored access token, refreshed when it has expired.
//! let tools = McpSkills::connect_http_oauth(url, store).await?;
//! # Ok(()) }
//! ```
//!
//! The protocol is rmcp's client auth ([`rmcp::transport::auth`]): the authorization server is
//! discovered from the MCP server's protected-resource metadata (or its 401 challenge), the
//! client is registered dynamically, the code is exchanged with PKCE (S256), and an expired
//! access token is refreshed with the refresh token. This module adds what rmcp leaves to the
//! application:
//!
//! - **Where the tokens live.** A store is rmcp's [`CredentialStore`], re-exported as is rather
//!   than wrapped: it is the trait rmcp's [`AuthorizationManager`](rmcp::transport::auth::AuthorizationManager)
//!   calls in the middle of a refresh (with a guard so two refreshes do not race), and a second
//!   trait in front of it would only copy it. One store holds one server's credentials.
//!   [`FileTokenStore`] keeps them in one JSON file per server (written to a temporary file
//!   and renamed, mode `0600`, read only up to [`MAX_TOKEN_FILE_BYTES`]; a file that is not a
//!   token file is an error naming it, never replaced silently).
//! - **Logging in** ([`login`]): the authorization URL is handed to a function (print it, open
//!   a browser); the redirect comes back to a listener on `127.0.0.1` at a port the system
//!   picks, which answers one callback request and closes. A callback whose `state` is not
//!   the one this login sent (forged, or missing) is refused and nothing is stored; so is one
//!   with an `error`; no callback within [`LoginOptions::timeout`] (default five minutes) is an
//!   error too.
//! - **Connecting** ([`McpSkills::connect_http_oauth`](crate::McpSkills::connect_http_oauth)):
//!   the stored access token, refreshed first when it has expired (and the new tokens saved);
//!   with no token, or a refresh the server refuses, the connection is not attempted: the error
//!   is [`OAuthError::LoginRequired`], which says how to log in. No request is ever sent with a
//!   token known to be unusable.
//!   The listener reads one request at a time, each head bounded (16 KiB, 10 s); a head too
//!   large, another method than `GET`, or a request for another path is answered with an error
//!   status and does not end the login (at most 32 requests for other paths are answered).
//! - **Tokens are never logged.** Neither this module's messages and errors nor rmcp's tracing
//!   events carry an access or refresh token (rmcp's token types print as `[redacted]`); the
//!   tests capture every event at `TRACE` to check it. The token file is the only place they
//!   are written. (rmcp does log the one-time authorization code at `DEBUG` while exchanging
//!   it: a code is useless without the PKCE verifier, which is never logged, and is spent once
//!   exchanged.)

mod connect;
mod error;
mod login;
mod redirect;
mod store;

pub use error::OAuthError;
pub use login::{Login, LoginOptions, login, login_with};
pub use rmcp::transport::auth::{CredentialStore, InMemoryCredentialStore, StoredCredentials};
pub use store::{FileTokenStore, MAX_TOKEN_FILE_BYTES, token_file_name};
