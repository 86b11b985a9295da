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
//! - **Text**: HTML becomes plain text with `html2text` (headings, lists, tables and link
//!   footnotes kept); other text types are returned as they are; binary content is refused.
//! - **Hostile HTML**: before conversion the HTML is rewritten in one linear pass into
//!   well-formed markup nested at most [`MAX_HTML_DEPTH`] elements deep (deeper tags are dropped,
//!   their text kept, and the answer says so), without scripts, styles, comments or SVG; at most
//!   [`MAX_HTML_BYTES`] of it are converted. The conversion runs on a blocking thread, within the
//!   same time limit, and stops at its next read when the call times out or is cancelled.
//!   (HTML parsers spend time in proportion to the nesting depth at each tag: 2 MB of nested
//!   `<div>` once took the converter 13 minutes and 3 GB.)
//! - **Credentials** in a URL (`https://user:password@host/`) are sent as the URL says, but never
//!   repeated: every message shows the URL without them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use agent_core::{SkillContext, SkillError, skill};
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, LOCATION};

use crate::blocking::{Stop, StopReader, blocking_until_stopped};

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

async fn fetch(ctx: &SkillContext, mut url: Url, config: &WebConfig) -> Result<String, SkillError> {
    let mut hops = 0;
    let response = loop {
        let client = client_for(&url, config).await?;
        let response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| SkillError::from_error(e.without_url()).context(&url))?;
        if response.status().is_redirection()
            && let Some(location) = response.headers().get(LOCATION)
        {
            if hops == config.max_redirects {
                return Err(SkillError::tool(format!(
                    "`{}` redirected more than {} times",
                    shown(&url),
                    config.max_redirects
                )));
            }
            let location = location.to_str().unwrap_or_default();
            url = url.join(location).map_err(|e| {
                SkillError::tool(format!(
                    "`{}` redirected to a bad URL `{}`: {e}",
                    shown(&url),
                    shown_raw(location)
                ))
            })?;
            hops += 1;
            continue;
        }
        break response;
    };

    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let (body, cut_body) = read_body(response, config.max_bytes, &url).await?;
    let mut notes = Vec::new();
    if cut_body {
        notes.push(format!(
            "only the first {} bytes of the body were read",
            config.max_bytes
        ));
    }
    let text = to_text(ctx, body, &content_type, &url, &mut notes).await?;
    let mut text = text.trim().to_owned();
    if let Some((at, _)) = text.char_indices().nth(config.max_chars) {
        let total = config.max_chars + text[at..].chars().count();
        text.truncate(at);
        notes.push(format!(
            "showing {} of {total} characters of text",
            config.max_chars
        ));
    }
    if !status.is_success() {
        let excerpt: String = text.chars().take(2_000).collect();
        return Err(SkillError::tool(format!(
            "`{}` answered HTTP {status}\n\n{excerpt}",
            shown(&url)
        )));
    }
    let mut out = format!(
        "URL: {}\nContent-Type: {content_type}\n\n{text}",
        shown(&url)
    );
    if !notes.is_empty() {
        out.push_str(&format!("\n\n[{}]", notes.join("; ")));
    }
    Ok(out)
}

/// A client that can only reach the checked addresses of `url`'s host.
async fn client_for(url: &Url, config: &WebConfig) -> Result<reqwest::Client, SkillError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(SkillError::Safety(format!(
            "`{}`: only http and https URLs can be fetched",
            shown(url)
        )));
    }
    let Some(host) = url.host_str() else {
        return Err(SkillError::bad_args(
            "url",
            format!("`{}` has no host", shown(url)),
        ));
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| {
                SkillError::tool(format!("cannot resolve the host of `{}`: {e}", shown(url)))
            })?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(SkillError::tool(format!(
            "the host of `{}` has no addresses",
            shown(url)
        )));
    }
    for addr in &addrs {
        check_address(addr.ip(), config).map_err(|kind| {
            SkillError::Safety(format!(
                "`{}` leads to {} ({kind}); only public addresses can be fetched",
                shown(url),
                addr.ip()
            ))
        })?;
    }
    let tls = agent_core::llm::tls_config().map_err(SkillError::tool)?;
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(config.user_agent.clone());
    if host.parse::<IpAddr>().is_err() {
        builder = builder.resolve_to_addrs(host, &addrs);
    }
    builder.build().map_err(SkillError::from_error)
}

