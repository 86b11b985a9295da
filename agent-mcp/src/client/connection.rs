//! The connection to an MCP server behind [`McpSkills`](super::McpSkills): how it was made (a
//! command, an HTTP URL), the handshake, and making it again.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_core::SkillError;
use rmcp::model::Implementation;
use rmcp::service::ClientServiceExt;
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::{Peer, RoleClient};
use tokio::process::Child;

use super::handler::{Handler, Shared};
use super::limits::CONNECT_TIMEOUT;
use super::open::OpenCalls;
use super::watched::Watched;
use crate::error::McpError;

/// How a connection was made, to make it again.
pub(super) enum Source {
    Command(CommandSpec),
    Http {
        url: String,
        token: Option<String>,
    },
    /// Made by another module of the client (OAuth), which knows how to make it again.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    Custom(Box<dyn Reconnect>),
    Fixed,
}

/// A connection another module of the client makes, and makes again on
/// [`McpSkills::reconnect`](super::McpSkills::reconnect).
pub(super) trait Reconnect: Send + Sync {
    /// Opens a new connection whose client side is `handler`; `label` names the server in
    /// errors.
    fn connect<'a>(
        &'a self,
        label: &'a str,
        handler: Handler,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Live, McpError>> + Send + 'a>>;

    /// Whether the transport tells which of the client's requests a server's request came
    /// with (the streamable-HTTP client does); where it does not, calls take turns while they
    /// wait on the server.
    fn streams_tell(&self) -> bool;
}

/// The parts of a `std::process::Command` that are needed to start it again.
pub(super) struct CommandSpec {
    pub(super) program: OsString,
    pub(super) args: Vec<OsString>,
    pub(super) envs: Vec<(OsString, Option<OsString>)>,
    pub(super) cwd: Option<PathBuf>,
}

impl From<&std::process::Command> for CommandSpec {
    fn from(command: &std::process::Command) -> Self {
        CommandSpec {
            program: command.get_program().to_owned(),
            args: command.get_args().map(OsStr::to_owned).collect(),
            envs: command
                .get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(OsStr::to_owned)))
                .collect(),
            cwd: command.get_current_dir().map(PathBuf::from),
        }
    }
}

