//! The server half: serving a [`Registry`] as an MCP server: [`McpServer`], and the one-liners of
//! [`ServeMcp`]. (Using a server's tools is the other half, [`crate::client`].)
//!
//! ```no_run
//! use agent_core::{Registry, SkillContext};
//! use agent_mcp::McpServer;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_mcp::McpError> {
//! let registry = Registry::discover().expect("skills are linked");
//! McpServer::new(registry)
//!     .context(SkillContext::new("/path/to/project")) // where file skills are confined
//!     .serve_stdio()
//!     .await
//! # }
//! ```
//!
//! - `tools/list` answers the definitions of the connection's session
//!   ([`Registry::definitions_for`]): deferred skills appear once `tool_search` loaded them, and
//!   the call that loaded them is followed by `notifications/tools/list_changed` (the server
//!   advertises `tools.listChanged`). So is a call during which one of the registry's
//!   [`LiveSkills`](agent_core::LiveSkills) sets changed (a proxied server's tool that changed
//!   its server's list, say); a set that changes between calls is seen at the next
//!   `tools/list`, without a notification.
//! - Each tool is annotated from the skill's flags: `readOnlyHint` from `is_read_only`,
//!   `destructiveHint` from `is_destructive` (always `false` for a read-only skill, whose other
//!   hints the spec ignores), `idempotentHint` from `is_idempotent`.
//! - `tools/call` runs [`Registry::run_one`], so hooks, argument validation, timeouts, retries
//!   and output truncation are those of an in-process call, and so is the registry's policy for
//!   destructive skills ([`DestructiveCalls`](agent_core::DestructiveCalls)): by default such a
//!   call is answered as needing approval and does not run, since a server cannot pause for a
//!   person. A server whose clients ask their user before a `destructiveHint` tool (most do) sets
//!   `registry.destructive_calls(DestructiveCalls::Allow)`, as the `mcp_server` example does. Every failure, an unknown tool name
//!   included, is a result with `isError: true` whose text is what a model would have read;
//!   JSON-RPC errors are left to the protocol itself.
//! - Typed outputs: a skill with an output schema
//!   ([`ToolDefinition::output_schema`](agent_core::ToolDefinition::output_schema), which
//!   `#[skill]` generates for a typed return value) is listed with `outputSchema`, and its
//!   result carries `structuredContent` as well as a text block with the compact JSON a model
//!   would have read. The spec wants both to be objects, so a schema whose root is not
//!   `"type": "object"` (a `Vec`, a number, a `bool`, an enum) is served wrapped, as
//!   `{"type": "object", "properties": {"result": SCHEMA}, "required": ["result"]}` (its `$defs`
//!   moved to the new root), and the value as `{"result": VALUE}`; the text block holds the value
//!   itself. A result of such a skill that is text instead of JSON (over the output budget, or
//!   replaced by a hook) cannot follow the schema and is sent with `isError: true`, so strict
//!   clients get it as a failed call rather than as a protocol violation. Skills without an
//!   output schema answer as before: a JSON object is also sent as `structuredContent`.
//! - Media: a skill that answers with a [`Media`](agent_core::content::Media) or a
//!   [`Content`](agent_core::content::Content) is served one content block per part, in order:
//!   text, `image`, `audio`, an embedded `resource` with a `blob` (a PDF or another document,
//!   at `eugene://media/NAME`) and a `resource_link` (media at a URL); see [`crate::media`].
//! - Over HTTP ([`McpServer::serve_http`]) every request needs a bearer token, browsers'
//!   cross-origin requests are refused, and connections, sessions and slow clients are bounded:
//!   see [`crate::http`].
//! - Sessions: every connection (a stdio pipe, an HTTP session) gets its own
//!   [`RunScope`], on a clone of the [`SkillContext`] given with [`McpServer::context`]
//!   (same workspace, extensions and cancellation token). A client cancelling a request drops
//!   the running call.
//! - Asking the client ([`ask_client`]): a skill reaches the client of its call with
//!   [`client_of`]`(ctx)?` and asks its user for input ([`ConnectedClient::elicit`],
//!   `elicitation/create`) or its model for a completion ([`ConnectedClient::sample`],
//!   `sampling/createMessage`); a client that did not declare the capability, or a skill run
//!   outside a server's call, gets a tool error saying so. Bounded by
//!   [`McpServer::client_request_timeout`] and withdrawn (`notifications/cancelled`) when the
//!   call stops. URL mode ([`ConnectedClient::elicit_url`]) sends the user to a URL when the
//!   client declared `elicitation.url`, and `notifications/elicitation/complete`
//!   ([`ConnectedClient::elicitation_complete`]) says when it is done.
//! - Tasks ([`tasks`]): the skills named with [`McpServer::tasks`] are served as MCP tasks to
//!   clients that declared the Tasks extension (`io.modelcontextprotocol/tasks`): `tools/call`
//!   answers at once with a task, `tasks/get` reports it (`working`, `input_required`,
//!   `completed` with the call's result, `failed`, `cancelled`), `tasks/cancel` fires the
//!   skill's cancellation token. Bounded by a TTL and by caps on the tasks of a session; the
//!   tasks of a connection end with it. Other clients, and other skills, are served
//!   synchronously as before. A clone of an `McpServer` shares its tasks: serve one value per
//!   connection (as [`McpServer::serve_stdio`] and [`McpServer::serve_http`] do).
//! - Resources ([`resources`]): the registry's Agent Skills, each a folder of `skill://NAME/…`
//!   resources (its `SKILL.md` and its other files), listed and read.
//! - Prompts ([`prompts`]): templates the application registers with [`McpServer::prompt`],
//!   listed and rendered with the client's arguments.
//! - The `resources` and `prompts` capabilities are advertised only when there are some; a
//!   client asking a server without them gets `-32601` (method not found).

