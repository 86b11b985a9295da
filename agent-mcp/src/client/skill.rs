//! One remote tool as a skill ([`McpSkill`]), and what its results become.

use std::sync::Arc;
use std::time::Duration;

use agent_core::content::{Content, MediaLimits, Part};
use agent_core::{
    DynSkill, ParsedInput, RetryPolicy, SkillContext, SkillError, SkillMetadata, SkillOutput,
    async_trait,
};
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value};

use super::connection::Connection;
use super::follow::FOLLOW_WAIT;
use crate::media::{describe_resource, is_media_block, part_of_block};

/// One remote tool as a skill.
pub(super) struct McpSkill {
    pub(super) connection: Arc<Connection>,
    pub(super) remote_name: String,
    pub(super) metadata: SkillMetadata,
    pub(super) description: String,
    pub(super) schema: Value,
    pub(super) output_schema: Option<Value>,
    pub(super) call_timeout: Duration,
    /// What its results' media is checked against.
    pub(super) media_limits: MediaLimits,
}

impl McpSkill {
    pub(super) fn new(
        connection: Arc<Connection>,
        tool: &Tool,
        name: String,
        call_timeout: Duration,
        defer: bool,
        server: &str,
        media_limits: MediaLimits,
    ) -> Self {
        let annotations = tool.annotations.as_ref();
        let is_read_only = annotations.and_then(|a| a.read_only_hint) == Some(true);
        let is_destructive = !is_read_only && annotations.is_none_or(|a| a.is_destructive());
        // The spec's `idempotentHint` (default false); a read-only tool is idempotent anyway.
        let is_idempotent =
            is_read_only || annotations.and_then(|a| a.idempotent_hint) == Some(true);
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
                is_idempotent,
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
            media_limits,
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
        ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        let arguments = input.downcast::<Map<String, Value>>()?;
        let output = self.call(arguments, ctx).await;
        self.follow_changes().await;
        output
    }
}

impl McpSkill {
    /// Puts a change of the tool list the server announced while this call waited in place
    /// before the call's result goes back (see `follow.rs`).
    async fn follow_changes(&self) {
        let follow = &self.connection.shared.follow;
        if !follow.is_behind() {
            return;
        }
        let Ok((peer, _)) = self.connection.peer() else {
            return;
        };
        let wait = FOLLOW_WAIT.min(self.call_timeout);
        match tokio::time::timeout(wait, follow.catch_up(&self.connection.label, &peer)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(server = self.connection.label, %error, "could not read the server's changed tool list");
            }
            // The handler of the server's notification reads it; the result does not wait.
            Err(_) => tracing::warn!(
                server = self.connection.label,
                "the server's changed tool list was not read within {wait:?}; the result goes back without it"
            ),
        }
    }
}

/// What a remote result means as a skill's output, its media checked against
/// [`MediaLimits::default`]. See the [module docs](super).
pub fn from_call_tool_result(result: CallToolResult) -> Result<SkillOutput, SkillError> {
    from_call_tool_result_with(result, &MediaLimits::default())
}

/// What a remote result means as a skill's output, its media (images, audio, resources with a
/// `blob`) decoded and checked against `limits` ([`crate::media`]): one part refused refuses
/// the result, with an error that says which and why.
pub fn from_call_tool_result_with(
    result: CallToolResult,
    limits: &MediaLimits,
) -> Result<SkillOutput, SkillError> {
    let described = |content: &[ContentBlock]| {
        content
            .iter()
            .map(describe_content)
            .collect::<Vec<_>>()
            .join("\n")
    };
    if result.is_error == Some(true) {
        let text = described(&result.content);
        return Err(SkillError::tool(match result.structured_content {
            _ if !text.is_empty() => text,
            Some(details) if !details.is_null() => details.to_string(),
            _ => "the tool failed without saying why".to_owned(),
        }));
    }
    if result.content.iter().any(is_media_block) {
        let parts = result
            .content
            .iter()
            .map(|block| part_of_block(block, limits))
            .collect::<Result<Vec<Part>, _>>()
            .map_err(|e| SkillError::tool(format!("the tool's result was refused: {e}")))?;
        return Ok(SkillOutput::Content(Content::from(parts)));
    }
    let text = described(&result.content);
    match result.structured_content {
        Some(value) => Ok(SkillOutput::Json(value)),
        None => Ok(SkillOutput::Text(text)),
    }
}

/// A block in words, for where media cannot go (an error's text) and results without media.
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
        ContentBlock::Resource(embedded) => describe_resource(&embedded.resource),
        ContentBlock::ResourceLink(resource) => format!("[resource link: {}]", resource.uri),
        _ => "[content of a kind this client does not show]".to_owned(),
    }
}