impl CommandSpec {
    pub(super) fn label(&self) -> String {
        let mut line = self.program.to_string_lossy().into_owned();
        for arg in &self.args {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        format!("`{line}`")
    }

    pub(super) async fn connect(&self, label: &str, handler: Handler) -> Result<Live, McpError> {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (key, value) in &self.envs {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        let mut child = command
            .spawn()
            .map_err(|e| McpError::io(format!("starting the MCP server {label}"), e))?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(McpError::Connect {
                server: label.to_owned(),
                message: "its standard input or output could not be opened".into(),
            });
        };
        let child = Arc::new(tokio::sync::Mutex::new(child));
        match handshake(label, (stdout, stdin), Some(child.clone()), handler).await {
            Ok(live) => Ok(live),
            Err(McpError::Connect { server, message }) => {
                // Say why the process went away, when it did.
                let message = match exit_status(&child).await {
                    Some(status) => format!("{message} (the process exited: {status})"),
                    None => message,
                };
                Err(McpError::Connect { server, message })
            }
            Err(other) => Err(other),
        }
    }
}

pub(super) async fn connect_http(
    url: &str,
    token: Option<&str>,
    label: &str,
    handler: Handler,
) -> Result<Live, McpError> {
    let mut config = http_config(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    handshake(
        label,
        StreamableHttpClientTransport::from_config(config),
        None,
        handler,
    )
    .await
}

/// The streamable-HTTP client's settings for `url` (no token), with rustls' `ring` provider
/// installed unless the application installed one.
pub(super) fn http_config(url: &str) -> StreamableHttpClientTransportConfig {
    // reqwest is built without a default crypto provider (no aws-lc); use rustls' ring one,
    // unless the application installed its own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // rmcp's default reconnects a broken event stream forever, so a call whose server died
    // would wait out its whole time limit; a few tries tell a blip from a dead server.
    let mut retry = ExponentialBackoff::default();
    retry.max_times = Some(SSE_RECONNECTS);
    retry.max_delay = Some(Duration::from_secs(2));
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    config.retry_config = Arc::new(retry);
    config
}

/// How often a broken HTTP event stream is reconnected before its calls fail.
pub(super) const SSE_RECONNECTS: usize = 3;

pub(super) async fn handshake<T, E, A>(
    label: &str,
    transport: T,
    child: Option<SharedChild>,
    handler: Handler,
) -> Result<Live, McpError>
where
    T: IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let lifecycle = handler.shared.handshake.lifecycle();
    let transport = Watched::new(transport.into_transport(), handler.shared.follow.counters());
    let service = tokio::time::timeout(
        CONNECT_TIMEOUT,
        handler.serve_with_lifecycle(transport, lifecycle),
    )
    .await
    .map_err(|_| McpError::Timeout {
        server: label.to_owned(),
        timeout: CONNECT_TIMEOUT,
    })?
    .map_err(|e| McpError::Connect {
        server: label.to_owned(),
        message: e.to_string(),
    })?;
    Ok(Live { service, child })
}

/// The exit status of a child that has exited or is exiting; `None` if it is still running.
pub(super) async fn exit_status(
    child: &tokio::sync::Mutex<Child>,
) -> Option<std::process::ExitStatus> {
    // A process closes its pipes as it exits, a moment before it can be waited for; the grace
    // period covers that moment only, never a running server.
    let mut child = child.lock().await;
    tokio::time::timeout(Duration::from_millis(500), child.wait())
        .await
        .ok()?
        .ok()
}

/// A child process, shared by its connection and the calls asking whether it exited.
pub(super) type SharedChild = Arc<tokio::sync::Mutex<Child>>;

/// One open connection.
pub(super) struct Live {
    pub(super) service: RunningService<RoleClient, Handler>,
    pub(super) child: Option<SharedChild>,
}

impl Live {
    pub(super) async fn shut_down(self) {
        let Live { service, child } = self;
        let _ = tokio::time::timeout(Duration::from_secs(5), service.cancel()).await;
        if let Some(child) = child {
            let mut child = child.lock().await;
            // Closing stdin asks a stdio server to exit; one that does not is killed.
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
    }
}

/// The connection every skill of one [`McpSkills`] shares.
pub(super) struct Connection {
    pub(super) label: String,
    pub(super) source: Source,
    pub(super) live: Mutex<Option<Live>>,
    /// What the connection's handler shares with the skills (questions, sampling, changes).
    pub(super) shared: Arc<Shared>,
    /// The calls left open on a question, while their runs wait for a person.
    pub(super) open: Mutex<OpenCalls>,
}

impl Connection {
    /// Closes every call open on a person's answer (their requests are withdrawn); continuing
    /// one of them then fails with the expired error.
    pub(super) fn close_open_calls(&self) {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .close_all();
    }

    /// The handler a new connection gets.
    pub(super) fn handler(&self) -> Handler {
        Handler {
            shared: self.shared.clone(),
        }
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Option<Live>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the server said about itself in the handshake, if anything.
    pub(super) fn server_info(&self) -> Option<Implementation> {
        let live = self.lock();
        live.as_ref()?
            .service
            .peer()
            .peer_info()?
            .server_info
            .clone()
    }

    /// The peer to send a call to, with the child process to ask about when it fails.
    pub(super) fn peer(&self) -> Result<(Peer<RoleClient>, Option<SharedChild>), SkillError> {
        match self.lock().as_ref() {
            Some(live) => Ok((live.service.peer().clone(), live.child.clone())),
            None => Err(SkillError::tool(format!(
                "the connection to the MCP server {} is closed; its tools are unavailable until the application reconnects",
                self.label
            ))),
        }
    }

    /// What a failed request means for the model.
    pub(super) async fn failure(
        &self,
        error: ServiceError,
        child: Option<&tokio::sync::Mutex<Child>>,
    ) -> SkillError {
        let label = &self.label;
        let transport_lost = matches!(
            error,
            ServiceError::TransportClosed | ServiceError::TransportSend(_)
        );
        if transport_lost
            && let Some(child) = child
            && let Some(status) = exit_status(child).await
        {
            return SkillError::tool(format!(
                "the MCP server {label} is not running ({status}); its tools are unavailable until the application reconnects"
            ));
        }
        match error {
            ServiceError::McpError(data) => SkillError::tool(format!(
                "the MCP server {label} refused the call: {} (JSON-RPC error {})",
                data.message, data.code.0
            )),
            ServiceError::Timeout { timeout } => SkillError::Timeout(timeout),
            ServiceError::Cancelled { .. } => SkillError::Cancelled,
            error if transport_lost => SkillError::Transient(format!(
                "lost the connection to the MCP server {label}: {error}"
            )),
            error => SkillError::tool(format!("the MCP server {label} failed: {error}")),
        }
    }
}
