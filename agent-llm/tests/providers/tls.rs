//! TLS of the HTTP providers: certificates are checked (a loopback server with a certificate no
//! authority signed is refused before any request is sent), and building providers installs no
//! process-wide crypto provider.

use std::sync::Arc;

use agent_core::RetryPolicy;
use agent_llm::{ChatRequest, HttpOptions, LlmProvider, Message, OpenAiProvider, ProviderError};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

/// A TLS server on loopback presenting a self-signed certificate for `127.0.0.1` and `localhost`
/// (`tls/cert.pem`, made with `openssl req -x509`). It counts the bytes of every request that
/// got through the handshake.
async fn self_signed_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/providers/tls");
    let certs = CertificateDer::pem_file_iter(format!("{dir}/cert.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(format!("{dir}/key.pem")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://127.0.0.1:{}/v1",
        listener.local_addr().unwrap().port()
    );
    let received = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = received.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                if let Ok(mut tls) = acceptor.accept(tcp).await {
                    let mut buf = [0u8; 4096];
                    while let Ok(n @ 1..) = tls.read(&mut buf).await {
                        seen.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            });
        }
    });
    (url, received)
}

#[tokio::test]
async fn a_certificate_no_authority_signed_is_refused_before_anything_is_sent() {
    let (url, received) = self_signed_server().await;
    let options = HttpOptions {
        retry: RetryPolicy::none(),
        ..HttpOptions::default()
    };
    let provider = OpenAiProvider::new("sk-secret", "m")
        .with_base_url(url)
        .with_http_options(options);
    let transcript = [Message::user("hello")];
    let error = provider
        .complete(&ChatRequest::new(&transcript))
        .await
        .expect_err("a self-signed certificate must not be trusted");
    let ProviderError::Connect { message, .. } = &error else {
        panic!("expected a connection error, got {error:?}");
    };
    assert!(
        message.to_lowercase().contains("certificate"),
        "the error should say the certificate was refused: {message}"
    );
    assert_eq!(
        received.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no request byte (nor the key) may reach a server whose certificate was refused"
    );
}

#[test]
fn providers_install_no_process_wide_crypto_provider() {
    let _anthropic = agent_llm::AnthropicProvider::new("k", "m");
    let _openai = OpenAiProvider::new("k", "m").with_base_url("https://example.invalid/v1");
    assert!(
        rustls::crypto::CryptoProvider::get_default().is_none(),
        "building providers must leave the process-wide default to the application"
    );
    let config = agent_llm::llm::tls_config().unwrap();
    assert_eq!(
        config.alpn_protocols,
        [b"h2".to_vec(), b"http/1.1".to_vec()],
        "both HTTP versions are offered"
    );
}