pub mod ask_client;
mod handler;
mod output;
pub mod prompts;
pub mod resources;
mod sampling;
pub mod tasks;
mod url_elicitation;

pub use ask_client::{ClientAnswer, ConnectedClient, DEFAULT_CLIENT_REQUEST_TIMEOUT, client_of};
pub use sampling::{Completion, CompletionRequest};
pub use url_elicitation::{ClientUrlAnswer, MAX_ELICITATION_ID_BYTES, MAX_ELICITATION_URL_BYTES};

pub use output::{RESULT_KEY, mcp_output_schema, to_call_tool_result, to_call_tool_result_for};
pub use prompts::{MAX_PROMPT_ARGUMENT_BYTES, PromptArg, PromptArgs};
pub use resources::{MAX_RESOURCE_BYTES, SKILL_SCHEME};
pub use tasks::{
    DEFAULT_MAX_KEPT_TASKS, DEFAULT_MAX_OPEN_TASKS, DEFAULT_POLL_INTERVAL, DEFAULT_TASK_TTL,
    TaskSettings,
};

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use agent_core::{CurrentRegistry, Registry, RunScope, SkillContext, ToolCall, ToolResult};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolResult, Implementation, Prompt, PromptMessage, Resource, Tool, ToolAnnotations,
};
use rmcp::transport::StreamableHttpServerConfig;
use serde_json::{Map, Value};
use tokio::net::ToSocketAddrs;

use crate::error::McpError;
use crate::http_settings::HttpSettings;

/// The path the streamable-HTTP endpoint answers on: `http://ADDR/mcp`.
pub const HTTP_PATH: &str = "/mcp";

/// An MCP server over a [`Registry`]: an rmcp [`ServerHandler`](rmcp::ServerHandler) whose tools are the registry's
/// skills. See the [module docs](self) for what it answers.
///
/// One value serves one connection ([`McpServer::serve_stdio`], or rmcp's
/// [`ServiceExt::serve`] over any transport, such as a `tokio::io::duplex` in tests);
/// [`McpServer::serve_http`] makes a fresh session for every HTTP client.
///
/// ```
/// use agent_core::{Registry, SkillContext};
/// use agent_mcp::McpServer;
///
/// let server = McpServer::new(Registry::new())
///     .context(SkillContext::new("."))
///     .server_info("my-agent-tools", "1.2.0")
///     .instructions("File tools confined to the project.");
/// assert_eq!(server.registry().len(), 0);
/// ```
#[derive(Clone)]
pub struct McpServer {
    pub(crate) registry: Arc<Registry>,
    pub(crate) ctx: SkillContext,
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) client_request_timeout: Duration,
    pub(crate) prompts: prompts::Prompts,
    pub(crate) http_config: StreamableHttpServerConfig,
    pub(crate) http: HttpSettings,
    /// The network edge `serve_http` serves on: tokens, origins, connections, timeouts.
    pub(crate) edge: agent_serve::Edge,
    pub(crate) task_settings: Option<TaskSettings>,
    /// This connection's tasks; a new session gets new ones.
    pub(crate) session_tasks: Arc<tasks::SessionTasks>,
}

