//! Serving a [`Registry`] as an MCP server: [`McpServer`], and the one-liners of [`ServeMcp`].
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
//!   advertises `tools.listChanged`).
//! - Each tool is annotated from the skill's flags: `readOnlyHint` from `is_read_only`,
//!   `destructiveHint` from `is_destructive` (always `false` for a read-only skill, whose other
//!   hints the spec ignores).
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
//! - Over HTTP ([`McpServer::serve_http`]) every request needs a bearer token, browsers'
//!   cross-origin requests are refused, and connections, sessions and slow clients are bounded:
//!   see [`crate::http`].
//! - Sessions: every connection (a stdio pipe, an HTTP session) gets its own
//!   [`RunScope`], on a clone of the [`SkillContext`] given with [`McpServer::context`]
//!   (same workspace, extensions and cancellation token). A client cancelling a request drops
//!   the running call.

use std::future::Future;
use std::sync::Arc;

use agent_core::{
    CurrentRegistry, Registry, RunScope, SkillContext, SkillError, SkillOutput, ToolCall,
    ToolResult,
};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio::net::ToSocketAddrs;

use crate::error::McpError;
use crate::http_settings::HttpSettings;

/// The path the streamable-HTTP endpoint answers on: `http://ADDR/mcp`.
pub const HTTP_PATH: &str = "/mcp";

