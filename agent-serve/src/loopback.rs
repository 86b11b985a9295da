//! Whether an address reaches only this machine: what decides that the server's own
//! `http://localhost:PORT` origins are allowed (see [`crate::origin`]), and, in agent-mcp, that
//! a server without a token may serve on it.

use std::net::IpAddr;

/// Whether `ip` reaches only this machine: `127.0.0.0/8`, `::1`, or `::ffff:127.x.y.z`.
///
/// ```
/// assert!(agent_serve::is_loopback("::ffff:127.0.0.1".parse().unwrap()));
/// assert!(!agent_serve::is_loopback("0.0.0.0".parse().unwrap()));
/// ```
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_told_from_the_rest() {
        for ip in ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "0.0.0.0",
            "::",
            "10.0.0.1",
            "192.168.1.2",
            "::ffff:10.0.0.1",
            "fe80::1",
        ] {
            assert!(!is_loopback(ip.parse().unwrap()), "{ip}");
        }
    }
}