/// Whether `ip` may be fetched under `config`; the error names the kind of address. Public for
/// the tests, not part of the documented API.
#[doc(hidden)]
pub fn check_address(ip: IpAddr, config: &WebConfig) -> Result<(), &'static str> {
    match classify(ip) {
        None => Ok(()),
        Some("loopback") if config.allow_loopback => Ok(()),
        Some(kind) if kind != "loopback" && config.allow_private => Ok(()),
        Some(kind) => Err(kind),
    }
}

/// The kind of a non-public address, or `None` for a public one.
fn classify(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 0 {
        Some("unspecified")
    } else if a == 100 && (64..128).contains(&b) {
        Some("carrier-grade NAT")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("multicast, broadcast or reserved")
    } else if (a == 192 && b == 0 && c == 0) || (a == 198 && (18..20).contains(&b)) {
        Some("reserved")
    } else if ip.is_documentation() {
        Some("documentation")
    } else {
        None
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let s = ip.segments();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified")
    } else if s[0] & 0xfe00 == 0xfc00 {
        Some("private")
    } else if s[0] & 0xffc0 == 0xfe80 || s[0] & 0xffc0 == 0xfec0 {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        // NAT64: the IPv4 address is in the last 32 bits.
        classify_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ))
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Some("documentation")
    } else if s[..6] == [0, 0, 0, 0, 0, 0] {
        // IPv4-compatible (deprecated) addresses.
        Some("reserved")
    } else {
        None
    }
}

