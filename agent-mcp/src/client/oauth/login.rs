//! [`login`]: the authorization code flow with PKCE, ending with the tokens in a store.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore,
};

use super::error::OAuthError;
use super::redirect::RedirectListener;

/// How a [`login_with`] goes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LoginOptions {
    /// The name the client registers under (shown by the authorization server); default
    /// `"eugene"`.
    pub client_name: String,
    /// The scopes to ask for; empty (the default) lets rmcp choose from the server's metadata
    /// and challenge.
    pub scopes: Vec<String>,
    /// How long to wait for the browser to come back; default five minutes.
    pub timeout: Duration,
}

impl Default for LoginOptions {
    fn default() -> Self {
        LoginOptions {
            client_name: "eugene".into(),
            scopes: Vec::new(),
            timeout: Duration::from_secs(300),
        }
    }
}

impl LoginOptions {
    /// The name the client registers under.
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scopes to ask for.
    pub fn with_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How long to wait for the browser to come back.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// A finished login. The tokens are in the store, not here.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Login {
    /// The client id the authorization server knows this client by.
    pub client_id: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// How long the access token lasts, if the server said.
    pub expires_in: Option<Duration>,
    /// Whether a refresh token came with it (without one, the login lasts as long as the
    /// access token).
    pub refreshable: bool,
}

/// Logs in to the MCP server at `url` with [`LoginOptions::default`], calling `open` with
/// the authorization URL for the person to open, and saves the tokens in `store`. See
/// [`login_with`].
pub async fn login(
    url: &str,
    store: impl CredentialStore + 'static,
    open: impl FnOnce(&str),
) -> Result<Login, OAuthError> {
    login_with(url, store, open, &LoginOptions::default()).await
}

/// Logs in to the MCP server at `url` and saves the tokens in `store`:
///
/// 1. a listener on `127.0.0.1` at a port the system picks becomes the redirect URI;
/// 2. the authorization server is discovered from the MCP server (protected-resource metadata,
///    then the authorization server's metadata), and this client registers with it
///    dynamically (the redirect URI's port changes with every login, so every login
///    registers);
/// 3. `open` gets the authorization URL (with a PKCE S256 challenge and a random `state`);
/// 4. the listener answers one callback request within `options.timeout`: a `state` other than
///    the one sent, or none, is refused ([`OAuthError::StateMismatch`]); an `error` is
///    [`OAuthError::Denied`];
/// 5. the code is exchanged with the PKCE verifier, and the tokens are saved in `store`.
///
/// Nothing is saved unless every step succeeds.
pub async fn login_with(
    url: &str,
    store: impl CredentialStore + 'static,
    open: impl FnOnce(&str),
    options: &LoginOptions,
) -> Result<Login, OAuthError> {
    super::store::token_file_name(url)?;
    let listener = RedirectListener::bind().await?;
    let redirect_uri = listener.redirect_uri();

    // rmcp's OAuth client is reqwest's, built without a default crypto provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| OAuthError::auth(url, "setting up", e))?;
    let resolution = manager
        .resolve_metadata()
        .await
        .map_err(|e| OAuthError::auth(url, "discovering its authorization server", e))?;
    manager.set_metadata(resolution.metadata);
    manager.set_credential_store(store);

    let mut request =
        AuthorizationRequest::new(&redirect_uri).with_client_name(options.client_name.as_str());
    if !options.scopes.is_empty() {
        request = request.with_scopes(options.scopes.iter().map(String::as_str));
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| OAuthError::auth(url, "registering the client", e))?;
    let auth_url = session.get_authorization_url().to_owned();
    let sent_state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| OAuthError::Redirect("the authorization URL carries no `state`".into()))?;

    open(&auth_url);
    let callback = listener.wait(&sent_state, options.timeout).await?;

    let tokens = session
        .handle_callback_with_issuer(&callback.code, &callback.state, callback.issuer.as_deref())
        .await
        .map_err(|e| OAuthError::auth(url, "exchanging the authorization code", e))?;
    let (client_id, _) = session
        .get_credentials()
        .await
        .map_err(|e| OAuthError::auth(url, "reading the saved credentials", e))?;
    // The response's fields as the server sent them (rmcp re-exports the `oauth2` crate's
    // type, not its accessor trait); the tokens themselves are not kept.
    let fields = serde_json::to_value(&tokens).unwrap_or_default();
    drop(tokens);
    Ok(Login {
        client_id,
        scopes: session.auth_manager.get_current_scopes().await,
        expires_in: fields
            .get("expires_in")
            .and_then(serde_json::Value::as_u64)
            .map(Duration::from_secs),
        refreshable: fields
            .get("refresh_token")
            .is_some_and(|token| !token.is_null()),
    })
}
