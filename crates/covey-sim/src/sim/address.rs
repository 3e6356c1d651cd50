//! The lab's address plan: node `n` is `[fd00::n+1]`, its first endpoint listens on the CoAP
//! port and every fresh endpoint of the node (a restarted client) binds a new ephemeral port,
//! as a new client process would. The node is found from the IP alone, in O(1).

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use crate::media::NodeId;

/// The CoAP default port, used by every node's first endpoint.
pub const COAP_PORT: u16 = 5683;

/// First port of the ephemeral range (RFC 6335) given to fresh endpoints.
const EPHEMERAL_BASE: u16 = 49152;

/// The IP address of node `node`.
pub fn node_ip(node: NodeId) -> Ipv6Addr {
    let n = node as u64 + 1;
    Ipv6Addr::new(
        0xfd00,
        0,
        0,
        0,
        (n >> 48) as u16,
        (n >> 32) as u16,
        (n >> 16) as u16,
        n as u16,
    )
}

/// The socket address of node `node`'s first endpoint.
pub fn node_addr(node: NodeId) -> SocketAddr {
    SocketAddr::new(IpAddr::V6(node_ip(node)), COAP_PORT)
}

/// The socket address of the `incarnation`-th endpoint of `node` (0 is the first).
pub fn endpoint_addr(node: NodeId, incarnation: u32) -> SocketAddr {
    let port = match incarnation {
        0 => COAP_PORT,
        k => EPHEMERAL_BASE.wrapping_add((k % 16384) as u16),
    };
    SocketAddr::new(IpAddr::V6(node_ip(node)), port)
}

/// The node owning `ip`, if it is in the lab's plan.
pub fn node_of(ip: IpAddr) -> Option<NodeId> {
    let IpAddr::V6(v6) = ip else { return None };
    let s = v6.segments();
    if s[..4] != [0xfd00, 0, 0, 0] {
        return None;
    }
    let n = s[4..]
        .iter()
        .fold(0u64, |acc, &seg| (acc << 16) | u64::from(seg));
    n.checked_sub(1).and_then(|n| usize::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_map_back_to_their_node() {
        for node in [0, 1, 999, 70_000] {
            assert_eq!(node_of(node_addr(node).ip()), Some(node));
            assert_eq!(node_of(endpoint_addr(node, 3).ip()), Some(node));
        }
        assert_ne!(endpoint_addr(4, 0), endpoint_addr(4, 1));
        assert_eq!(node_of("2001:db8::1".parse().unwrap()), None);
        assert_eq!(node_of("fd00::".parse().unwrap()), None);
        assert_eq!(node_of("10.0.0.1".parse().unwrap()), None);
    }
}
