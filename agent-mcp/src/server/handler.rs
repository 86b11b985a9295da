//! [`McpServer`] as an rmcp [`ServerHandler`]: what it answers to `initialize`, `tools/list` and
//! `tools/call`.

use agent_core::{SkillError, ToolCall, ToolResult};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, PromptsCapability, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourcesCapability, ServerCapabilities,
    ServerConfig, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::{ConnectedClient, McpServer, resources};

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let builder = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed();
        let mut capabilities = match &self.task_settings {
            Some(settings) if !settings.is_empty() => builder.enable_tasks().build(),
            _ => builder.build(),
        };
        // Advertised only when there is something behind them.
        if !self.prompts.is_empty() {
            capabilities.prompts = Some(PromptsCapability::default());
        }
        if !self.registry.agent_skills().is_empty() {
            capabilities.resources = Some(ResourcesCapability::default());
        }
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
        let live_before = self.registry.live_version();
        let client = ConnectedClient::new(
            context.peer.clone(),
            context.id.clone(),
            context.ct.clone(),
            self.client_request_timeout,
        );
        if let Some(settings) = &self.task_settings
            && settings.serves(&call.name)
            && context
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks())
        {
            return Ok(self.session_tasks.start(
                settings,
                self.registry.clone(),
                &self.ctx,
                call,
                client,
            ));
        }
        let ctx = self.ctx.clone().with_extension(client);
        let result = tokio::select! {
            result = self.registry.run_one(&call, &ctx) => result,
            () = context.ct.cancelled() => ToolResult::new(&call, Err(SkillError::Cancelled)),
        };
        let changed = self.ctx.scope().loaded().len() > loaded_before
            || self.registry.live_version() != live_before;
        if changed && let Err(error) = context.peer.notify_tool_list_changed().await {
            tracing::debug!(%error, "could not send notifications/tools/list_changed");
        }
        Ok(self.answer(&result).into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(
            self.session_tasks.manager().get_task(&request.task_id)?,
        ))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session_tasks
            .manager()
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session_tasks.manager().cancel_task(&request.task_id)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        if self.prompts.is_empty() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListPromptsRequestMethod,
            >());
        }
        Ok(ListPromptsResult::with_all_items(self.prompts.list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Ok(self.prompts.get(&request.name, request.arguments)?.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if self.registry.agent_skills().is_empty() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListResourcesRequestMethod,
            >());
        }
        Ok(ListResourcesResult::with_all_items(self.resources()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = resources::read(self.registry.agent_skills(), &request.uri).await?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