/// An MCP server over a [`Registry`]: an rmcp [`ServerHandler`] whose tools are the registry's
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
    registry: Arc<Registry>,
    ctx: SkillContext,
    info: Implementation,
    instructions: Option<String>,
    pub(crate) http_config: StreamableHttpServerConfig,
    pub(crate) http: HttpSettings,
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
            http_config: StreamableHttpServerConfig::default(),
            http: HttpSettings::default(),
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

    /// rmcp's settings for [`McpServer::serve_http`]. The default accepts only loopback `Host`
    /// headers (`localhost`, `127.0.0.1`, `::1`), against DNS rebinding; a server reached under
    /// another name must list it with `StreamableHttpServerConfig::with_allowed_hosts`. Its
    /// `max_request_body_bytes` (4 MiB by default) bounds every POSTed body. The `Host` check
    /// only stops browsers: what keeps other hosts out is the bearer token
    /// ([`McpServer::bearer_token`]). Authentication, origins, connection and session limits
    /// are set on `McpServer` itself (see [`crate::http`]).
    pub fn http_config(mut self, config: StreamableHttpServerConfig) -> Self {
        self.http_config = config;
        self
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
                let read_only = metadata.is_some_and(|m| m.is_read_only);
                let destructive = metadata.is_none_or(|m| m.is_destructive) && !read_only;
                let schema = match definition.input_schema {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                let tool = Tool::new(definition.name, definition.description, schema)
                    .with_annotations(
                        ToolAnnotations::new()
                            .read_only(read_only)
                            .destructive(destructive),
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
    fn answer(&self, result: &ToolResult) -> CallToolResult {
        let output_schema = self
            .registry
            .metadata(&result.name)
            .and_then(|m| m.output_schema.as_deref());
        to_call_tool_result_for(result, output_schema)
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

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let config = ServerConfig::new(capabilities).with_server_info(self.info.clone());
        match &self.instructions {
            Some(text) => config.with_instructions(text.clone()),
            None => config,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The list depends on the session and changes when `tool_search` loads skills: not for
        // shared caches, and stale at once.
        Ok(ListToolsResult::with_all_items(self.tools())
            .with_ttl_ms(0)
            .with_cache_scope(CacheScope::Private))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(context.id.to_string(), request.name.as_ref(), arguments);
        let loaded_before = self.ctx.scope().loaded().len();
        let result = tokio::select! {
            result = self.registry.run_one(&call, &self.ctx) => result,
            () = context.ct.cancelled() => ToolResult::new(&call, Err(SkillError::Cancelled)),
        };
        if self.ctx.scope().loaded().len() > loaded_before
            && let Err(error) = context.peer.notify_tool_list_changed().await
        {
            tracing::debug!(%error, "could not send notifications/tools/list_changed");
        }
        Ok(self.answer(&result).into())
    }
}

/// The MCP form of a result of a skill without an output schema: its text (what a model would
/// read), `isError` for every [`SkillError`], and JSON objects also as `structuredContent`.
pub fn to_call_tool_result(result: &ToolResult) -> CallToolResult {
    to_call_tool_result_for(result, None)
}

/// The MCP form of a result of a skill with the output schema `output_schema` (as the skill
/// declares it, before [`mcp_output_schema`]): see the [module docs](self). With `None`, the
/// same as [`to_call_tool_result`].
pub fn to_call_tool_result_for(
    result: &ToolResult,
    output_schema: Option<&Value>,
) -> CallToolResult {
    let text = vec![ContentBlock::text(result.content().into_owned())];
    let structured = match (&result.output, output_schema) {
        (Err(_), _) => return CallToolResult::error(text),
        // Text cannot follow an output schema: a failed call, not a protocol violation.
        (Ok(SkillOutput::Text(_)), Some(_)) => return CallToolResult::error(text),
        (Ok(SkillOutput::Text(_)), None) => None,
        (Ok(SkillOutput::Json(value)), Some(schema)) if !is_object_root(schema) => {
            let mut wrapped = Map::new();
            wrapped.insert(RESULT_KEY.into(), value.clone());
            Some(Value::Object(wrapped))
        }
        (Ok(SkillOutput::Json(value @ Value::Object(_))), _) => Some(value.clone()),
        (Ok(SkillOutput::Json(_)), Some(_)) => {
            // An object schema and a value that is not an object (a hook or a skill written by
            // hand can do that): it cannot follow the schema either.
            return CallToolResult::error(text);
        }
        (Ok(SkillOutput::Json(_)), None) => None,
    };
    let mut answer = CallToolResult::success(text);
    answer.structured_content = structured;
    answer
}

/// The property a non-object output is wrapped in: `{"result": VALUE}`.
pub const RESULT_KEY: &str = "result";

/// A skill's output schema as MCP serves it, as `outputSchema`: an object schema as it is; any
/// other (an array, a number, `oneOf`...) wrapped as the schema of `{"result": VALUE}`, with its
/// `$defs` moved to the new root and its references to its own root (`"$ref": "#"`, which a
/// recursive type's schema has) pointed at `#/properties/result`, so that every `$ref` still
/// resolves.
///
/// ```
/// use serde_json::json;
///
/// let point = json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]});
/// assert_eq!(agent_mcp::server::mcp_output_schema(point.clone()), point.as_object().unwrap().clone());
///
/// let wrapped = agent_mcp::server::mcp_output_schema(json!({"type": "array", "items": {"type": "string"}}));
/// assert_eq!(
///     serde_json::Value::Object(wrapped),
///     json!({
///         "type": "object",
///         "properties": {"result": {"type": "array", "items": {"type": "string"}}},
///         "required": ["result"]
///     })
/// );
/// ```
pub fn mcp_output_schema(schema: Value) -> Map<String, Value> {
    if is_object_root(&schema)
        && let Value::Object(map) = schema
    {
        return map;
    }
    let mut inner = schema;
    let mut defs = match &mut inner {
        Value::Object(map) => map.remove("$defs"),
        _ => None,
    };
    retarget_root_refs(&mut inner);
    if let Some(defs) = &mut defs {
        retarget_root_refs(defs);
    }
    let mut properties = Map::new();
    properties.insert(RESULT_KEY.into(), inner);
    let mut root = Map::new();
    root.insert("type".into(), Value::from("object"));
    root.insert("properties".into(), Value::Object(properties));
    root.insert("required".into(), Value::from(vec![RESULT_KEY]));
    if let Some(defs) = defs {
        root.insert("$defs".into(), defs);
    }
    root
}

/// Points every `$ref` into the schema's own root, other than into its `$defs`, at the same place
/// under `#/properties/result`. Values that are data (`const`, `enum`, `default`, `examples`)
/// are left alone.
fn retarget_root_refs(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    ("$ref", Value::String(target))
                        if target.starts_with('#') && !target.starts_with("#/$defs/") =>
                    {
                        *target = format!("#/properties/{RESULT_KEY}{}", &target[1..]);
                    }
                    ("const" | "enum" | "default" | "examples", _) => {}
                    // Maps of names to schemas: a property called `const` is a schema too.
                    (
                        "properties" | "patternProperties" | "$defs" | "definitions"
                        | "dependentSchemas",
                        Value::Object(schemas),
                    ) => schemas.values_mut().for_each(retarget_root_refs),
                    (_, value) => retarget_root_refs(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(retarget_root_refs),
        _ => {}
    }
}

/// Whether a schema's root is an object schema (`"type": "object"`), as MCP requires of
/// `outputSchema`.
fn is_object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// Serving a registry in one line: `registry.serve_mcp_stdio().await`.
///
/// Implemented for `Registry` and `Arc<Registry>` (anything that converts into an
/// `Arc<Registry>`). Calls run with [`SkillContext::default`], rooted at the current directory;
/// use [`McpServer`] to choose the workspace, the server's name or HTTP settings.
///
/// ```no_run
/// use agent_core::Registry;
/// use agent_mcp::ServeMcp;
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
