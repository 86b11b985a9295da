//! The endpoint of the HTTP server: its own settings checked, the router (the edge's
//! [`Guard`] on `/mcp`, `404` elsewhere), then the JSON-RPC checks and the session cap before
//! rmcp; and the task that closes idle sessions.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use agent_serve::Guard;
use axum::Router;
use axum::body::Body;
use axum::response::IntoResponse;
use http_body_util::{BodyExt, Full};
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderName};
use hyper::{Method, Request, StatusCode};
use rmcp::transport::StreamableHttpService;

use super::answers::{HttpResponse, plain};
use crate::error::McpError;
use crate::jsonrpc;
use crate::server::{HTTP_PATH, McpServer};
use crate::sessions::{BoundedSessions, SessionError};

/// What every request of one router shares.
pub(super) struct Endpoint {
    service: StreamableHttpService<McpServer, BoundedSessions>,
    sessions: Arc<BoundedSessions>,
    session_idle_timeout: Duration,
    /// The task closing idle sessions, started by the first request (a router may be made
    /// outside a runtime) and stopped when the last clone of the router is dropped.
    reaper: OnceLock<AbortOnDrop>,
    sessions_enabled: bool,
}

impl Endpoint {
    /// Checks the session settings of `server` and builds the endpoint.
    pub(super) fn new(server: McpServer) -> Result<Self, McpError> {
        let settings = server.http.clone();
        if settings.max_sessions == 0 {
            return Err(McpError::HttpConfig(
                "`max_sessions` must not be zero".into(),
            ));
        }
        if settings.session_idle_timeout.is_zero() {
            return Err(McpError::HttpConfig(
                "`session_idle_timeout` must not be zero".into(),
            ));
        }
        let config = server.http_config.clone();
        let sessions = Arc::new(BoundedSessions::new(
            settings.max_sessions,
            settings.session_idle_timeout,
        ));
        let template = server;
        let service = StreamableHttpService::new(
            move || Ok(template.for_new_session()),
            sessions.clone(),
            config.clone(),
        );
        Ok(Endpoint {
            service,
            sessions,
            session_idle_timeout: settings.session_idle_timeout,
            reaper: OnceLock::new(),
            sessions_enabled: config.legacy_session_mode,
        })
    }

    /// The router: the edge's [`Guard`] around [`Endpoint::handle`] at [`HTTP_PATH`], no
    /// fallback (an application that merges it has its own; `serve_http` adds [`not_found`]).
    pub(super) fn router(self) -> Router {
        let guard = Guard::new("mcp").expose_headers([HeaderName::from_static("mcp-session-id")]);
        Router::new()
            .route_service(HTTP_PATH, Mcp(Arc::new(self)))
            .route_layer(guard)
    }

    /// The JSON-RPC checks and the session cap of the [`crate::http`] docs, then rmcp. The
    /// body is whole already (the [`Guard`] read it).
    async fn handle(&self, request: Request<Body>) -> HttpResponse {
        self.reaper.get_or_init(|| {
            AbortOnDrop(tokio::spawn(reap_idle_sessions(
                self.sessions.clone(),
                self.session_idle_timeout,
            )))
        });
        if request.method() != Method::POST || !is_json(request.headers()) {
            // rmcp answers these itself (a GET event stream, a DELETE, a wrong media type).
            return self.service.handle(request).await;
        }
        let (parts, body) = request.into_parts();
        let body = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    format!("the request body could not be read: {error}"),
                );
            }
        };
        let checked = match jsonrpc::check(&body) {
            Ok(checked) => checked,
            Err(rejected) => return rejected.into_response(),
        };
        if checked.is_initialize
            && self.sessions_enabled
            && !parts.headers.contains_key("mcp-session-id")
            && self.sessions.is_full().await
        {
            tracing::warn!(
                live = self.sessions.len(),
                "refused an MCP session: the server is at its session limit"
            );
            let full = SessionError::Full {
                max: self.sessions.max(),
            };
            return jsonrpc::error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                checked.id,
                jsonrpc::SERVER_BUSY,
                &full.to_string(),
            );
        }
        self.service
            .handle(Request::from_parts(parts, Full::new(body)))
            .await
    }
}

/// The endpoint as the tower service the router mounts at [`HTTP_PATH`].
#[derive(Clone)]
struct Mcp(Arc<Endpoint>);

impl tower_service::Service<Request<Body>> for Mcp {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let endpoint = self.0.clone();
        Box::pin(async move { Ok(endpoint.handle(request).await.into_response()) })
    }
}

/// Whether the request's `Content-Type` is `application/json` (parameters aside).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// Aborts a background task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn reap_idle_sessions(sessions: Arc<BoundedSessions>, idle: Duration) {
    let tick = (idle / 2).clamp(Duration::from_millis(10), Duration::from_secs(15));
    loop {
        tokio::time::sleep(tick).await;
        sessions.reap().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::Registry;

    #[test]
    fn zero_session_settings_are_refused() {
        assert!(Endpoint::new(McpServer::new(Registry::new())).is_ok());
        for refused in [
            McpServer::new(Registry::new()).max_sessions(0),
            McpServer::new(Registry::new()).session_idle_timeout(Duration::ZERO),
        ] {
            let error = Endpoint::new(refused).err().expect("refused");
            assert!(matches!(error, McpError::HttpConfig(_)), "{error}");
        }
    }
}
