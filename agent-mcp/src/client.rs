//! Using an MCP server's tools as skills: [`McpSkills`].
//!
//! ```no_run
//! use agent_core::Registry;
//! use agent_mcp::McpSkills;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_mcp::McpError> {
//! let github = McpSkills::connect_stdio("npx", ["-y", "@modelcontextprotocol/server-github"])
//!     .await?
//!     .with_prefix("github_");
//! let mut registry = Registry::new();
//! let added = github.add_to(&mut registry)?; // ["github_create_issue", ...]
//! # Ok(()) }
//! ```
//!
//! - **Names.** A skill is named after the remote tool, with the prefix given to
//!   [`McpSkills::with_prefix`] in front; characters a model API refuses in a tool name
//!   (anything but `a-z A-Z 0-9 _ -`) become `_` and the name is cut at 64 bytes. Calls go to
//!   the server under the tool's own name.
//! - **Schemas and descriptions** are the server's (an input schema without `"type"` is read as
//!   an object schema). Arguments must be a JSON object (`null` and `""` mean `{}`); the
//!   server validates the rest.
//! - **Flags** come from the tool's annotations and fail closed: read-only only with
//!   `readOnlyHint: true`; otherwise destructive unless `destructiveHint: false` (the spec's
//!   default is `true`). Read-only tools may run concurrently.
//! - **Output schemas** are the server's: a tool's `outputSchema` is the skill's
//!   [`DynSkill::output_schema`], so it reaches the registry's `ToolDefinition` and
//!   `SkillMetadata` as the server wrote it (a `{"result": ...}` wrapper included, see
//!   [`crate::server`]).
//! - **Results.** A result with `structuredContent` is [`SkillOutput::Json`] of it, as the server
//!   sent it: the model reads it as compact JSON, hooks see the structured value. A
//!   `{"result": VALUE}` wrapper is kept, not unwrapped: it is what the tool's output schema
//!   describes, and a wrapper the server meant as data is indistinguishable from one added for
//!   the protocol. Otherwise, text content is joined with newlines; images, audio and binary
//!   resources are described in brackets. A result with `isError: true` is a
//!   [`SkillError::Tool`] with its text (or its `structuredContent`).
//! - **Failures never hang.** Every call has a time limit ([`McpSkills::with_call_timeout`],
//!   default [`DEFAULT_CALL_TIMEOUT`]). A server process that has exited gives a
//!   [`SkillError::Tool`] that says so, with its exit status; a connection lost otherwise gives
//!   a [`SkillError::Transient`] (retried by the registry; a broken HTTP event stream is
//!   reconnected three times first, not until the time limit); a JSON-RPC error from the server is
//!   a [`SkillError::Tool`] with its message. [`McpSkills::reconnect`] starts the server again
//!   (or opens a new HTTP session); the skills already in a registry use the new connection.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_core::registry::is_valid_name;
use agent_core::{
    DynSkill, ParsedInput, Registry, RetryPolicy, SkillContext, SkillError, SkillMetadata,
    SkillOutput, async_trait,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, ResourceContents, Tool,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::process::Child;

use crate::error::McpError;

/// How long one call to a remote tool may take unless [`McpSkills::with_call_timeout`] says otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// How long the handshake and the first `tools/list` may take, when connecting and reconnecting.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The tools of one MCP server, ready to be added to a [`Registry`] as skills. See the
/// [module docs](self).
///
/// The connection is shared by every skill made from it and lives as long as the longest-lived of
/// them (or this value); a child process is killed when the last one is dropped.
pub struct McpSkills {
    connection: Arc<Connection>,
    tools: Vec<Tool>,
    prefix: String,
    call_timeout: Duration,
    defer: bool,
}

impl McpSkills {
    /// Starts `command` with `args` as a child process, speaks MCP over its stdin and stdout
    /// (its stderr is inherited), and lists its tools.
    pub async fn connect_stdio<I, S>(command: impl AsRef<OsStr>, args: I) -> Result<Self, McpError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = std::process::Command::new(command);
        cmd.args(args);
        McpSkills::connect_command(cmd).await
    }

    /// Like [`McpSkills::connect_stdio`] with a prepared command: its program, arguments,
    /// environment and working directory are used (its stdio settings are not), and used again
    /// by [`McpSkills::reconnect`].
    pub async fn connect_command(command: std::process::Command) -> Result<Self, McpError> {
        let spec = CommandSpec::from(&command);
        let label = spec.label();
        let live = spec.connect(&label).await?;
        McpSkills::start(label, Source::Command(spec), live).await
    }

    /// Connects to an MCP server over streamable HTTP at `url` (`http://` or `https://`) and
    /// lists its tools.
    pub async fn connect_http(url: impl Into<String>) -> Result<Self, McpError> {
        McpSkills::connect_http_with(url.into(), None).await
    }

    /// Like [`McpSkills::connect_http`], for a server that requires a bearer token (as
    /// [`McpServer::serve_http`](crate::McpServer::serve_http) does): every request carries
    /// `Authorization: Bearer <token>`, reconnections included.
    pub async fn connect_http_with_token(
        url: impl Into<String>,
        token: impl Into<String>,
    ) -> Result<Self, McpError> {
        McpSkills::connect_http_with(url.into(), Some(token.into())).await
    }

    async fn connect_http_with(url: String, token: Option<String>) -> Result<Self, McpError> {
        let label = format!("at {url}");
        let live = connect_http(&url, token.as_deref(), &label).await?;
        McpSkills::start(label, Source::Http { url, token }, live).await
    }

    /// Speaks MCP over a transport that is already open (a `tokio::io::duplex`, a socket, any of
    /// rmcp's transports) and lists the server's tools. `name` names the server in messages.
    /// Such a connection cannot be [reconnected](McpSkills::reconnect).
    pub async fn connect_transport<T, E, A>(
        name: impl Into<String>,
        transport: T,
    ) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let label = format!("`{}`", name.into());
        let live = handshake(&label, transport, None).await?;
        McpSkills::start(label, Source::Fixed, live).await
    }

    async fn start(label: String, source: Source, live: Live) -> Result<Self, McpError> {
        let connection = Arc::new(Connection {
            label,
            source,
            live: Mutex::new(None),
        });
        let tools = connection.list_tools(&live).await?;
        *connection.lock() = Some(live);
        Ok(McpSkills {
            connection,
            tools,
            prefix: String::new(),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            defer: false,
        })
    }

    /// Puts `prefix` in front of every skill's name (`github_` makes `create_issue`
    /// `github_create_issue`), so two servers' tools cannot collide.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The time limit of one call; over it, the call fails with [`SkillError::Timeout`] and the
    /// server is told to cancel it.
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Makes every skill deferred: hidden from the model until `tool_search` loads it (useful for
    /// servers with many tools). `tool_search` also matches the server's name.
    pub fn deferred(mut self, defer: bool) -> Self {
        self.defer = defer;
        self
    }

    /// The tools the server listed when connecting, as it described them.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The names the skills get: each tool's name with the prefix, made valid.
    pub fn names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| skill_name(&self.prefix, &tool.name))
            .collect()
    }

    /// What the server said about itself in the handshake, if anything.
    pub fn server_info(&self) -> Option<Implementation> {
        let live = self.connection.lock();
        live.as_ref()?
            .service
            .peer()
            .peer_info()?
            .server_info
            .clone()
    }

    /// One skill for each tool.
    pub fn skills(&self) -> Vec<Arc<dyn DynSkill>> {
        let server = self.server_info().map(|info| info.name).unwrap_or_default();
        self.tools
            .iter()
            .map(|tool| {
                Arc::new(McpSkill::new(
                    self.connection.clone(),
                    tool,
                    skill_name(&self.prefix, &tool.name),
                    self.call_timeout,
                    self.defer,
                    &server,
                )) as Arc<dyn DynSkill>
            })
            .collect()
    }

    /// Adds every tool to `registry` and returns the names added, or adds none and says which
    /// name cannot be added (taken, invalid even after cleaning, or with an input schema that is
    /// not an object's).
    pub fn add_to(&self, registry: &mut Registry) -> Result<Vec<String>, McpError> {
        let skills = self.skills();
        let mut seen = std::collections::HashSet::new();
        for skill in &skills {
            let name = skill.name();
            if !is_valid_name(name) {
                return Err(agent_core::RegistryError::InvalidName {
                    name: name.to_owned(),
                }
                .into());
            }
            // The registry refuses a schema that is not an object's only once some are added.
            let schema = skill.input_schema();
            if schema.get("type") != Some(&Value::from("object")) {
                return Err(agent_core::RegistryError::InputNotObject {
                    name: name.to_owned(),
                    schema: schema.to_string(),
                }
                .into());
            }
            // A skill of one's own may replace the built-in `tool_search`; the registry allows it.
            if (registry.contains(name) && name != "tool_search") || !seen.insert(name.to_owned()) {
                return Err(agent_core::RegistryError::Duplicate {
                    name: name.to_owned(),
                    first: registry.location(name),
                    second: None,
                }
                .into());
            }
        }
        let mut names = Vec::with_capacity(skills.len());
        for skill in skills {
            names.push(skill.name().to_owned());
            registry.try_add_shared(skill)?;
        }
        Ok(names)
    }

    /// Whether the connection is open (the server may still have exited a moment ago).
    pub fn is_connected(&self) -> bool {
        self.connection.lock().as_ref().is_some_and(|live| {
            !live.service.peer().is_transport_closed() && !live.service.is_closed()
        })
    }

    /// Connects again the way the first connection was made (a new child process, or a new HTTP
    /// session) and closes the old connection. The skills made before use the new one. The tool
    /// list is not read again: tools the server no longer has answer with its error.
    pub async fn reconnect(&self) -> Result<(), McpError> {
        let live = match &self.connection.source {
            Source::Command(spec) => spec.connect(&self.connection.label).await?,
            Source::Http { url, token } => {
                connect_http(url, token.as_deref(), &self.connection.label).await?
            }
            Source::Fixed => {
                return Err(McpError::NotReconnectable {
                    server: self.connection.label.clone(),
                });
            }
        };
        let old = self.connection.lock().replace(live);
        if let Some(old) = old {
            old.shut_down().await;
        }
        Ok(())
    }

    /// Closes the connection (a child process is stopped). Calls fail from then on, until
    /// [`McpSkills::reconnect`].
    pub async fn close(&self) {
        let old = self.connection.lock().take();
        if let Some(old) = old {
            old.shut_down().await;
        }
    }
}

