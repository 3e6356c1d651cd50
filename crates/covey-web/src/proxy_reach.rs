//! Which CoAP destinations the proxy contacts: any unicast address, however named, but a
//! multicast group only when the gateway was started with `--http-proxy-multicast`, and
//! never the unspecified address (0.0.0.0, `[::]`) or IPv4's broadcast address, which name
//! no one host. IPv4-mapped IPv6 addresses are judged as the IPv4 address they map.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::http::StatusCode;

/// Why the proxy does not send to `remote`, as an HTTP status and one line; `None` when it
/// does. `multicast` allows group addresses.
pub fn refusal(remote: SocketAddr, multicast: bool) -> Option<(StatusCode, String)> {
    let ip = remote.ip().to_canonical();
    if ip.is_unspecified() || ip == IpAddr::V4(Ipv4Addr::BROADCAST) {
        return Some((
            StatusCode::BAD_REQUEST,
            format!("{ip} names no host to send to: give the CoAP server's own address"),
        ));
    }
    if ip.is_multicast() && !multicast {
        return Some((
            StatusCode::FORBIDDEN,
            format!(
                "{ip} is a multicast group: this proxy sends to groups only when the gateway \
                 runs with --http-proxy-multicast"
            ),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(remote: &str, multicast: bool) -> Option<u16> {
        refusal(remote.parse().unwrap(), multicast).map(|(s, _)| s.as_u16())
    }

    #[test]
    fn unicast_hosts_are_reached() {
        for remote in [
            "127.0.0.1:5683",
            "[::1]:5683",
            "[2001:db8::1]:1",
            "192.0.2.1:9",
        ] {
            assert_eq!(status(remote, false), None, "{remote}");
        }
    }

    #[test]
    fn addresses_that_name_no_host_are_refused() {
        for remote in [
            "0.0.0.0:5683",
            "[::]:5683",
            "[::ffff:0.0.0.0]:5683",
            "255.255.255.255:5683",
        ] {
            assert_eq!(status(remote, true), Some(400), "{remote}");
        }
    }

    #[test]
    fn groups_need_the_flag() {
        for remote in [
            "224.0.1.187:5683",
            "[ff02::fd]:5683",
            "[::ffff:224.0.1.187]:5683",
        ] {
            assert_eq!(status(remote, false), Some(403), "{remote}");
            assert_eq!(status(remote, true), None, "{remote}");
        }
        let (_, why) = refusal("[ff02::fd]:5683".parse().unwrap(), false).unwrap();
        assert!(why.contains("--http-proxy-multicast"), "{why}");
    }
}
