//! The endpoint of the HTTP server: its settings checked, the router and its layers (see the
//! [`crate::http`] docs for what each one does and replaces), then the JSON-RPC checks and the
//! session cap before rmcp.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use agent_serve::{AdmitLayer, Origins, is_loopback};
use axum::Router;
use axum::body::Body;
use axum::response::IntoResponse;
use http_body_util::{BodyExt, Full};
use hyper::header::{CONTENT_TYPE, HeaderMap};
use hyper::{Method, Request, StatusCode};
use rmcp::transport::StreamableHttpService;
use tower_http::limit::RequestBodyLimitLayer;

use super::answers::{HttpResponse, not_found, plain};
use super::body::ReadBodyLayer;
use crate::auth::{self, Auth};
use crate::error::McpError;
use crate::jsonrpc;
use crate::origin;
use crate::server::{HTTP_PATH, McpServer};
use crate::sessions::{BoundedSessions, SessionError};

/// What every connection of one server shares.
pub(super) struct Endpoint {
    service: StreamableHttpService<McpServer, BoundedSessions>,
    pub(super) sessions: Arc<BoundedSessions>,
    token: Option<Arc<str>>,
    origins: Origins,
    body_read_timeout: Duration,
    max_body_bytes: usize,
    sessions_enabled: bool,
}

impl Endpoint {
    /// Checks the settings of `server` for a listener bound to `bound` and builds the endpoint.
    pub(super) fn new(server: McpServer, bound: SocketAddr) -> Result<Self, McpError> {
        let settings = server.http.clone();
        for (name, zero) in [
            ("max_connections", settings.max_connections == 0),
            (
                "max_pending_connections",
                settings.max_pending_connections == 0,
            ),
            ("max_sessions", settings.max_sessions == 0),
            (
                "header_read_timeout",
                settings.header_read_timeout.is_zero(),
            ),
            ("body_read_timeout", settings.body_read_timeout.is_zero()),
            (
                "session_idle_timeout",
                settings.session_idle_timeout.is_zero(),
            ),
        ] {
            if zero {
                return Err(McpError::HttpConfig(format!("`{name}` must not be zero")));
            }
        }
        let token = match settings.auth {
            Auth::Token(token) => {
                auth::validate_token(&token)?;
                Some(token)
            }
            Auth::Generate => {
                let token = crate::generate_token()?;
                eprintln!(
                    "agent-mcp: the MCP server at http://{bound}{HTTP_PATH} requires the header `Authorization: Bearer {token}`"
                );
                Some(token.into())
            }
            Auth::Disabled if is_loopback(bound.ip()) => None,
            Auth::Disabled => {
                return Err(McpError::HttpConfig(format!(
                    "`without_auth` is allowed only on a loopback address, and {bound} can be \
                     reached from other hosts; set a bearer token (agent_mcp::generate_token())"
                )));
            }
        };
        let origins =
            Origins::new(&settings.allowed_origins, bound).map_err(McpError::HttpConfig)?;
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
            token,
            origins,
            body_read_timeout: settings.body_read_timeout,
            max_body_bytes: config.max_request_body_bytes,
            sessions_enabled: config.legacy_session_mode,
        })
    }

    /// The router every request goes through: the endpoint's layers (see the
    /// [`crate::http`] docs) around [`Endpoint::handle`], `404` for any other path.
    pub(super) fn router(self) -> Router {
        let read_body = ReadBodyLayer {
            deadline: self.body_read_timeout,
            max_bytes: self.max_body_bytes,
        };
        let (token, origins) = (self.token.clone(), self.origins.clone());
        let limit = RequestBodyLimitLayer::new(self.max_body_bytes);
        // Each layer wraps the ones before it: the last is the first a request meets.
        let router = Router::new()
            .route_service(HTTP_PATH, Mcp(Arc::new(self)))
            .route_layer(read_body)
            .route_layer(limit)
            .route_layer(AdmitLayer);
        let router = match token {
            Some(token) => router.route_layer(auth::layer(token)),
            None => router,
        };
        router
            .route_layer(origin::cors_layer())
            .route_layer(origin::layer(origins))
            .route_layer(axum::middleware::from_fn(crate::host_form::check))
            .fallback(|| async { not_found() })
    }

    /// The JSON-RPC checks and the session cap of the [`crate::http`] docs, then rmcp. The
    /// body is whole already ([`ReadBodyLayer`]).
    async fn handle(&self, request: Request<Body>) -> HttpResponse {
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

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::Registry;

    fn endpoint(server: McpServer, addr: &str) -> Result<Endpoint, McpError> {
        Endpoint::new(server, addr.parse().unwrap())
    }

    #[test]
    fn without_auth_is_refused_off_loopback() {
        let server = || McpServer::new(Registry::new()).without_auth();
        assert!(endpoint(server(), "127.0.0.1:80").is_ok());
        assert!(endpoint(server(), "[::1]:80").is_ok());
        for addr in ["0.0.0.0:80", "[::]:80", "192.168.1.2:80"] {
            let error = endpoint(server(), addr).err().expect("refused");
            assert!(
                matches!(&error, McpError::HttpConfig(m) if m.contains("without_auth")),
                "{error}"
            );
        }
        // With a token, any address will do.
        let token = crate::generate_token().unwrap();
        assert!(
            endpoint(
                McpServer::new(Registry::new()).bearer_token(token),
                "0.0.0.0:80"
            )
            .is_ok()
        );
    }

    #[test]
    fn weak_tokens_bad_origins_and_zero_limits_are_refused() {
        let server = || McpServer::new(Registry::new()).bearer_token("0123456789abcdef");
        assert!(endpoint(server(), "127.0.0.1:80").is_ok());
        for refused in [
            McpServer::new(Registry::new()).bearer_token("short"),
            server().allowed_origins(["app.example.com"]),
            server().max_connections(0),
            server().max_pending_connections(0),
            server().max_sessions(0),
            server().header_read_timeout(Duration::ZERO),
            server().body_read_timeout(Duration::ZERO),
            server().session_idle_timeout(Duration::ZERO),
        ] {
            let error = endpoint(refused, "127.0.0.1:80").err().expect("refused");
            assert!(matches!(error, McpError::HttpConfig(_)), "{error}");
        }
    }
}
