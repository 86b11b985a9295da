//! What a remote server offers besides tools: its resources, resource templates and prompts,
//! read by the application ([`McpSkills::resources`], [`McpSkills::read_resource`],
//! [`McpSkills::prompts`], [`McpSkills::get_prompt`]), and the tool list read again after the
//! server said it changed ([`McpSkills::refresh_tools`]). See the [module docs](super).

use std::sync::atomic::Ordering;

use agent_core::content::{MediaError, MediaLimits, Part};
use agent_llm::Message;
use rmcp::model::{
    GetPromptRequestParams, Prompt, PromptMessage, ReadResourceRequestParams, ReadResourceResult,
    Resource, ResourceTemplate, Role,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde_json::{Map, Value};

use super::McpSkills;
use super::handler::ListChanges;
use super::pages::{self, bounded, read_pages};
use crate::error::McpError;
use crate::media::part_of_block;

impl McpSkills {
    /// Which lists the server said changed since they were last read here.
    pub fn changes(&self) -> ListChanges {
        self.connection.shared.changes()
    }

    /// Reads the tool list again and returns the names of the skills that are new. Skills made
    /// from then on ([`McpSkills::skills`]) are of the new list, and the live sets made of this
    /// server's tools ([`McpSkills::add_to`], [`McpSkills::live_skills`]) have it at once, as
    /// after the server announced a change.
    pub async fn refresh_tools(&mut self) -> Result<Vec<String>, McpError> {
        self.connection
            .shared
            .tools_changed
            .store(false, Ordering::SeqCst);
        let peer = self.live_peer()?;
        let label = &self.connection.label;
        let tools = self.connection.shared.follow.refresh(label, &peer).await?;
        let before = self.names();
        self.tools = tools;
        Ok(self
            .names()
            .into_iter()
            .filter(|name| !before.contains(name))
            .collect())
    }

    /// The server's resources (at most [`MAX_LISTED`](super::MAX_LISTED)).
    pub async fn resources(&self) -> Result<Vec<Resource>, McpError> {
        self.connection
            .shared
            .resources_changed
            .store(false, Ordering::SeqCst);
        let peer = self.live_peer()?;
        pages::resources(&self.connection.label, &peer).await
    }

    /// The server's resource templates (URIs with `{placeholders}`; at most
    /// [`MAX_LISTED`](super::MAX_LISTED)).
    pub async fn resource_templates(&self) -> Result<Vec<ResourceTemplate>, McpError> {
        let peer = self.live_peer()?;
        pages::resource_templates(&self.connection.label, &peer).await
    }

    /// Reads the resource at `uri` (one listed, or a template's URI filled in), as the server
    /// sent it: text contents and base64 blobs.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let peer = self.live_peer()?;
        bounded(
            &self.connection.label,
            "read the resource",
            peer.read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await
    }

    /// The server's prompts (at most [`MAX_LISTED`](super::MAX_LISTED)).
    pub async fn prompts(&self) -> Result<Vec<Prompt>, McpError> {
        self.connection
            .shared
            .prompts_changed
            .store(false, Ordering::SeqCst);
        let peer = self.live_peer()?;
        read_pages(
            &self.connection.label,
            ("list its prompts", "prompts"),
            |params| peer.list_prompts(params),
            |page| (page.prompts, page.next_cursor),
        )
        .await
    }

    /// The messages of the prompt `name` with `arguments` (the server checks them), ready to
    /// start or continue a conversation: user and assistant messages, text content as it is,
    /// an image, audio or embedded file as the message's part (decoded and checked against
    /// [`McpSkills::with_media_limits`]; media refused is [`McpError::Media`]).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Vec<Message>, McpError> {
        let peer = self.live_peer()?;
        let result = bounded(
            &self.connection.label,
            "get the prompt",
            peer.get_prompt(GetPromptRequestParams::new(name).with_arguments(arguments)),
        )
        .await?;
        let limits = self.make.media_limits;
        result
            .messages
            .iter()
            .map(|message| prompt_message(message, &limits))
            .collect::<Result<_, _>>()
            .map_err(|source| McpError::Media {
                server: self.connection.label.clone(),
                what: format!("the prompt `{name}`"),
                source,
            })
    }

    pub(super) fn live_peer(&self) -> Result<Peer<RoleClient>, McpError> {
        let live = self.connection.lock();
        match live.as_ref() {
            Some(live) => Ok(live.service.peer().clone()),
            None => Err(McpError::Service {
                server: self.connection.label.clone(),
                action: "answer: the connection is closed",
                source: Box::new(ServiceError::TransportClosed),
            }),
        }
    }
}

/// A prompt's message as a conversation's: its text, or its image, audio or embedded file as a
/// part (decoded and checked against `limits`).
fn prompt_message(message: &PromptMessage, limits: &MediaLimits) -> Result<Message, MediaError> {
    let (text, parts) = match part_of_block(&message.content, limits)? {
        Part::Text(text) => (text, Vec::new()),
        media @ Part::Media(_) => (String::new(), vec![media]),
    };
    let mut message = match message.role {
        Role::Assistant => Message::assistant(text),
        _ => Message::user(text),
    };
    message.parts = parts;
    Ok(message)
}
