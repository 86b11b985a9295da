//! Logging in: the authorization code flow with PKCE against the Python SDK's authorization
//! server, and the redirects the login's listener refuses.

use std::time::Duration;

use agent_mcp::client::oauth::{FileTokenStore, LoginOptions, OAuthError};

use crate::server::{PyServer, get, log_in, login_as_browser, token_file, tokens};

#[tokio::test]
async fn a_login_registers_the_client_exchanges_the_code_and_stores_the_tokens_privately() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path().join("tokens"), &server.url).unwrap();
    let path = store.path().to_owned();

    let (login, status) = login_as_browser(
        &server,
        store,
        LoginOptions::default(),
        |redirect| async move {
            // A browser also asks for a favicon: answered 404, and the login keeps waiting.
            let origin = redirect.split("/callback").next().unwrap().to_owned();
            assert_eq!(get(&format!("{origin}/favicon.ico")).await.0, 404);
            let (status, body) = get(&redirect).await;
            assert!(body.contains("Signed in"), "{body}");
            status
        },
    )
    .await;
    let login = login.expect("logs in");
    assert_eq!(status, Some(200));

    // The client registered dynamically, and the token is the one the server issued to it.
    let registered = server.events("register");
    assert_eq!(registered.len(), 1);
    assert_eq!(registered[0]["client_id"], login.client_id.as_str());
    let issued = server.events("token");
    assert_eq!(issued.len(), 1);
    let (access, refresh) = tokens(&path);
    assert_eq!(issued[0]["access"], access.as_str());
    assert!(refresh.starts_with("rt-"));
    assert!(login.refreshable);
    assert_eq!(login.expires_in, Some(Duration::from_secs(3600)));
    assert_eq!(login.scopes, ["mcp"]);
    let file = token_file(&path);
    assert_eq!(file["server"], server.url.as_str());
    assert_eq!(file["credentials"]["client_id"], login.client_id.as_str());

    // Only the owner can read the file, or list its directory.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
    }
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [path.file_name().unwrap().to_owned()]);
}

#[tokio::test]
async fn a_redirect_with_a_forged_state_is_refused_and_nothing_is_stored() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    let path = store.path().to_owned();

    // The right code with another state: what an attacker's page would send the browser to.
    let (login, status) = login_as_browser(
        &server,
        store,
        LoginOptions::default(),
        |redirect| async move {
            let url = url::Url::parse(&redirect).unwrap();
            let mut forged = url.clone();
            forged
                .query_pairs_mut()
                .clear()
                .extend_pairs(url.query_pairs().map(|(k, v)| {
                    let v = if k == "state" { "forged".into() } else { v };
                    (k, v)
                }));
            get(forged.as_str()).await.0
        },
    )
    .await;
    let error = login.expect_err("a forged state is refused");
    assert!(matches!(error, OAuthError::StateMismatch(_)), "{error:?}");
    assert!(error.to_string().contains("nothing was stored"), "{error}");
    assert_eq!(status, Some(400));
    assert!(!path.exists());
    assert!(
        server.events("token").is_empty(),
        "the code was never exchanged"
    );
}

#[tokio::test]
async fn a_redirect_without_a_state_is_refused_and_nothing_is_stored() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    let path = store.path().to_owned();

    let (login, status) = login_as_browser(
        &server,
        store,
        LoginOptions::default(),
        |redirect| async move {
            let url = url::Url::parse(&redirect).unwrap();
            let code = url
                .query_pairs()
                .find(|(k, _)| k == "code")
                .unwrap()
                .1
                .into_owned();
            let origin = redirect.split('?').next().unwrap().to_owned();
            get(&format!("{origin}?code={code}")).await.0
        },
    )
    .await;
    assert!(
        matches!(login, Err(OAuthError::StateMismatch(_))),
        "{login:?}"
    );
    assert_eq!(status, Some(400));
    assert!(!path.exists());
    assert!(server.events("token").is_empty());
}

#[tokio::test]
async fn a_login_whose_browser_never_comes_back_ends_with_nothing_stored() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    let path = store.path().to_owned();

    let options = LoginOptions::default().with_timeout(Duration::from_millis(300));
    let (login, status) = login_as_browser(&server, store, options, |_redirect| async move {
        // The person closed the tab: the redirect is never followed.
        0
    })
    .await;
    assert!(matches!(login, Err(OAuthError::Timeout(_))), "{login:?}");
    assert_eq!(status, Some(0));
    assert!(!path.exists());
}

#[tokio::test]
async fn logging_in_again_replaces_the_tokens() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    log_in(&server, store.clone()).await;
    let first = tokens(store.path());
    log_in(&server, store.clone()).await;
    let second = tokens(store.path());
    assert_ne!(first.0, second.0);
    assert_eq!(
        server.events("token").last().unwrap()["access"],
        second.0.as_str()
    );
}

/// Sends `request` to the listener behind `redirect` over a plain socket and returns the
/// status line of the answer.
async fn raw(redirect: &str, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let host = redirect
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let mut stream = tokio::net::TcpStream::connect(host).await.unwrap();
    // The listener may answer before it has read everything sent; a failed write is fine.
    let _ = stream.write_all(request).await;
    // Nothing more comes: the listener sees the end of the request.
    let _ = stream.shutdown().await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn the_listener_refuses_huge_heads_and_other_methods_and_still_takes_the_real_redirect() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    let path = store.path().to_owned();

    let (login, status) = login_as_browser(
        &server,
        store,
        LoginOptions::default(),
        |redirect| async move {
            // A head far over the listener's bound, never ending: refused, not buffered.
            let mut huge = b"GET /callback?state=x HTTP/1.1\r\nx-pad: ".to_vec();
            huge.resize(256 * 1024, b'a');
            assert_eq!(
                raw(&redirect, &huge).await,
                "HTTP/1.1 431 Request Header Fields Too Large"
            );
            // A POST to the callback is not a redirect.
            let post = b"POST /callback HTTP/1.1\r\ncontent-length: 0\r\n\r\n";
            assert_eq!(
                raw(&redirect, post).await,
                "HTTP/1.1 405 Method Not Allowed"
            );
            // A connection that ends before a whole head.
            assert_eq!(
                raw(&redirect, b"GET /call").await,
                "HTTP/1.1 400 Bad Request"
            );
            // None of these ended the login: the real redirect still logs in.
            get(&redirect).await.0
        },
    )
    .await;
    login.expect("logs in after the refused requests");
    assert_eq!(status, Some(200));
    assert!(path.exists());
}

#[tokio::test]
async fn a_flood_of_requests_for_other_paths_ends_the_login_with_nothing_stored() {
    let server = PyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(dir.path(), &server.url).unwrap();
    let path = store.path().to_owned();

    let (login, status) = login_as_browser(
        &server,
        store,
        LoginOptions::default(),
        |redirect| async move {
            let origin = redirect.split("/callback").next().unwrap().to_owned();
            for i in 0..32 {
                assert_eq!(get(&format!("{origin}/probe{i}")).await.0, 404);
            }
            // The listener has given up: the real redirect finds nobody listening.
            let refused = reqwest::Client::new().get(&redirect).send().await;
            u16::from(refused.is_err())
        },
    )
    .await;
    assert!(matches!(login, Err(OAuthError::Redirect(_))), "{login:?}");
    assert_eq!(status, Some(1), "the listener is closed");
    assert!(!path.exists());
    assert!(server.events("token").is_empty());
}
