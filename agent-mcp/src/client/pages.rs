//! Requests for the server's lists, bounded: each request within [`CONNECT_TIMEOUT`], each list
//! to its end or to [`MAX_LISTED`] items. Used by the application's reads (`lists.rs`) and by
//! the live sets' (`follow.rs`).

use rmcp::model::{PaginatedRequestParams, Resource, ResourceTemplate};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};

use super::limits::{CONNECT_TIMEOUT, MAX_LISTED};
use crate::error::McpError;

/// One request to the server `label` names, within [`CONNECT_TIMEOUT`]; `action` names it in
/// errors.
pub(super) async fn bounded<T>(
    label: &str,
    action: &'static str,
    request: impl Future<Output = Result<T, ServiceError>>,
) -> Result<T, McpError> {
    tokio::time::timeout(CONNECT_TIMEOUT, request)
        .await
        .map_err(|_| McpError::Timeout {
            server: label.to_owned(),
            timeout: CONNECT_TIMEOUT,
        })?
        .map_err(|source| McpError::Service {
            server: label.to_owned(),
            action,
            source: Box::new(source),
        })
}

/// A list read page by page, each page within [`CONNECT_TIMEOUT`], to its end or to
/// [`MAX_LISTED`] items: `fetch` asks for the page after a cursor, `split` takes a page's items
/// and the next cursor; `action` names the request in errors, `what` the items.
pub(super) async fn read_pages<T, Page, Fut>(
    label: &str,
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
        let page = bounded(label, action, fetch(Some(params))).await?;
        let (items, next) = split(page);
        all.extend(items);
        cursor = next;
        if full(label, &mut all, cursor.is_some(), what) {
            return Ok(all);
        }
    }
}

/// Whether a list is read to its end or to [`MAX_LISTED`] (then cut there, with a warning).
fn full<T>(label: &str, all: &mut Vec<T>, more: bool, what: &str) -> bool {
    if all.len() >= MAX_LISTED {
        if all.len() > MAX_LISTED || more {
            tracing::warn!(
                server = label,
                "the server lists more than {MAX_LISTED} {what}; the rest were not read"
            );
        }
        all.truncate(MAX_LISTED);
        return true;
    }
    !more
}

/// The server's resources (at most [`MAX_LISTED`]).
pub(super) async fn resources(
    label: &str,
    peer: &Peer<RoleClient>,
) -> Result<Vec<Resource>, McpError> {
    read_pages(
        label,
        ("list its resources", "resources"),
        |params| peer.list_resources(params),
        |page| (page.resources, page.next_cursor),
    )
    .await
}

/// The server's resource templates (at most [`MAX_LISTED`]).
pub(super) async fn resource_templates(
    label: &str,
    peer: &Peer<RoleClient>,
) -> Result<Vec<ResourceTemplate>, McpError> {
    read_pages(
        label,
        ("list its resource templates", "resource templates"),
        |params| peer.list_resource_templates(params),
        |page| (page.resource_templates, page.next_cursor),
    )
    .await
}

/// The URIs of the server's resources, then its resource templates': what the `read_resource`
/// skill lists.
pub(super) async fn resource_uris(
    label: &str,
    peer: &Peer<RoleClient>,
) -> Result<Vec<String>, McpError> {
    let mut uris: Vec<String> = resources(label, peer)
        .await?
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    let templates = resource_templates(label, peer).await?;
    uris.extend(templates.into_iter().map(|t| t.uri_template.clone()));
    Ok(uris)
}
