//! The local sockets the EM sends to members from: a secured one (DTLS, the host's own
//! credentials) for `coaps://` members, a plain one for `coap://` members, as the host has them.

use crate::member::Member;
use covey_proto::AppContext;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

/// The host's sockets per address family (IPv4, IPv6), refreshed on every callback.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Sources {
    secure: [Option<SocketAddr>; 2],
    plain: [Option<SocketAddr>; 2],
}

/// A destination of each family, to ask the host which socket reaches it.
const PROBES: [SocketAddr; 2] = [
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
    SocketAddr::new(std::net::IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
];

fn family(remote: SocketAddr) -> usize {
    match remote {
        SocketAddr::V4(_) => 0,
        SocketAddr::V6(a) if a.ip().to_ipv4_mapped().is_some() => 0,
        SocketAddr::V6(_) => 1,
    }
}

impl Sources {
    /// What the host of `cx` offers.
    pub fn of(cx: &AppContext<'_>) -> Sources {
        Sources {
            secure: PROBES.map(|p| cx.secure_socket(p)),
            plain: PROBES.map(|p| cx.plain_socket(p)),
        }
    }

    /// The socket a request to `remote` leaves from: the secured one for a `coaps`
    /// member, else a plain one (`None`: the engine's choice, on hosts without DTLS).
    pub fn source(&self, remote: SocketAddr, secure: bool) -> Option<SocketAddr> {
        match secure {
            true => self.secure[family(remote)],
            false => self.plain[family(remote)],
        }
    }

    /// Checks that every `coaps://` member can be reached over DTLS, and that a multicast
    /// entity (DTLS has no multicast) has none.
    pub fn check(&self, members: &[Member], multicast: bool) -> Result<(), String> {
        let Some(m) = members.iter().find(|m| m.secure) else {
            return Ok(());
        };
        if multicast {
            return Err(format!(
                "member \"{}\": a multicast entity's members must be coap:// (DTLS has no multicast)",
                m.uri
            ));
        }
        match members
            .iter()
            .find(|m| m.secure && self.source(m.addr, true).is_none())
        {
            Some(m) => Err(format!(
                "member \"{}\": this EM has no DTLS credentials (no coaps socket for its address family) to reach a coaps:// member",
                m.uri
            )),
            None => Ok(()),
        }
    }
}