impl McpServer {
    /// A server for `registry` (a `Registry` or an `Arc<Registry>`), with a
    /// [`SkillContext::default`] (workspace `.`) and this crate's name and version as server info.
    pub fn new(registry: impl Into<Arc<Registry>>) -> Self {
        let registry = registry.into();
        McpServer {
            ctx: SkillContext::default().with_extension(CurrentRegistry(registry.clone())),
            registry,
            info: Implementation::new("eugene", env!("CARGO_PKG_VERSION")),
            instructions: None,
            client_request_timeout: DEFAULT_CLIENT_REQUEST_TIMEOUT,
            prompts: prompts::Prompts::default(),
            http_config: StreamableHttpServerConfig::default(),
            http: HttpSettings::default(),
            edge: agent_serve::Edge::new().name("agent-mcp"),
            task_settings: None,
            session_tasks: Arc::default(),
        }
    }

    /// The context calls run with: the workspace file skills are confined to, extensions,
    /// cancellation (cancelling its token cancels running calls). Its session is the session of
    /// a stdio connection; HTTP sessions each get a new one. The server's registry is put in it
    /// as [`CurrentRegistry`], so a skill that makes calls of its own (code mode's `run_code`)
    /// makes them through this registry.
    pub fn context(mut self, ctx: SkillContext) -> Self {
        self.ctx = ctx.with_extension(CurrentRegistry(self.registry.clone()));
        self
    }

    /// The name and version the server reports in `initialize`.
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Instructions for the client's model, sent in `initialize`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// How long a skill waits for the client to answer an elicitation or a sampling request
    /// ([`client_of`]); [`DEFAULT_CLIENT_REQUEST_TIMEOUT`] unless set. Past it the skill gets
    /// [`SkillError::Timeout`](agent_core::SkillError::Timeout) and the client
    /// `notifications/cancelled`.
    pub fn client_request_timeout(mut self, timeout: Duration) -> Self {
        self.client_request_timeout = timeout;
        self
    }

    /// rmcp's settings for [`McpServer::serve_http`]. The default accepts only loopback `Host`
    /// headers (`localhost`, `127.0.0.1`, `::1`), against DNS rebinding; a server reached under
    /// another name must list it with `StreamableHttpServerConfig::with_allowed_hosts`. Its
    /// `max_request_body_bytes` (4 MiB by default) bounds every POSTed body (with
    /// [`McpServer::serve_http`], the edge's body limit is set to it). The `Host` check only
    /// stops browsers: what keeps other hosts out is the bearer token
    /// ([`McpServer::bearer_token`]). Authentication, origins, connection and session limits
    /// are set on `McpServer` itself (see [`crate::http`]).
    pub fn http_config(mut self, config: StreamableHttpServerConfig) -> Self {
        self.http_config = config;
        self
    }

    /// Serves a prompt template: `prompts/list` shows `name`, `description` and `args`, and
    /// `prompts/get` answers what `render` makes of the client's arguments (checked against
    /// `args` first). See [`prompts`](mod@prompts) for the rules; a prompt named like an
    /// earlier one replaces it.
    pub fn prompt(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        args: impl IntoIterator<Item = PromptArg>,
        render: impl Fn(&PromptArgs) -> Result<Vec<PromptMessage>, String> + Send + Sync + 'static,
    ) -> Self {
        self.prompts.add(prompts::PromptTemplate::new(
            name.into(),
            description.into(),
            args.into_iter().collect(),
            render,
        ));
        self
    }

    /// Serves the skills `settings` names as MCP tasks to clients that support the Tasks
    /// extension: their `tools/call` answers at once with a task to poll and cancel. See
    /// [`tasks`](mod@tasks) for the rules; clients without tasks get synchronous calls.
    pub fn tasks(mut self, settings: TaskSettings) -> Self {
        self.task_settings = Some(settings);
        self
    }

    /// Which skills are served as tasks, if any ([`McpServer::tasks`]).
    pub fn task_settings(&self) -> Option<&TaskSettings> {
        self.task_settings.as_ref()
    }

    /// The prompts `prompts/list` answers, by name.
    pub fn prompts(&self) -> Vec<Prompt> {
        self.prompts.list()
    }

