//! The TLS settings of every HTTP client eugene builds: the model providers' (agent-llm, feature
//! `http`) and `web_fetch`'s (agent-std-tools, feature `web`).
//!
//! One function, [`tls_config`], in a crate of its own so that a crate of HTTP skills shares the
//! providers' TLS settings without depending on the providers. This crate depends on `rustls` and
//! `rustls-platform-verifier` only, and must not depend on any other eugene crate.

#![warn(missing_docs)]

/// The TLS settings of every HTTP client eugene builds (the providers', `web_fetch`'s): rustls
/// with its `ring` provider, the server's certificate checked by the operating system's verifier
/// (on Linux, the system's CA certificates), HTTP/2 and HTTP/1.1 offered. The providers and
/// `web_fetch` give it to their own client and install no process-wide crypto provider, so an
/// application's own choice stays its own. (`agent-mcp`'s HTTP client is rmcp's, with rmcp's
/// redirect rules; it installs `ring` as the process default when the application has none.)
///
/// Returns a message for the user if the verifier cannot start.
pub fn tls_config() -> Result<rustls::ClientConfig, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_platform_verifier())
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}
