//! The local sockets the EM sends to members from: a secured one (DTLS, the host's own
//! credentials) for `coaps://` members, a plain one for `coap://` members, as the host has them.

use crate::error_report::Reason;
use crate::member::Member;
use crate::validation::ValidationError;
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

    /// Checks that every member can be reached in its scheme: a `coaps://` one over DTLS
    /// (the host has a secured socket of its family), a `coap://` one in the clear (the host
    /// does not speak coaps only); and that a multicast entity (DTLS has no multicast) has
    /// no `coaps://` member.
    pub fn check(&self, members: &[Member], multicast: bool) -> Result<(), ValidationError> {
        let refuse = |message| Err(ValidationError::new("er", Reason::Scheme, message));
        if let Some(m) = members.iter().find(|m| m.secure && multicast) {
            return refuse(format!(
                "member \"{}\": a multicast entity's members must be coap:// (DTLS has no multicast)",
                m.uri
            ));
        }
        for m in members {
            let f = family(m.addr);
            if m.secure && self.secure[f].is_none() {
                return refuse(format!(
                    "member \"{}\": this EM has no DTLS credentials (no coaps socket for its address family) to reach a coaps:// member",
                    m.uri
                ));
            }
            if !m.secure && self.secure[f].is_some() && self.plain[f].is_none() {
                return refuse(format!(
                    "member \"{}\": this EM listens in coaps only (no plain socket for its address family) and cannot reach a coap:// member; add a plain socket (covey gateway --bind-plain) or name the member coaps://",
                    m.uri
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(uris: &[&str]) -> Vec<Member> {
        uris.iter().map(|u| Member::parse(u).unwrap()).collect()
    }

    fn host(secure: Option<&str>, plain: Option<&str>) -> Sources {
        let at = |a: Option<&str>| a.map(|a| a.parse().unwrap());
        Sources {
            secure: [at(secure), None],
            plain: [at(plain), None],
        }
    }

    #[test]
    fn each_scheme_leaves_from_its_own_socket() {
        let mixed = host(Some("127.0.0.1:5684"), Some("127.0.0.1:5683"));
        let both = members(&["coap://127.0.0.1:7000/s", "coaps://127.0.0.1:7001/s"]);
        assert_eq!(mixed.check(&both, false), Ok(()));
        assert_eq!(
            mixed.source(both[1].addr, true),
            Some("127.0.0.1:5684".parse().unwrap())
        );
        assert_eq!(
            mixed.source(both[0].addr, false),
            Some("127.0.0.1:5683".parse().unwrap())
        );
        // No IPv6 socket of either kind: the engine chooses, and coaps cannot be reached.
        let v6 = members(&["coaps://[::1]:7001/s"]);
        assert!(mixed
            .check(&v6, false)
            .unwrap_err()
            .message
            .contains("no DTLS credentials"));
    }

    #[test]
    fn a_member_in_a_scheme_the_host_lacks_is_refused() {
        let clear = host(None, None);
        let coap = members(&["coap://127.0.0.1:7000/s"]);
        let coaps = members(&["coaps://127.0.0.1:7001/s"]);
        assert_eq!(clear.check(&coap, false), Ok(()));
        assert!(clear
            .check(&coaps, false)
            .unwrap_err()
            .message
            .contains("no DTLS credentials"));
        let secured_only = host(Some("127.0.0.1:5684"), None);
        assert_eq!(secured_only.check(&coaps, false), Ok(()));
        let e = secured_only.check(&coap, false).unwrap_err().message;
        assert!(
            e.contains("coaps only") && e.contains("--bind-plain"),
            "{e}"
        );
        let mixed = host(Some("127.0.0.1:5684"), Some("127.0.0.1:5683"));
        let e = mixed.check(&coaps, true).unwrap_err().message;
        assert!(
            e.contains("multicast entity's members must be coap://"),
            "{e}"
        );
    }
}
