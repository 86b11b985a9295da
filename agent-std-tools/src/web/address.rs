//! Where `web_fetch` may go: the URL's host resolved once, every address checked (only public
//! ones unless [`WebConfig`] allows more), and a client that connects to exactly those addresses.

use std::net::{IpAddr, SocketAddr};

use agent_core::SkillError;
use reqwest::Url;

use super::{WebConfig, shown};

/// A client that can only reach the checked addresses of `url`'s host.
pub(super) async fn client_for(
    url: &Url,
    config: &WebConfig,
) -> Result<reqwest::Client, SkillError> {
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
    let tls = agent_tls::tls_config().map_err(SkillError::tool)?;
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

/// Whether `ip` may be fetched under `config`; the error names the kind of address.
fn check_address(ip: IpAddr, config: &WebConfig) -> Result<(), &'static str> {
    match classify(ip) {
        None => Ok(()),
        Some("loopback") if config.allow_loopback => Ok(()),
        Some(kind) if kind != "loopback" && config.allow_private => Ok(()),
        Some(kind) => Err(kind),
    }
}

/// The kind of a non-public address, or `None` for a public one (the classification media URLs
/// are checked with too).
fn classify(ip: IpAddr) -> Option<&'static str> {
    agent_core::content::check::address_kind(ip)
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