    /// The resources `resources/list` answers: the registry's Agent Skills (see
    /// [`resources`](mod@resources)).
    pub fn resources(&self) -> Vec<Resource> {
        resources::list(self.registry.agent_skills())
    }

    /// The registry served.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The context calls run with.
    pub fn skill_context(&self) -> &SkillContext {
        &self.ctx
    }

    /// The tools a client of this connection is shown now, as `tools/list` answers them.
    pub fn tools(&self) -> Vec<Tool> {
        self.registry
            .definitions_for(self.ctx.scope())
            .into_iter()
            .map(|definition| {
                let metadata = self.registry.metadata(&definition.name);
                let metadata = metadata.as_ref();
                let read_only = metadata.is_some_and(|m| m.is_read_only);
                let destructive = metadata.is_none_or(|m| m.is_destructive) && !read_only;
                let idempotent = metadata.is_some_and(|m| m.is_idempotent);
                let schema = match definition.input_schema {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                let tool = Tool::new(definition.name, definition.description, schema)
                    .with_annotations(
                        ToolAnnotations::new()
                            .read_only(read_only)
                            .destructive(destructive)
                            .idempotent(idempotent),
                    );
                match definition.output_schema {
                    Some(output) => {
                        tool.with_raw_output_schema(Arc::new(mcp_output_schema(output)))
                    }
                    None => tool,
                }
            })
            .collect()
    }

    /// Runs one `tools/call` as [`Registry::run_one`] would in process, and converts the result.
    /// Public so the mapping can be used without a transport.
    pub async fn call(&self, name: &str, arguments: Option<Map<String, Value>>) -> CallToolResult {
        let call = ToolCall::new("mcp", name, Value::Object(arguments.unwrap_or_default()));
        self.answer(&self.registry.run_one(&call, &self.ctx).await)
    }

    /// The MCP form of a result of this server's registry, by the output schema of the skill
    /// it came from.
    pub(crate) fn answer(&self, result: &ToolResult) -> CallToolResult {
        let output_schema = self
            .registry
            .metadata(&result.name)
            .and_then(|m| m.output_schema);
        to_call_tool_result_for(result, output_schema.as_deref())
    }

    /// Serves one client on standard input and output until it disconnects: what an MCP client
    /// that starts this program as a child process expects. Nothing else may write to stdout;
    /// log to stderr.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        Ok(())
    }

    /// A copy for one more client: same registry and context, a session of its own.
    pub(crate) fn for_new_session(&self) -> Self {
        McpServer {
            ctx: self.ctx.clone().with_scope(RunScope::new()),
            session_tasks: Arc::default(),
            ..self.clone()
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("registry", &self.registry)
            .field("ctx", &self.ctx)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Serving a registry in one line: `registry.serve_mcp_stdio().await`.
///
/// Implemented for `Registry` and `Arc<Registry>` (anything that converts into an
/// `Arc<Registry>`). Calls run with [`SkillContext::default`], rooted at the current directory;
/// use [`McpServer`] to choose the workspace, the server's name or HTTP settings.
///
/// ```no_run
/// use agent_core::Registry;
/// use agent_mcp::server::ServeMcp;
///
/// # #[tokio::main] async fn main() -> Result<(), agent_mcp::McpError> {
/// Registry::discover().expect("skills are linked").serve_mcp_stdio().await
/// # }
/// ```
pub trait ServeMcp {
    /// Serves every skill over standard input and output: see [`McpServer::serve_stdio`].
    fn serve_mcp_stdio(self) -> impl Future<Output = Result<(), McpError>> + Send;

    /// Serves every skill over streamable HTTP at `http://ADDR/mcp`: see
    /// [`McpServer::serve_http`]. Clients must send the bearer token the server generates and
    /// prints on standard error when it starts; use [`McpServer::bearer_token`] to choose it.
    fn serve_mcp_http(
        self,
        addr: impl ToSocketAddrs + Send,
    ) -> impl Future<Output = Result<(), McpError>> + Send;
}

impl<T: Into<Arc<Registry>>> ServeMcp for T {
    fn serve_mcp_stdio(self) -> impl Future<Output = Result<(), McpError>> + Send {
        McpServer::new(self).serve_stdio()
    }

    fn serve_mcp_http(
        self,
        addr: impl ToSocketAddrs + Send,
    ) -> impl Future<Output = Result<(), McpError>> + Send {
        McpServer::new(self).serve_http(addr)
    }
}
