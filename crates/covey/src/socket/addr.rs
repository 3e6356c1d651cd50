//! Addresses between dual-stack sockets (IPv4 as `::ffff:a.b.c.d`) and the engine (plain IPv4),
//! so that a peer has one address whichever socket it came through.

use std::net::{IpAddr, SocketAddr, SocketAddrV6};

/// `ip` with an IPv4-mapped IPv6 address turned into IPv4.
pub(crate) fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// `addr` with an IPv4-mapped IPv6 address turned into IPv4; other IPv6 addresses keep
/// their scope id, which link-local peers need.
pub(crate) fn canonical_socket_addr(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), v6.port()),
            None => addr,
        },
        SocketAddr::V4(_) => addr,
    }
}

/// The destination as a socket of the given family needs it.
pub(crate) fn for_socket(destination: SocketAddr, ipv6_socket: bool) -> SocketAddr {
    match destination {
        SocketAddr::V4(v4) if ipv6_socket => {
            SocketAddr::V6(SocketAddrV6::new(v4.ip().to_ipv6_mapped(), v4.port(), 0, 0))
        }
        SocketAddr::V6(v6) if !ipv6_socket => canonical_socket_addr(SocketAddr::V6(v6)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_round_trips() {
        let v4: SocketAddr = "127.0.0.1:5683".parse().unwrap();
        let mapped = for_socket(v4, true);
        assert_eq!(
            mapped,
            "[::ffff:127.0.0.1]:5683".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(canonical_socket_addr(mapped), v4);
        let v6: SocketAddr = "[::1]:5683".parse().unwrap();
        assert_eq!(canonical_socket_addr(v6), v6);
        assert_eq!(for_socket(v6, true), v6);
        let scoped = SocketAddr::V6(SocketAddrV6::new("fe80::2".parse().unwrap(), 5683, 0, 3));
        assert_eq!(canonical_socket_addr(scoped), scoped, "scope id kept");
    }
}
