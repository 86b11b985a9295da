//! The Python OAuth-protected MCP server, the test as the browser, the token file, and the
//! captured tracing events.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use agent_mcp::client::oauth::{self, FileTokenStore, Login, LoginOptions, OAuthError};
use serde_json::Value;
use test_support::python_server::PythonServer;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/programs/oauth_server.py"
);

/// The server, killed when dropped.
pub struct PyServer {
    server: PythonServer,
    pub url: String,
}

impl PyServer {
    /// Starts oauth_server.py with a Python that has the `mcp` package (installed under the
    /// test target's directory if `AGENT_MCP_PYTHON` names none; failing, saying how).
    pub fn start() -> PyServer {
        capture_tracing();
        let server = PythonServer::start(Path::new(SCRIPT), env!("CARGO_TARGET_TMPDIR"));
        PyServer {
            url: server.url.clone(),
            server,
        }
    }

    /// Every line the server logged: requests and grants.
    pub fn log(&self) -> Vec<Value> {
        self.server.log()
    }

    /// The Authorization header of every request to /mcp (`None` for one without).
    pub fn mcp_authorizations(&self) -> Vec<Option<String>> {
        self.log()
            .iter()
            .filter(|e| e["path"] == "/mcp")
            .map(|e| e["authorization"].as_str().map(str::to_owned))
            .collect()
    }

    /// The grants of one kind (`token`, `refresh`, `code`, `register`).
    pub fn events(&self, kind: &str) -> Vec<Value> {
        self.log()
            .into_iter()
            .filter(|e| e["event"] == kind)
            .collect()
    }
}

/// An HTTP client that does not follow redirects: the test follows them itself.
pub fn browser() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// GETs the authorization URL (the provider approves at once) and returns where it redirects
/// the browser: the login's loopback listener, with `code` and `state`.
pub async fn authorize(auth_url: &str) -> String {
    let response = browser().get(auth_url).send().await.unwrap();
    assert_eq!(response.status(), 302, "{:?}", response.text().await);
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// GETs `url` and returns its status and body.
pub async fn get(url: &str) -> (u16, String) {
    let response = browser().get(url).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// Logs in with the test as the browser; `follow` gets the redirect (to the listener) and does
/// what the browser would, returning the listener's status.
pub async fn login_as_browser<F, Fut>(
    server: &PyServer,
    store: FileTokenStore,
    options: LoginOptions,
    follow: F,
) -> (Result<Login, OAuthError>, Option<u16>)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = u16>,
{
    let (sent, url) = tokio::sync::oneshot::channel::<String>();
    let login = oauth::login_with(
        &server.url,
        store,
        move |auth_url| {
            let _ = sent.send(auth_url.to_owned());
        },
        &options,
    );
    let browse = async {
        let Ok(auth_url) = url.await else {
            return None;
        };
        let redirect = authorize(&auth_url).await;
        Some(follow(redirect).await)
    };
    tokio::join!(login, browse)
}

/// Logs in the ordinary way: the browser follows the redirect.
pub async fn log_in(server: &PyServer, store: FileTokenStore) -> Login {
    let (login, status) = login_as_browser(
        server,
        store,
        LoginOptions::default(),
        |redirect| async move { get(&redirect).await.0 },
    )
    .await;
    assert_eq!(status, Some(200));
    login.expect("logs in")
}

/// The token file's JSON.
pub fn token_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The stored access and refresh tokens.
pub fn tokens(path: &Path) -> (String, String) {
    let file = token_file(path);
    let tokens = &file["credentials"]["token_response"];
    (
        tokens["access_token"].as_str().unwrap().to_owned(),
        tokens["refresh_token"].as_str().unwrap().to_owned(),
    )
}

/// Everything every test of this binary logged through `tracing`, at every level.
pub fn logged() -> String {
    String::from_utf8_lossy(&LOGS.get().unwrap().lock().unwrap()).into_owned()
}

static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs, once for the binary, a subscriber that writes every event of every target, at
/// `TRACE`, into [`logged`].
fn capture_tracing() {
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = Sink(buffer.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || sink.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        buffer
    });
}
