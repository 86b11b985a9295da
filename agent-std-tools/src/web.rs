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

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use agent_core::{SkillContext, SkillError, skill};
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, LOCATION};

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
    let parsed = Url::parse(url.trim())
        .map_err(|e| SkillError::bad_args("url", format!("`{url}` is not a URL: {e}")))?;
    tokio::time::timeout(config.timeout, fetch(parsed, &config))
        .await
        .map_err(|_| SkillError::Timeout(config.timeout))?
}

async fn fetch(mut url: Url, config: &WebConfig) -> Result<String, SkillError> {
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
                    "`{url}` redirected more than {} times",
                    config.max_redirects
                )));
            }
            let location = location.to_str().unwrap_or_default();
            url = url.join(location).map_err(|e| {
                SkillError::tool(format!("`{url}` redirected to a bad URL `{location}`: {e}"))
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
    let text = to_text(&body, &content_type, &url)?;
    let mut text = text.trim().to_owned();
    let mut notes = Vec::new();
    if cut_body {
        notes.push(format!(
            "only the first {} bytes of the body were read",
            config.max_bytes
        ));
    }
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
            "`{url}` answered HTTP {status}\n\n{excerpt}"
        )));
    }
    let mut out = format!("URL: {url}\nContent-Type: {content_type}\n\n{text}");
    if !notes.is_empty() {
        out.push_str(&format!("\n\n[{}]", notes.join("; ")));
    }
    Ok(out)
}

/// A client that can only reach the checked addresses of `url`'s host.
async fn client_for(url: &Url, config: &WebConfig) -> Result<reqwest::Client, SkillError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(SkillError::Safety(format!(
            "`{url}`: only http and https URLs can be fetched"
        )));
    }
    let Some(host) = url.host_str() else {
        return Err(SkillError::bad_args("url", format!("`{url}` has no host")));
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| SkillError::tool(format!("cannot resolve the host of `{url}`: {e}")))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(SkillError::tool(format!(
            "the host of `{url}` has no addresses"
        )));
    }
    for addr in &addrs {
        check_address(addr.ip(), config).map_err(|kind| {
            SkillError::Safety(format!(
                "`{url}` leads to {} ({kind}); only public addresses can be fetched",
                addr.ip()
            ))
        })?;
    }
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(config.user_agent.clone());
    if host.parse::<IpAddr>().is_err() {
        builder = builder.resolve_to_addrs(host, &addrs);
    }
    builder.build().map_err(SkillError::from_error)
}

/// Whether `ip` may be fetched under `config`; the error names the kind of address.
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

fn to_text(body: &[u8], content_type: &str, url: &Url) -> Result<String, SkillError> {
    let sniff = &body[..body.len().min(1024)];
    let looks_html = {
        let start = String::from_utf8_lossy(sniff)
            .trim_start()
            .to_ascii_lowercase();
        start.starts_with("<!doctype html") || start.starts_with("<html")
    };
    if content_type.contains("html") || (content_type.is_empty() && looks_html) {
        return html2text::from_read(body, 100)
            .map_err(|e| SkillError::tool(format!("could not read the HTML of `{url}`: {e}")));
    }
    let textual = content_type.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml", "csv"]
            .iter()
            .any(|t| content_type.contains(t));
    if textual || (content_type.is_empty() && !body[..body.len().min(8192)].contains(&0)) {
        return Ok(String::from_utf8_lossy(body).into_owned());
    }
    Err(SkillError::tool(format!(
        "`{url}` is `{content_type}` ({} bytes), not text; web_fetch returns text only",
        body.len()
    )))
}

/// Adds the URL to an error from the HTTP client.
trait WithUrl {
    fn context(self, url: &Url) -> SkillError;
}

impl WithUrl for SkillError {
    fn context(self, url: &Url) -> SkillError {
        match self {
            SkillError::Tool { message, source } => SkillError::Tool {
                message: format!("fetching `{url}`: {message}"),
                source,
            },
            other => other,
        }
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
