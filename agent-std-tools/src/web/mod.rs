//! `web_fetch` (cargo feature `web`, on by default): fetch a public http(s) URL and return it as
//! readable text.
//!
//! - **Where it may go**: only `http` and `https`. The host is resolved first and every address is
//!   checked: loopback, private (RFC 1918, unique-local IPv6), link-local (`169.254.169.254`, the
//!   cloud metadata service), carrier-grade NAT, multicast, unspecified and reserved addresses are
//!   refused unless [`WebConfig`] allows them. The connection then goes to exactly the checked
//!   addresses (no second DNS lookup a rebinding attacker could answer differently), with no proxy.
//! - **Redirects** are followed by hand, at most [`WebConfig::max_redirects`], and every hop is
//!   checked the same way.
//! - **Limits**: the whole fetch must finish within [`WebConfig::timeout`]; at most
//!   [`WebConfig::max_bytes`] of the body are read; the text returned is cut at
//!   [`WebConfig::max_chars`] with a notice.
//! - **Text**: HTML becomes plain text with `html2text` (headings, lists, tables and links kept:
//!   `[text][1]`, with the footnotes `[1]: url` at the end, one to a line); other text types are
//!   returned as they are; binary content is refused.
//! - **Hostile HTML**: before conversion the HTML is rewritten in one linear pass into
//!   well-formed markup nested at most [`MAX_HTML_DEPTH`] elements deep (deeper tags are dropped,
//!   their text kept, and the answer says so), without scripts, styles, comments or SVG; at most
//!   [`MAX_HTML_BYTES`] of it are converted. (HTML parsers spend time in proportion to the
//!   nesting depth at each tag: 2 MB of nested `<div>` once took the converter 13 minutes and
//!   3 GB.)
//! - **Tables** are laid out as grids only within budgets: at most 4,096 cells and rows (the
//!   places that cells spanning rows cover included), 50 columns, 64 KiB of HTML, 8 tables
//!   nested, and about 65,536 cells and rows in all the page's grids together; `colspan` and
//!   `rowspan` are read as the converter reads them, within the HTML standard's limits (1,000
//!   and 65,534), and cut at the table's last row. A table past a budget is shown as lines, a
//!   row to a line and its cells separated by ` | `, and the answer says so. (The converter's
//!   memory follows a table's grid, not its HTML: 40,000 rows of `<tr><td rowspan=65534>a<td>b`
//!   (1.7 MB) took it past 6 GB, one row of 2 MiB of cells 446 MB.) Should the converter still
//!   panic on a table, that part of the page is converted again with its tables as lines.
//! - **Conversion** runs on a blocking thread, in pieces of about 32 KiB of HTML, each parsed,
//!   laid out and rendered on its own (a piece is cut between blocks, and never inside a table
//!   laid out as a grid). The fetch's time limit and cancellation are checked while a piece is
//!   read and between the steps and the pieces, so a conversion stops within one piece's work
//!   once the call has answered. Only the first [`WebConfig::max_chars`] characters of text are
//!   kept; the rest is converted only to be counted. Converting the worst 2 MiB pages found
//!   raised the peak memory by at most 10 MiB and took at most 1.5 s (an optimized build; they
//!   took up to 1.4 GB and 13 s before tables were bounded, and past 6 GB with spanning rows).
//! - **Credentials** in a URL (`https://user:password@host/`) are sent as the URL says, but never
//!   repeated: every message shows the URL without them.

mod address;
mod elements;
mod fetch;
mod html;
mod links;
mod tables;
mod text;
mod writer;

use std::time::Duration;

use agent_core::{SkillContext, SkillError, skill};
use reqwest::Url;

use fetch::fetch;

/// How deep elements may nest in the HTML converted; deeper tags are dropped, their text kept.
pub const MAX_HTML_DEPTH: usize = 128;

/// The most bytes of HTML converted to text; the rest is left out with a notice.
pub const MAX_HTML_BYTES: usize = 2 * 1024 * 1024;

/// Where `web_fetch` may go and how much it reads. Put one in the context with
/// [`SkillContext::with_extension`]; without one, [`WebConfig::default`] applies.
///
/// ```
/// use agent_core::SkillContext;
/// use agent_std_tools::WebConfig;
///
/// // A test against a server on 127.0.0.1:
/// let ctx = SkillContext::new(".").with_extension(WebConfig {
///     allow_loopback: true,
///     ..WebConfig::default()
/// });
/// # let _ = ctx;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// Allow loopback addresses (`127.0.0.0/8`, `::1`, `localhost`). Default `false`.
    pub allow_loopback: bool,
    /// Allow private, link-local, carrier-grade NAT and other non-public addresses. Default `false`.
    pub allow_private: bool,
    /// The time limit of the whole fetch, redirects included. Default 30 s.
    pub timeout: Duration,
    /// The most bytes of the body read. Default 2 MiB.
    pub max_bytes: usize,
    /// The most characters of text returned. Default 15,000.
    pub max_chars: usize,
    /// The most redirects followed. Default 5.
    pub max_redirects: usize,
    /// The `User-Agent` header sent.
    pub user_agent: String,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            allow_loopback: false,
            allow_private: false,
            timeout: Duration::from_secs(30),
            max_bytes: 2 * 1024 * 1024,
            max_chars: 15_000,
            max_redirects: 5,
            user_agent: concat!("eugene-agent/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

/// Fetch a web page or other text resource over http(s) and return it as readable text (HTML is
/// converted to plain text). Only public addresses can be fetched.
///
/// # Arguments
/// * `url` - The full URL, starting with `http://` or `https://`.
#[skill(
    read_only,
    search_hint = "http https download url web page internet browse"
)]
pub async fn web_fetch(ctx: &SkillContext, url: String) -> Result<String, SkillError> {
    let config = ctx.extension::<WebConfig>().cloned().unwrap_or_default();
    let parsed = Url::parse(url.trim()).map_err(|e| {
        SkillError::bad_args("url", format!("`{}` is not a URL: {e}", shown_raw(&url)))
    })?;
    tokio::time::timeout(config.timeout, fetch(ctx, parsed, &config))
        .await
        .map_err(|_| SkillError::Timeout(config.timeout))?
}

/// `url` as messages show it: without a user name or password.
fn shown(url: &Url) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return url.to_string();
    }
    let mut clean = url.clone();
    // Both fail only for URLs that cannot have credentials, which then have none.
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    clean.to_string()
}

/// A URL as written, perhaps not one that parses, as messages show it: whatever stands before an
/// `@` in its authority (the part after `://` up to the first `/`, `?` or `#`) is replaced by
/// `***`.
fn shown_raw(text: &str) -> String {
    let text = text.trim();
    let start = text.find("://").map_or(0, |i| i + 3);
    let end = text[start..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |i| start + i);
    match text[start..end].rfind('@') {
        Some(at) => format!("{}***{}", &text[..start], &text[start + at..]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_left_out_of_shown_urls() {
        let url = Url::parse("https://me:pw@example.com:8443/a?b#c").unwrap();
        assert_eq!(shown(&url), "https://example.com:8443/a?b#c");
        assert_eq!(
            shown_raw("http://me:pw@exa mple.com/x@y"),
            "http://***@exa mple.com/x@y"
        );
        assert_eq!(shown_raw("me:pw@host/path"), "***@host/path");
        assert_eq!(shown_raw("http://host/a@b"), "http://host/a@b");
    }
}
