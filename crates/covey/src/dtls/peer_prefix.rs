//! The network a peer's address belongs to (IPv4 /24, IPv6 /64): handshake slots are shared
//! by it rather than by address, since one host or site easily holds many addresses of its
//! prefix.

use std::net::IpAddr;

/// An IPv4 /24 or an IPv6 /64; IPv4-mapped IPv6 addresses count as IPv4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PeerPrefix {
    /// The first three octets of an IPv4 address.
    V4([u8; 3]),
    /// The first eight octets of an IPv6 address.
    V6([u8; 8]),
}

impl PeerPrefix {
    /// The prefix `ip` belongs to.
    pub fn of(ip: IpAddr) -> PeerPrefix {
        match ip.to_canonical() {
            IpAddr::V4(v4) => {
                let [a, b, c, _] = v4.octets();
                PeerPrefix::V4([a, b, c])
            }
            IpAddr::V6(v6) => {
                let o = v6.octets();
                PeerPrefix::V6([o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(text: &str) -> PeerPrefix {
        PeerPrefix::of(text.parse().unwrap())
    }

    #[test]
    fn addresses_share_their_slash_24_or_slash_64() {
        assert_eq!(prefix("192.0.2.1"), prefix("192.0.2.254"));
        assert_ne!(prefix("192.0.2.1"), prefix("192.0.3.1"));
        assert_eq!(prefix("2001:db8:1:2::1"), prefix("2001:db8:1:2:ffff::9"));
        assert_ne!(prefix("2001:db8:1:2::1"), prefix("2001:db8:1:3::1"));
        assert_eq!(prefix("::ffff:192.0.2.7"), prefix("192.0.2.8"));
    }
}
