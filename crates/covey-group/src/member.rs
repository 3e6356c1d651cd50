//! A member resource of an entity: its `coap://` or `coaps://` URI and where and how to reach it.

use crate::error_report::Reason;
use covey_core::uri::{Host, Scheme, Uri};
use covey_core::OptionNumber;
use std::net::{IpAddr, SocketAddr};

/// A member resource, parsed from its URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The URI as the client wrote it.
    pub uri: String,
    /// The member's socket address.
    pub addr: SocketAddr,
    /// Percent-decoded path segments.
    pub path: Vec<String>,
    /// Percent-decoded query arguments.
    pub query: Vec<String>,
    /// A `coaps://` member, reached over DTLS with the EM's own credentials.
    pub secure: bool,
}

/// Why a member URI is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberUriError {
    /// Not a well-formed CoAP URI.
    #[error("not a valid CoAP URI ({0})")]
    Syntax(String),
    /// A host name: the sans-IO EM does not resolve names.
    #[error("the host must be an IP address (the EM does not resolve host names)")]
    HostName,
    /// A group address where a member resource is expected.
    #[error("a multicast address cannot be a member (use ect=multicast instead)")]
    Multicast,
    /// The unspecified address or port 0.
    #[error("the address {0} cannot be reached")]
    Unreachable(SocketAddr),
}

impl MemberUriError {
    /// Why, as data.
    pub fn reason(&self) -> Reason {
        match self {
            MemberUriError::Syntax(_) => Reason::NotAUri,
            MemberUriError::HostName => Reason::HostName,
            MemberUriError::Multicast => Reason::MulticastAddress,
            MemberUriError::Unreachable(_) => Reason::Unreachable,
        }
    }
}

impl Member {
    /// Parses a `coap://` or `coaps://` URI (default port 5684) with an IP-literal host.
    pub fn parse(uri: &str) -> Result<Member, MemberUriError> {
        let parsed = Uri::parse(uri).map_err(|e| MemberUriError::Syntax(e.to_string()))?;
        let secure = parsed.scheme() == Scheme::Coaps;
        let (Host::Ip(ip), Some(addr)) = (parsed.host(), parsed.socket_addr()) else {
            return Err(MemberUriError::HostName);
        };
        if ip.is_multicast() {
            return Err(MemberUriError::Multicast);
        }
        if ip.is_unspecified() || addr.port() == 0 {
            return Err(MemberUriError::Unreachable(addr));
        }
        let mut path = Vec::new();
        let mut query = Vec::new();
        for (number, value) in parsed.options(Some(addr)) {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            if number == OptionNumber::URI_PATH {
                path.push(text);
            } else if number == OptionNumber::URI_QUERY {
                query.push(text);
            }
        }
        Ok(Member {
            uri: uri.to_string(),
            addr,
            path,
            query,
            secure,
        })
    }

    /// True when both name the same resource (same address, path and query).
    pub fn same_resource(&self, other: &Member) -> bool {
        same_ip(self.addr.ip(), other.addr.ip())
            && self.addr.port() == other.addr.port()
            && self.path == other.path
            && self.query == other.query
    }

    /// True when both reach the same entity or resource whatever their queries: a query
    /// only changes how an entity is used (`?eo=lst`), so cycles are found on this.
    pub fn same_entity(&self, other: &Member) -> bool {
        same_ip(self.addr.ip(), other.addr.ip())
            && self.addr.port() == other.addr.port()
            && self.path == other.path
    }

    /// The entity name when the URI looks like an entity of an EM (`/e/<name>`, with or
    /// without use-time overrides in its query).
    pub fn entity_name(&self) -> Option<&str> {
        match self.path.as_slice() {
            [e, name] if e == "e" && !name.is_empty() => Some(name),
            _ => None,
        }
    }

    /// The URI of this member's profile, when it is an entity (`<uri>/profile`).
    pub fn profile_uri(&self) -> String {
        format!("{}/profile", self.uri.trim_end_matches('/'))
    }

    /// Uri-Path and Uri-Query options of a request to this member.
    pub fn options(&self) -> Vec<(OptionNumber, Vec<u8>)> {
        self.path
            .iter()
            .map(|s| (OptionNumber::URI_PATH, s.as_bytes().to_vec()))
            .chain(
                self.query
                    .iter()
                    .map(|q| (OptionNumber::URI_QUERY, q.as_bytes().to_vec())),
            )
            .collect()
    }

    /// The path as written in a URI, `/s/t`.
    pub fn path_text(&self) -> String {
        let mut out = String::new();
        for s in &self.path {
            out.push('/');
            out.push_str(s);
        }
        out
    }
}

/// Compares addresses treating IPv4-mapped IPv6 and IPv4 as equal.
fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    a.to_canonical() == b.to_canonical()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ip_literal_members() {
        let m = Member::parse("coap://[2001:db8::10]:5684/s/t%20x?unit=c").unwrap();
        assert_eq!(m.addr, "[2001:db8::10]:5684".parse().unwrap());
        assert_eq!(m.path, ["s", "t x"]);
        assert_eq!(m.query, ["unit=c"]);
        assert_eq!(m.entity_name(), None);
        let e = Member::parse("coap://192.0.2.1/e/room1").unwrap();
        assert_eq!(e.entity_name(), Some("room1"));
        assert_eq!(e.profile_uri(), "coap://192.0.2.1/e/room1/profile");
    }

    #[test]
    fn coaps_members_default_to_port_5684() {
        let m = Member::parse("coaps://[::1]/s").unwrap();
        assert!(m.secure);
        assert_eq!(m.addr, "[::1]:5684".parse().unwrap());
        let plain = Member::parse("coap://[::1]/s").unwrap();
        assert!(!plain.secure);
        assert_eq!(plain.addr, "[::1]:5683".parse().unwrap());
    }

    #[test]
    fn rejects_unusable_uris() {
        assert_eq!(
            Member::parse("coap://sensor.local/s"),
            Err(MemberUriError::HostName)
        );
        assert_eq!(
            Member::parse("coap://[ff1e::89:1]/s"),
            Err(MemberUriError::Multicast)
        );
        assert!(matches!(
            Member::parse("http://[::1]/s"),
            Err(MemberUriError::Syntax(_))
        ));
        assert!(matches!(
            Member::parse("coap://[::]/s"),
            Err(MemberUriError::Unreachable(_))
        ));
    }

    #[test]
    fn same_resource_ignores_spelling() {
        let a = Member::parse("coap://[2001:db8::1]/s/t").unwrap();
        let b = Member::parse("coap://[2001:DB8:0::1]:5683/s/%74").unwrap();
        assert!(a.same_resource(&b));
        let c = Member::parse("coap://[2001:db8::1]/s/u").unwrap();
        assert!(!a.same_resource(&c));
    }

    #[test]
    fn a_query_does_not_hide_an_entity() {
        let plain = Member::parse("coap://[2001:db8::1]/e/a").unwrap();
        let listed = Member::parse("coap://[2001:db8::1]:5683/e/a?eo=lst").unwrap();
        assert_eq!(listed.entity_name(), Some("a"));
        assert!(listed.same_entity(&plain));
        assert!(!listed.same_resource(&plain));
        let other = Member::parse("coap://[2001:db8::1]/e/b?eo=lst").unwrap();
        assert!(!listed.same_entity(&other));
    }
}
