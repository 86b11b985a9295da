//! [`McpServer`] as an rmcp [`ServerHandler`]: what it answers to `initialize`, `tools/list` and
//! `tools/call`.

use agent_core::{SkillError, ToolCall, ToolResult};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::McpServer;

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
