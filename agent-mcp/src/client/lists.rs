//! What a remote server offers besides tools: its resources, resource templates and prompts,
//! read by the application ([`McpSkills::resources`], [`McpSkills::read_resource`],
//! [`McpSkills::prompts`], [`McpSkills::get_prompt`]), and the tool list read again after the
//! server said it changed ([`McpSkills::refresh_tools`]). See the [module docs](super).

use std::sync::atomic::Ordering;

use agent_llm::Message;
use rmcp::model::{
    GetPromptRequestParams, PaginatedRequestParams, Prompt, PromptMessage,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, Role,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde_json::{Map, Value};

use super::McpSkills;
use super::handler::ListChanges;
use super::limits::{CONNECT_TIMEOUT, MAX_LISTED};
use super::skill::describe_content;
use crate::error::McpError;

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

    /// The server's resources (at most [`MAX_LISTED`]).
    pub async fn resources(&self) -> Result<Vec<Resource>, McpError> {
        self.connection
            .shared
            .resources_changed
            .store(false, Ordering::SeqCst);
        let peer = self.live_peer()?;
        self.read_pages(
            ("list its resources", "resources"),
            |params| peer.list_resources(params),
            |page| (page.resources, page.next_cursor),
        )
        .await
    }

    /// The server's resource templates (URIs with `{placeholders}`; at most [`MAX_LISTED`]).
    pub async fn resource_templates(&self) -> Result<Vec<ResourceTemplate>, McpError> {
        let peer = self.live_peer()?;
        self.read_pages(
            ("list its resource templates", "resource templates"),
            |params| peer.list_resource_templates(params),
            |page| (page.resource_templates, page.next_cursor),
        )
        .await
    }

    /// Reads the resource at `uri` (one listed, or a template's URI filled in), as the server
    /// sent it: text contents and base64 blobs.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let peer = self.live_peer()?;
        self.bounded(
            "read the resource",
            peer.read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await
    }

    /// The server's prompts (at most [`MAX_LISTED`]).
    pub async fn prompts(&self) -> Result<Vec<Prompt>, McpError> {
        self.connection
            .shared
            .prompts_changed
            .store(false, Ordering::SeqCst);
        let peer = self.live_peer()?;
        self.read_pages(
            ("list its prompts", "prompts"),
            |params| peer.list_prompts(params),
            |page| (page.prompts, page.next_cursor),
        )
        .await
    }

    /// The messages of the prompt `name` with `arguments` (the server checks them), ready to
    /// start or continue a conversation: user and assistant messages, text content as it is,
    /// images, audio and binary resources described in brackets.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Vec<Message>, McpError> {
        let peer = self.live_peer()?;
        let result = self
            .bounded(
                "get the prompt",
                peer.get_prompt(GetPromptRequestParams::new(name).with_arguments(arguments)),
            )
            .await?;
        Ok(result.messages.iter().map(prompt_message).collect())
    }

    fn live_peer(&self) -> Result<Peer<RoleClient>, McpError> {
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

    /// One request, within [`CONNECT_TIMEOUT`].
    async fn bounded<T>(
        &self,
        action: &'static str,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        let server = || self.connection.label.clone();
        tokio::time::timeout(CONNECT_TIMEOUT, request)
            .await
            .map_err(|_| McpError::Timeout {
                server: server(),
                timeout: CONNECT_TIMEOUT,
            })?
            .map_err(|source| McpError::Service {
                server: server(),
                action,
                source: Box::new(source),
            })
    }

    /// A list read page by page, each page within [`CONNECT_TIMEOUT`], to its end or to
    /// [`MAX_LISTED`] items: `fetch` asks for the page after a cursor, `split` takes a page's
    /// items and the next cursor; `action` names the request in errors, `what` the items.
    async fn read_pages<T, Page, Fut>(
        &self,
        (action, what): (&'static str, &str),
        fetch: impl Fn(Option<PaginatedRequestParams>) -> Fut,
        split: impl Fn(Page) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, McpError>
    where
        Fut: Future<Output = Result<Page, ServiceError>>,
    {
        let mut all = Vec::new();
        let mut cursor = None;
        loop {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let page = self.bounded(action, fetch(Some(params))).await?;
            let (items, next) = split(page);
            all.extend(items);
            cursor = next;
            if self.full(&mut all, cursor.is_some(), what) {
                return Ok(all);
            }
        }
    }

    /// Whether a list is read to its end or to [`MAX_LISTED`] (then cut there, with a warning).
    fn full<T>(&self, all: &mut Vec<T>, more: bool, what: &str) -> bool {
        if all.len() >= MAX_LISTED {
            if all.len() > MAX_LISTED || more {
                tracing::warn!(
                    server = self.connection.label,
                    "the server lists more than {MAX_LISTED} {what}; the rest were not read"
                );
            }
            all.truncate(MAX_LISTED);
            return true;
        }
        !more
    }
}

/// A prompt's message as a conversation's.
fn prompt_message(message: &PromptMessage) -> Message {
    let text = describe_content(&message.content);
    match message.role {
        Role::Assistant => Message::assistant(text),
        _ => Message::user(text),
    }
}
