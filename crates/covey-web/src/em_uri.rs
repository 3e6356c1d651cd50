//! Where the console reaches the gateway's own Entity Manager over CoAP.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use covey_core::uri::SocketAuthority;

/// `scheme://host:port` of the Entity Manager bound at `bound` (its first address), a
/// wildcard address replaced by loopback of the same family; `scheme://` without one.
pub fn em_uri(scheme: &str, bound: Option<SocketAddr>) -> String {
    let authority = bound
        .map(|a| SocketAuthority(reachable(a)).to_string())
        .unwrap_or_default();
    format!("{scheme}://{authority}")
}

/// `addr` with a wildcard IP replaced by loopback of the same family.
fn reachable(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), addr.port())
        }
        _ => addr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_address_is_reached_on_loopback() {
        let addr = |s: &str| Some(s.parse::<SocketAddr>().unwrap());
        assert_eq!(
            em_uri("coap", addr("0.0.0.0:5690")),
            "coap://127.0.0.1:5690"
        );
        assert_eq!(em_uri("coaps", addr("[::]:5694")), "coaps://[::1]:5694");
        assert_eq!(
            em_uri("coap", addr("192.0.2.1:5690")),
            "coap://192.0.2.1:5690"
        );
        assert_eq!(em_uri("coap", None), "coap://");
    }
}