async fn read_body(
    mut response: reqwest::Response,
    max_bytes: usize,
    url: &Url,
) -> Result<(Vec<u8>, bool), SkillError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| SkillError::from_error(e.without_url()).context(url))?
    {
        let room = max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// The body as text: HTML converted (on a blocking thread, see the module docs), other text as it
/// is; binary content is refused. Notes on what was left out go to `notes`.
async fn to_text(
    ctx: &SkillContext,
    body: Vec<u8>,
    content_type: &str,
    url: &Url,
    notes: &mut Vec<String>,
) -> Result<String, SkillError> {
    let sniff = &body[..body.len().min(1024)];
    let looks_html = {
        let start = String::from_utf8_lossy(sniff)
            .trim_start()
            .to_ascii_lowercase();
        start.starts_with("<!doctype html") || start.starts_with("<html")
    };
    if content_type.contains("html") || (content_type.is_empty() && looks_html) {
        let (text, html_notes) =
            blocking_until_stopped(ctx, move |stop| html_to_text(&body, stop)).await?;
        notes.extend(html_notes);
        return Ok(text);
    }
    let textual = content_type.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml", "csv"]
            .iter()
            .any(|t| content_type.contains(t));
    if textual || (content_type.is_empty() && !body[..body.len().min(8192)].contains(&0)) {
        return Ok(String::from_utf8_lossy(&body).into_owned());
    }
    Err(SkillError::tool(format!(
        "`{}` is `{content_type}` ({} bytes), not text; web_fetch returns text only",
        shown(url),
        body.len()
    )))
}

/// HTML to text, within [`MAX_HTML_BYTES`] and [`MAX_HTML_DEPTH`], stopping when `stop` is set;
/// with notes on what was left out.
fn html_to_text(body: &[u8], stop: &Stop) -> Result<(String, Vec<String>), SkillError> {
    let mut notes = Vec::new();
    let html = if body.len() > MAX_HTML_BYTES {
        notes.push(format!(
            "only the first {MAX_HTML_BYTES} bytes of the HTML were converted"
        ));
        String::from_utf8_lossy(&body[..MAX_HTML_BYTES])
    } else {
        String::from_utf8_lossy(body)
    };
    let flat = html::flatten(&html, MAX_HTML_DEPTH, stop).ok_or(SkillError::Cancelled)?;
    if flat.flattened {
        notes.push(format!(
            "the HTML was nested more than {MAX_HTML_DEPTH} elements deep; the deeper tags were dropped, their text kept"
        ));
    }
    let reader = StopReader {
        inner: flat.html.as_bytes(),
        stop,
    };
    let text = html2text::config::plain()
        .allow_width_overflow()
        .string_from_read(reader, 100)
        .map_err(|e| {
            if stop.is_set() {
                SkillError::Cancelled
            } else {
                SkillError::tool(format!("could not read the HTML: {e}"))
            }
        })?;
    Ok((text, notes))
}

/// Adds the URL to an error from the HTTP client.
trait WithUrl {
    fn context(self, url: &Url) -> SkillError;
}

impl WithUrl for SkillError {
    fn context(self, url: &Url) -> SkillError {
        match self {
            SkillError::Tool { message, source } => SkillError::Tool {
                message: format!("fetching `{}`: {message}", shown(url)),
                source,
            },
            other => other,
        }
    }
}

mod html {
    //! A linear pass that rewrites HTML before `html2text` sees it: well-formed (every element
    //! closed, in order), nested at most a given depth, without scripts, styles, comments or
    //! SVG/MathML, and with only the attributes the converter renders. The parser then never holds
    //! more than about twice that depth of open elements, so its work per tag stays bounded.
    //!
    //! Its reading of the input is an approximation of HTML's tokenizer; where they differ on odd
    //! markup only the rendering suffers, never the bound: the output is written here, tag by tag.

    use super::Stop;

    /// The rewritten HTML, and whether anything was nested too deep.
    pub(super) struct Flat {
        /// Well-formed HTML, nested at most the depth asked for.
        pub(super) html: String,
        /// Whether tags nested deeper than the limit were dropped.
        pub(super) flattened: bool,
    }

    /// How many tags are read between two looks at the stop flag.
    const CHECK_EVERY_TAGS: usize = 4096;

    /// Elements without content.
    const VOID: &[&str] = &[
        "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
        "keygen", "link", "meta", "param", "source", "track", "wbr",
    ];

    /// Elements whose content is raw text up to their end tag, and which are left out with it.
    const RAW_DROPPED: &[&str] = &["iframe", "noembed", "noframes", "script", "style", "title"];

    /// Elements whose content is raw text up to their end tag, kept as text.
    const RAW_KEPT: &[&str] = &["textarea", "xmp"];

    /// Start tags that leave SVG or MathML content (the HTML standard's list).
    const BREAKOUT: &[&str] = &[
        "b",
        "big",
        "blockquote",
        "body",
        "br",
        "center",
        "code",
        "dd",
        "div",
        "dl",
        "dt",
        "em",
        "embed",
        "font",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "hr",
        "i",
        "img",
        "li",
        "listing",
        "menu",
        "meta",
        "nobr",
        "ol",
        "p",
        "pre",
        "ruby",
        "s",
        "small",
        "span",
        "strong",
        "strike",
        "sub",
        "sup",
        "table",
        "tt",
        "u",
        "ul",
        "var",
    ];

    /// Start tags that close an open `p` first.
    const CLOSES_P: &[&str] = &[
        "address",
        "article",
        "aside",
        "blockquote",
        "center",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dd",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "li",
        "listing",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "search",
        "section",
        "summary",
        "table",
        "ul",
    ];

    /// The attributes kept: those `html2text` renders.
    const KEPT_ATTRIBUTES: &[&str] = &[
        "alt", "colspan", "href", "id", "rowspan", "src", "start", "title",
    ];

    struct Writer {
        out: String,
        /// The open elements written, outermost first.
        open: Vec<String>,
        /// How many start tags past the depth limit are open (dropped, with their end tags).
        overflow: usize,
        flattened: bool,
        max_depth: usize,
    }

    impl Writer {
        fn text(&mut self, text: &str) {
            for (i, part) in text.split('<').enumerate() {
                if i > 0 {
                    self.out.push_str("&lt;");
                }
                self.out.push_str(part);
            }
        }

        fn close_top(&mut self) {
            if let Some(name) = self.open.pop() {
                self.out.push_str("</");
                self.out.push_str(&name);
                self.out.push('>');
            }
        }

        fn top_is(&self, names: &[&str]) -> bool {
            self.open
                .last()
                .is_some_and(|top| names.contains(&top.as_str()))
        }

        fn start(&mut self, name: &str, attributes: &[(&str, &str)]) {
            let void = VOID.contains(&name);
            if !void && self.overflow > 0 {
                self.overflow += 1;
                return;
            }
            if !void {
                // What the HTML parser would close implicitly, kept in step here.
                if CLOSES_P.contains(&name) && self.top_is(&["p"]) {
                    self.close_top();
                }
                match name {
                    "li" if self.top_is(&["li"]) => self.close_top(),
                    "dd" | "dt" if self.top_is(&["dd", "dt"]) => self.close_top(),
                    "td" | "th" if self.top_is(&["td", "th"]) => self.close_top(),
                    "option" if self.top_is(&["option"]) => self.close_top(),
                    "tr" | "thead" | "tbody" | "tfoot" | "optgroup" => {
                        let nested: &[&str] = match name {
                            "tr" => &["td", "th", "tr"],
                            "optgroup" => &["option", "optgroup"],
                            _ => &["td", "th", "tr", "thead", "tbody", "tfoot"],
                        };
                        while self.top_is(nested) {
                            self.close_top();
                        }
                    }
                    _ => {}
                }
                if self.open.len() >= self.max_depth {
                    self.overflow = 1;
                    self.flattened = true;
                    return;
                }
            }
            self.out.push('<');
            self.out.push_str(name);
            for (key, value) in attributes {
                self.out.push(' ');
                self.out.push_str(key);
                self.out.push_str("=\"");
                for (i, part) in value.split('"').enumerate() {
                    if i > 0 {
                        self.out.push_str("&quot;");
                    }
                    self.out.push_str(part);
                }
                self.out.push('"');
            }
            self.out.push('>');
            if !void {
                self.open.push(name.to_owned());
            }
        }

        fn end(&mut self, name: &str) {
            if self.overflow > 0 {
                self.overflow -= 1;
                return;
            }
            if let Some(at) = self.open.iter().rposition(|open| open == name) {
                while self.open.len() > at {
                    self.close_top();
                }
            }
        }
    }

    /// A start or end tag as read.
    struct Tag<'a> {
        name: String,
        end: bool,
        self_closing: bool,
        attributes: Vec<(&'a str, &'a str)>,
    }

    /// Whether `b` is HTML whitespace.
    fn space(b: u8) -> bool {
        matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
    }

    /// Reads the tag whose name starts at `at` (after `<` or `</`); returns it and where it ends, or
    /// `None` when the input ends inside it (the HTML parser drops such a tag).
    fn read_tag(html: &str, at: usize, end: bool) -> Option<(Tag<'_>, usize)> {
        let b = html.as_bytes();
        let mut i = at;
        while i < b.len() && !space(b[i]) && b[i] != b'/' && b[i] != b'>' {
            i += 1;
        }
        let raw_name = &html[at..i];
        // A name we could not write back is read as a `span`.
        let name = if raw_name.len() <= 32
            && raw_name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-')
        {
            raw_name.to_ascii_lowercase()
        } else {
            "span".to_owned()
        };
        let mut tag = Tag {
            name,
            end,
            self_closing: false,
            attributes: Vec::new(),
        };
        loop {
            while i < b.len() && (space(b[i]) || b[i] == b'/') {
                tag.self_closing = b[i] == b'/' && b.get(i + 1) == Some(&b'>');
                i += 1;
            }
            match b.get(i)? {
                b'>' => return Some((tag, i + 1)),
                _ => {
                    let key_start = i;
                    i += 1; // The first character may be `=`.
                    while i < b.len() && !space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
                        i += 1;
                    }
                    let key = &html[key_start..i];
                    while i < b.len() && space(b[i]) {
                        i += 1;
                    }
                    let mut value = "";
                    if b.get(i) == Some(&b'=') {
                        i += 1;
                        while i < b.len() && space(b[i]) {
                            i += 1;
                        }
                        match b.get(i)? {
                            &quote @ (b'"' | b'\'') => {
                                let close = b[i + 1..].iter().position(|&c| c == quote)? + i + 1;
                                value = &html[i + 1..close];
                                i = close + 1;
                            }
                            _ => {
                                let start = i;
                                while i < b.len() && !space(b[i]) && b[i] != b'>' {
                                    i += 1;
                                }
                                value = &html[start..i];
                            }
                        }
                    }
                    if let Some(kept) = KEPT_ATTRIBUTES.iter().find(|k| k.eq_ignore_ascii_case(key))
                        && !tag.attributes.iter().any(|(k, _)| k == kept)
                    {
                        tag.attributes.push((kept, value));
                    }
                }
            }
        }
    }

    /// Where `needle` (ASCII) next occurs in `b` from `from`, ignoring ASCII case.
    fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
        let first = needle[0];
        let mut i = from;
        while i + needle.len() <= b.len() {
            let next = b[i..b.len() - needle.len() + 1]
                .iter()
                .position(|c| c.eq_ignore_ascii_case(&first))?;
            i += next;
            if b[i..i + needle.len()].eq_ignore_ascii_case(needle) {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// Where the raw text of a `name` element starting at `from` ends, and where its end tag ends.
    fn raw_text_end(b: &[u8], from: usize, name: &str) -> (usize, usize) {
        let mut at = from;
        let needle = format!("</{name}");
        while let Some(found) = find(b, at, needle.as_bytes()) {
            let after = found + needle.len();
            match b.get(after) {
                None => return (found, b.len()),
                Some(&c) if space(c) || c == b'/' || c == b'>' => {
                    let close = b[after..]
                        .iter()
                        .position(|&c| c == b'>')
                        .map_or(b.len(), |p| after + p + 1);
                    return (found, close);
                }
                Some(_) => at = after,
            }
        }
        (b.len(), b.len())
    }

    /// Rewrites `html` (see the module docs), in time linear in its length; `None` when `stop` was
    /// set meanwhile.
    pub(super) fn flatten(html: &str, max_depth: usize, stop: &Stop) -> Option<Flat> {
        let b = html.as_bytes();
        let mut w = Writer {
            out: String::with_capacity(html.len().min(1 << 20)),
            open: Vec::new(),
            overflow: 0,
            flattened: false,
            max_depth: max_depth.max(1),
        };
        // Inside SVG or MathML: how many of its elements are open (their content is left out).
        let mut foreign = 0usize;
        let mut tags = 0usize;
        let mut i = 0;
        while i < b.len() {
            tags += 1;
            if tags.is_multiple_of(CHECK_EVERY_TAGS) && stop.is_set() {
                return None;
            }
            let lt = b[i..]
                .iter()
                .position(|&c| c == b'<')
                .map_or(b.len(), |p| i + p);
            if foreign == 0 {
                w.text(&html[i..lt]);
            }
            i = lt;
            if i >= b.len() {
                break;
            }
            let after = |n: usize, what: &[u8]| -> usize {
                find(b, i + n, what).map_or(b.len(), |p| p + what.len())
            };
            let (tag, next) = match b.get(i + 1) {
                Some(b'!') if b[i..].starts_with(b"<!--") => {
                    i = if b[i + 4..].starts_with(b">") {
                        i + 5
                    } else if b[i + 4..].starts_with(b"->") {
                        i + 6
                    } else {
                        after(4, b"-->")
                    };
                    continue;
                }
                Some(b'!' | b'?') => {
                    i = after(2, b">");
                    continue;
                }
                Some(b'/') => match b.get(i + 2) {
                    Some(c) if c.is_ascii_alphabetic() => match read_tag(html, i + 2, true) {
                        Some(found) => found,
                        None => break,
                    },
                    Some(b'>') => {
                        i += 3;
                        continue;
                    }
                    Some(_) => {
                        i = after(2, b">");
                        continue;
                    }
                    None => {
                        if foreign == 0 {
                            w.text("</");
                        }
                        break;
                    }
                },
                Some(c) if c.is_ascii_alphabetic() => match read_tag(html, i + 1, false) {
                    Some(found) => found,
                    None => break,
                },
                _ => {
                    if foreign == 0 {
                        w.text("<");
                    }
                    i += 1;
                    continue;
                }
            };
            i = next;
            let name = tag.name.as_str();
            if foreign > 0 {
                if tag.end {
                    foreign -= 1;
                    continue;
                }
                if !BREAKOUT.contains(&name) {
                    if !tag.self_closing {
                        foreign += 1;
                    }
                    continue;
                }
                foreign = 0;
            }
            if matches!(name, "html" | "head" | "body") {
                continue;
            }
            if tag.end {
                w.end(name);
                continue;
            }
            if matches!(name, "svg" | "math") {
                if !tag.self_closing {
                    foreign = 1;
                }
                continue;
            }
            if name == "plaintext" {
                w.text(&html[i..]);
                break;
            }
            if RAW_DROPPED.contains(&name) || RAW_KEPT.contains(&name) {
                let (text_end, close) = raw_text_end(b, i, name);
                if RAW_KEPT.contains(&name) {
                    w.text(&html[i..text_end]);
                }
                i = close;
                continue;
            }
            w.start(name, &tag.attributes);
        }
        while !w.open.is_empty() {
            w.close_top();
        }
        Some(Flat {
            html: w.out,
            flattened: w.flattened,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_public_addresses_are_classified() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(classify(ip).is_some(), "{ip} should not be public");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(classify(ip), None, "{ip} is public");
        }
    }

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

    fn flat(html: &str, depth: usize) -> String {
        let flat = html::flatten(html, depth, &Stop::never()).unwrap();
        flat.html
    }

    #[test]
    fn flattening_keeps_text_and_bounds_depth() {
        let deep = flat(&format!("{}x", "<div>".repeat(10)), 3);
        assert_eq!(deep, "<div><div><div>x</div></div></div>");
        assert!(
            html::flatten(&"<b>".repeat(4), 3, &Stop::never())
                .unwrap()
                .flattened
        );
        assert!(
            !html::flatten(&"<b>".repeat(3), 3, &Stop::never())
                .unwrap()
                .flattened
        );
        assert_eq!(
            flat("<ul><li>a<li>b</ul><p>c<p>d", 8),
            "<ul><li>a</li><li>b</li></ul><p>c</p><p>d</p>"
        );
        assert_eq!(
            flat(
                "<html><head><title>T</title><style>p{}</style></head><body>a < b</body></html>",
                8
            ),
            "a &lt; b"
        );
        assert_eq!(
            flat("<p>a<script>if (a<b) {}</script><!-- <div> -->b</p>", 8),
            "<p>ab</p>"
        );
        assert_eq!(
            flat(r#"<a title='say "hi"' href=/x onclick="a>b">t</a>"#, 8),
            r#"<a title="say &quot;hi&quot;" href="/x">t</a>"#
        );
        assert_eq!(
            flat("<p>a<svg><path/><text>t</text></svg>b</p>", 8),
            "<p>ab</p>"
        );
        assert_eq!(flat("<svg><g><div>x</div>", 8), "<div>x</div>");
        assert_eq!(
            flat("<br><img src=a alt=b><hr/>", 1),
            r#"<br><img src="a" alt="b"><hr>"#
        );
        assert_eq!(flat("<textarea><b>x</b></textarea>", 8), "&lt;b>x&lt;/b>");
    }

    proptest::proptest! {
        #[test]
        fn flattened_html_is_well_formed_and_shallow(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "<div>", "</div>", "<b>", "</b>", "<p>", "</p>", "<li>", "<ul>", "</ul>",
                    "<td>", "<tr>", "<table>", "</table>", "<br>", "<br/>", "<div/>", "<svg>",
                    "</svg>", "<path/>", "<script>", "</script>", "<!--", "-->", "<", ">",
                    "text", "<a href='x>y'>", "</a>", "<x-y>", "</x-y>", "<textarea>",
                    "</textarea>", "<?x>", "</>", "&amp;", "<B>", "</B >", "<!doctype html>",
                ]),
                0..80,
            ),
            depth in 1usize..6,
        ) {
            let out = flat(&parts.concat(), depth);
            // Every tag written is `<name ...>` or `</name>`; check nesting with a stack.
            let mut open: Vec<String> = Vec::new();
            let mut rest = out.as_str();
            while let Some(at) = rest.find('<') {
                let end = rest[at..].find('>').unwrap() + at;
                let tag = &rest[at + 1..end];
                rest = &rest[end + 1..];
                if let Some(name) = tag.strip_prefix('/') {
                    let top = open.pop();
                    proptest::prop_assert_eq!(top.as_deref(), Some(name));
                } else {
                    let name = tag.split(' ').next().unwrap();
                    if !["br", "img", "hr"].contains(&name) {
                        open.push(name.to_owned());
                        proptest::prop_assert!(open.len() <= depth, "{out}");
                    }
                }
            }
            proptest::prop_assert!(open.is_empty(), "{out}");
        }
    }

    #[test]
    fn loopback_is_allowed_only_by_its_own_switch() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let metadata: IpAddr = "169.254.169.254".parse().unwrap();
        let config = WebConfig {
            allow_loopback: true,
            ..WebConfig::default()
        };
        assert_eq!(check_address(loopback, &config), Ok(()));
        assert_eq!(check_address(metadata, &config), Err("link-local"));
        assert_eq!(
            check_address(loopback, &WebConfig::default()),
            Err("loopback")
        );
    }
}
