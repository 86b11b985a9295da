//! The `read_resource` skill ([`McpSkills::with_resource_skill`](super::McpSkills::with_resource_skill)):
//! the model reads a remote server's resource by its URI, the text cut at [`MAX_RESOURCE_BYTES`];
//! a `blob` of an image, audio, PDF or text type reaches the model as a media part (checked as
//! [`crate::media`] says), any other binary contents as a line that describes them.

use std::sync::Arc;
use std::time::Duration;

use agent_core::content::{Content, MediaLimits};
use agent_core::{
    DynSkill, ParsedInput, RetryPolicy, SkillContext, SkillError, SkillMetadata, SkillOutput,
    async_trait,
};
use rmcp::model::ReadResourceRequestParams;
use serde::Deserialize;
use serde_json::{Value, json};

use super::connection::Connection;
use crate::media::{describe_resource, media_of_resource};

/// The most bytes of a resource's text the `read_resource` skill gives the model; the rest is
/// cut, and the model told so. Under the registry's own cut of a tool's output (16,000 by
/// default), with room for the note, so that the model sees it.
pub const MAX_RESOURCE_BYTES: usize = 15_000;

/// The skill's input.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    uri: String,
}

/// Reads one resource of a server for the model.
pub(super) struct ReadResourceSkill {
    pub(super) connection: Arc<Connection>,
    pub(super) metadata: SkillMetadata,
    pub(super) description: String,
    pub(super) call_timeout: Duration,
    pub(super) media_limits: MediaLimits,
}

impl ReadResourceSkill {
    /// The skill named `name`, its description listing `uris` (the server's resources and
    /// templates, as far as they fit).
    pub(super) fn new(
        connection: Arc<Connection>,
        name: String,
        uris: &[String],
        call_timeout: Duration,
        media_limits: MediaLimits,
    ) -> Self {
        let mut description = format!(
            "Reads a resource of the MCP server {} by its URI and returns its text (or its image, audio or PDF).",
            connection.label
        );
        if !uris.is_empty() {
            description.push_str(" Its resources and URI templates: ");
            let mut listed = 0;
            for uri in uris {
                if description.len() + uri.len() > 2000 {
                    break;
                }
                if listed > 0 {
                    description.push_str(", ");
                }
                description.push_str(uri);
                listed += 1;
            }
            if listed < uris.len() {
                description.push_str(&format!(", and {} more", uris.len() - listed));
            }
            description.push('.');
        }
        ReadResourceSkill {
            metadata: SkillMetadata {
                name: Arc::from(name),
                is_read_only: true,
                is_destructive: false,
                is_concurrency_safe: true,
                is_idempotent: true,
                should_defer: false,
                aliases: Arc::from([]),
                search_hint: Some(Arc::from("mcp resource read uri")),
                output_schema: None,
            },
            connection,
            description,
            call_timeout,
            media_limits,
        }
    }
}

#[async_trait]
impl DynSkill for ReadResourceSkill {
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
        json!({
            "type": "object",
            "properties": {
                "uri": {"type": "string", "description": "The resource's URI, e.g. one listed in this tool's description, or a template's with its placeholders filled in."}
            },
            "required": ["uri"],
            "additionalProperties": false
        })
    }

    fn timeout(&self) -> Option<Duration> {
        None // enforced in `run_parsed`
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        None
    }

    fn parse(&self, args: &Value) -> Result<ParsedInput, SkillError> {
        agent_core::skill::parse_args::<Input>(args).map(ParsedInput::new)
    }

    async fn run_parsed(
        &self,
        input: ParsedInput,
        _ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        let Input { uri } = input.downcast::<Input>()?;
        let (peer, child) = self.connection.peer()?;
        let read = tokio::time::timeout(
            self.call_timeout,
            peer.read_resource(ReadResourceRequestParams::new(uri.clone())),
        )
        .await
        .map_err(|_| SkillError::Timeout(self.call_timeout))?;
        let result = match read {
            Ok(result) => result,
            Err(error) => return Err(self.connection.failure(error, child.as_deref()).await),
        };
        let mut texts = Vec::new();
        let mut media = Vec::new();
        for contents in &result.contents {
            let part = media_of_resource(contents, &self.media_limits)
                .map_err(|e| SkillError::tool(format!("the resource {uri} was refused: {e}")))?;
            match part {
                Some(part) => media.push(part),
                None => texts.push(describe_resource(contents)),
            }
        }
        let text = cut(texts.join("\n"));
        if media.is_empty() {
            return Ok(SkillOutput::Text(text));
        }
        let mut content = Content::default();
        if !text.is_empty() {
            content = Content::text(text);
        }
        Ok(SkillOutput::Content(
            media.into_iter().fold(content, Content::with),
        ))
    }
}

/// `text` cut at [`MAX_RESOURCE_BYTES`] (at a character's boundary), saying so.
fn cut(mut text: String) -> String {
    if text.len() <= MAX_RESOURCE_BYTES {
        return text;
    }
    let total = text.len();
    let mut end = MAX_RESOURCE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!(
        "\n[cut: the resource has {total} bytes; the first {end} are shown]"
    ));
    text
}