impl std::fmt::Debug for McpSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSkills")
            .field("server", &self.connection.label)
            .field("tools", &self.names())
            .field("call_timeout", &self.call_timeout)
            .finish_non_exhaustive()
    }
}

/// The name a remote tool gets as a skill: `prefix` + `tool`, every character outside
/// `a-z A-Z 0-9 _ -` replaced by `_`, cut at 64 bytes.
///
/// ```
/// assert_eq!(agent_mcp::skill_name("gh_", "repos.create issue"), "gh_repos_create_issue");
/// ```
pub fn skill_name(prefix: &str, tool: &str) -> String {
    let mut name: String = prefix
        .chars()
        .chain(tool.chars())
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.truncate(64);
    name
}

/// How a connection was made, to make it again.
enum Source {
    Command(CommandSpec),
    Http { url: String, token: Option<String> },
    Fixed,
}

/// The parts of a `std::process::Command` that are needed to start it again.
struct CommandSpec {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
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
    fn label(&self) -> String {
        let mut line = self.program.to_string_lossy().into_owned();
        for arg in &self.args {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        format!("`{line}`")
    }

    async fn connect(&self, label: &str) -> Result<Live, McpError> {
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
        match handshake(label, (stdout, stdin), Some(child.clone())).await {
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

async fn connect_http(url: &str, token: Option<&str>, label: &str) -> Result<Live, McpError> {
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
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    handshake(
        label,
        StreamableHttpClientTransport::from_config(config),
        None,
    )
    .await
}

/// How often a broken HTTP event stream is reconnected before its calls fail.
const SSE_RECONNECTS: usize = 3;

async fn handshake<T, E, A>(
    label: &str,
    transport: T,
    child: Option<SharedChild>,
) -> Result<Live, McpError>
where
    T: IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = tokio::time::timeout(CONNECT_TIMEOUT, ().serve(transport))
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
async fn exit_status(child: &tokio::sync::Mutex<Child>) -> Option<std::process::ExitStatus> {
    // A process closes its pipes as it exits, a moment before it can be waited for; the grace
    // period covers that moment only, never a running server.
    let mut child = child.lock().await;
    tokio::time::timeout(Duration::from_millis(500), child.wait())
        .await
        .ok()?
        .ok()
}

/// A child process, shared by its connection and the calls asking whether it exited.
type SharedChild = Arc<tokio::sync::Mutex<Child>>;

/// One open connection.
struct Live {
    service: RunningService<RoleClient, ()>,
    child: Option<SharedChild>,
}

impl Live {
    async fn shut_down(self) {
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
struct Connection {
    label: String,
    source: Source,
    live: Mutex<Option<Live>>,
}

impl Connection {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Live>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn list_tools(&self, live: &Live) -> Result<Vec<Tool>, McpError> {
        tokio::time::timeout(CONNECT_TIMEOUT, live.service.peer().list_all_tools())
            .await
            .map_err(|_| McpError::Timeout {
                server: self.label.clone(),
                timeout: CONNECT_TIMEOUT,
            })?
            .map_err(|source| McpError::Service {
                server: self.label.clone(),
                action: "list its tools",
                source: Box::new(source),
            })
    }

    /// The peer to send a call to, with the child process to ask about when it fails.
    fn peer(&self) -> Result<(Peer<RoleClient>, Option<SharedChild>), SkillError> {
        match self.lock().as_ref() {
            Some(live) => Ok((live.service.peer().clone(), live.child.clone())),
            None => Err(SkillError::tool(format!(
                "the connection to the MCP server {} is closed; its tools are unavailable until the application reconnects",
                self.label
            ))),
        }
    }

    /// What a failed request means for the model.
    async fn failure(
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

/// One remote tool as a skill.
struct McpSkill {
    connection: Arc<Connection>,
    remote_name: String,
    metadata: SkillMetadata,
    description: String,
    schema: Value,
    output_schema: Option<Value>,
    call_timeout: Duration,
}

impl McpSkill {
    fn new(
        connection: Arc<Connection>,
        tool: &Tool,
        name: String,
        call_timeout: Duration,
        defer: bool,
        server: &str,
    ) -> Self {
        let annotations = tool.annotations.as_ref();
        let is_read_only = annotations.and_then(|a| a.read_only_hint) == Some(true);
        let is_destructive = !is_read_only && annotations.is_none_or(|a| a.is_destructive());
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .or(annotations.and_then(|a| a.title.as_deref()))
            .map(str::to_owned)
            .unwrap_or_else(|| {
                format!(
                    "The tool `{}` of the MCP server {}.",
                    tool.name, connection.label
                )
            });
        let mut schema = tool.input_schema.as_ref().clone();
        schema
            .entry("type")
            .or_insert_with(|| Value::from("object"));
        McpSkill {
            metadata: SkillMetadata {
                name: Arc::from(name),
                is_read_only,
                is_destructive,
                is_concurrency_safe: is_read_only,
                should_defer: defer,
                aliases: Arc::from([]),
                search_hint: (!server.is_empty()).then(|| Arc::from(format!("mcp {server}"))),
                output_schema: None, // filled in by the registry, from `output_schema()`
            },
            connection,
            remote_name: tool.name.to_string(),
            description,
            schema: Value::Object(schema),
            output_schema: tool
                .output_schema
                .as_ref()
                .map(|schema| Value::Object(schema.as_ref().clone())),
            call_timeout,
        }
    }
}

#[async_trait]
impl DynSkill for McpSkill {
    fn name(&self) -> &str {
        &self.metadata.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn metadata(&self) -> SkillMetadata {
        self.metadata.clone()
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn output_schema(&self) -> Option<Value> {
        self.output_schema.clone()
    }

    fn timeout(&self) -> Option<Duration> {
        None // enforced in `run_parsed`, so the skill cannot hang outside a registry either
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        None
    }

    fn parse(&self, args: &Value) -> Result<ParsedInput, SkillError> {
        agent_core::skill::parse_args::<Map<String, Value>>(args).map(ParsedInput::new)
    }

    async fn run_parsed(
        &self,
        input: ParsedInput,
        _ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        let arguments = input.downcast::<Map<String, Value>>()?;
        let (peer, child) = self.connection.peer()?;
        let params = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        match tokio::time::timeout(self.call_timeout, peer.call_tool(params)).await {
            Err(_) => Err(SkillError::Timeout(self.call_timeout)),
            Ok(Err(error)) => Err(self.connection.failure(error, child.as_deref()).await),
            Ok(Ok(result)) => from_call_tool_result(result),
        }
    }
}

/// What a remote result means as a skill's output. See the [module docs](self).
pub fn from_call_tool_result(result: CallToolResult) -> Result<SkillOutput, SkillError> {
    let text = result
        .content
        .iter()
        .map(describe_content)
        .collect::<Vec<_>>()
        .join("\n");
    if result.is_error == Some(true) {
        return Err(SkillError::tool(match result.structured_content {
            _ if !text.is_empty() => text,
            Some(details) if !details.is_null() => details.to_string(),
            _ => "the tool failed without saying why".to_owned(),
        }));
    }
    match result.structured_content {
        Some(value) => Ok(SkillOutput::Json(value)),
        None => Ok(SkillOutput::Text(text)),
    }
}

fn describe_content(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            format!(
                "[image: {}, {} bytes of base64]",
                image.mime_type,
                image.data.len()
            )
        }
        ContentBlock::Audio(audio) => {
            format!(
                "[audio: {}, {} bytes of base64]",
                audio.mime_type,
                audio.data.len()
            )
        }
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {}, {} bytes of base64]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len()
            ),
            _ => "[a resource of a kind this client does not show]".to_owned(),
        },
        ContentBlock::ResourceLink(resource) => format!("[resource link: {}]", resource.uri),
        _ => "[content of a kind this client does not show]".to_owned(),
    }
}
