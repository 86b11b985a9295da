//! [`McpSkills::connect_http_oauth`]: a streamable-HTTP connection whose requests carry the
//! stored access token, refreshed when it expires.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, CredentialRefreshGuard, CredentialStore,
    StoredCredentials,
};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::{RoleClient, ServiceExt};

use super::super::McpSkills;
use super::super::connection::{Live, Reconnect, Source, http_config};
use super::super::handler::{Handler, Shared as Client};
use super::super::limits::CONNECT_TIMEOUT;
use super::super::watched::Watched;
use super::error::OAuthError;
use crate::error::McpError;

impl McpSkills {
    /// Connects to the MCP server at `url` over streamable HTTP with the OAuth tokens in
    /// `store` (saved there by [`oauth::login`](crate::client::oauth::login)) and lists its tools.
    ///
    /// Before anything is sent to the MCP server, the stored access token is checked: an
    /// expired one is refreshed with the refresh token and the new tokens are saved in `store`.
    /// With no tokens stored, or a refresh the authorization server refuses, nothing is sent to
    /// the MCP server and the error is [`OAuthError::LoginRequired`], which says how to log
    /// in. Later requests (reconnections included) refresh the same way when the token expires
    /// mid-session, and once more if the server answers 401 to a token that has not expired.
    ///
    /// The authorization server's metadata is discovered again on every connection (its
    /// issuer must be the one the tokens came from; if it changed, the tokens are discarded and
    /// the error is [`OAuthError::LoginRequired`]).
    pub async fn connect_http_oauth(
        url: impl Into<String>,
        store: impl CredentialStore + 'static,
    ) -> Result<Self, OAuthError> {
        let url = url.into();
        super::store::token_file_name(&url)?;
        let store: Arc<dyn CredentialStore> = Arc::new(store);
        let stored = store
            .load()
            .await
            .map_err(|e| OAuthError::auth(&url, "loading", e))?;
        if stored.is_none_or(|s| s.token_response.is_none()) {
            return Err(OAuthError::LoginRequired {
                server: url,
                reason: "no tokens are stored for it".into(),
            });
        }

        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut manager = AuthorizationManager::new(url.as_str())
            .await
            .map_err(|e| OAuthError::auth(&url, "setting up", e))?;
        manager.set_credential_store(Shared(store));
        let usable = manager
            .initialize_from_store()
            .await
            .map_err(|e| OAuthError::auth(&url, "discovering its authorization server", e))?;
        if !usable {
            return Err(OAuthError::LoginRequired {
                server: url,
                reason: "the stored tokens came from another authorization server".into(),
            });
        }
        // Refreshes an expired token now, so that no request goes out with it.
        manager
            .get_access_token()
            .await
            .map_err(|e| OAuthError::auth(&url, "refreshing the access token", e))?;

        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| McpError::Connect {
                server: format!("at {url}"),
                message: format!("the HTTP client cannot be built: {e}"),
            })?;
        let again = OAuthConnection {
            url: url.clone(),
            client: AuthClient::new(http, manager),
        };
        let label = format!("at {url}");
        let client = Client::new(label.clone());
        let handler = Handler {
            shared: client.clone(),
        };
        let live = again.open(&label, handler).await?;
        Ok(McpSkills::start(label, Source::Custom(Box::new(again)), live, client).await?)
    }
}

/// What makes (and makes again) an OAuth connection: the URL and rmcp's authorized client,
/// whose manager holds the store.
struct OAuthConnection {
    url: String,
    client: AuthClient<reqwest::Client>,
}

impl OAuthConnection {
    /// The handshake over a new transport. A 401 that a refresh did not cure (rmcp's
    /// `AuthClient` refreshes once and retries once) is [`OAuthError::LoginRequired`].
    async fn open(&self, label: &str, handler: Handler) -> Result<Live, OAuthError> {
        let transport =
            StreamableHttpClientTransport::with_client(self.client.clone(), http_config(&self.url));
        let transport = Watched::new(
            IntoTransport::<RoleClient, _, _>::into_transport(transport),
            handler.shared.follow.counters(),
        );
        let service = tokio::time::timeout(CONNECT_TIMEOUT, handler.serve(transport))
            .await
            .map_err(|_| McpError::Timeout {
                server: label.to_owned(),
                timeout: CONNECT_TIMEOUT,
            })?
            .map_err(|e| {
                if e.is_authorization_required() {
                    OAuthError::LoginRequired {
                        server: self.url.clone(),
                        reason: "the server refused the stored token, and refreshing it failed"
                            .into(),
                    }
                } else {
                    OAuthError::Mcp(McpError::Connect {
                        server: label.to_owned(),
                        message: e.to_string(),
                    })
                }
            })?;
        Ok(Live {
            service,
            child: None,
        })
    }
}

impl Reconnect for OAuthConnection {
    fn connect<'a>(
        &'a self,
        label: &'a str,
        handler: Handler,
    ) -> Pin<Box<dyn Future<Output = Result<Live, McpError>> + Send + 'a>> {
        Box::pin(async move {
            self.open(label, handler)
                .await
                .map_err(|error| match error {
                    OAuthError::Mcp(error) => error,
                    error => McpError::Connect {
                        server: label.to_owned(),
                        message: error.to_string(),
                    },
                })
        })
    }

    /// Streamable HTTP: a server's request comes on the response stream of its call.
    fn streams_tell(&self) -> bool {
        true
    }
}

/// The application's store, shared between this module's first check and rmcp's manager.
struct Shared(Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for Shared {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.0.on_refresh_token_rejected(credentials).await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        self.0.acquire_refresh_guard().await
    }
}
