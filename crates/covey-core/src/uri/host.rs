//! The authority of a CoAP URI: host and port (RFC 3986 §3.2.2–3.2.3), with IPv6 zone ids
//! (RFC 6874). CoAP URIs have no user information (RFC 7252 §6.1).

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::error::{UriError, UriErrorKind};
use super::percent::{check_chars, decode_text, is_reg_name_char, is_unreserved};
use super::MAX_VALUE_LEN;

/// The host of a CoAP URI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Host<'a> {
    /// An IPv4 address or bracketed IPv6 literal; never sent as Uri-Host.
    Ip(IpAddr),
    /// A registered name as written (may hold percent-encodings and upper case).
    Name(&'a str),
}

/// The parts of an authority.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Authority<'a> {
    pub host: Host<'a>,
    pub zone: Option<&'a str>,
    pub port: Option<u16>,
}

/// Parses an authority that starts at byte `base` of the URI.
pub(crate) fn parse_authority(authority: &str, base: usize) -> Result<Authority<'_>, UriError> {
    let err = |kind, at: usize| UriError::new(kind, base + at);
    let bytes = authority.as_bytes();
    if let Some(at) = bytes.iter().position(|&b| b == b'@') {
        return Err(err(UriErrorKind::UserInfo, at));
    }
    let (host, zone, host_end) = if bytes.first() == Some(&b'[') {
        let close = bytes
            .iter()
            .position(|&b| b == b']')
            .ok_or(err(UriErrorKind::InvalidHost, 0))?;
        let inside = authority
            .get(1..close)
            .ok_or(err(UriErrorKind::InvalidHost, 0))?;
        let (ip, zone) = parse_ip_literal(inside, base + 1)?;
        (Host::Ip(IpAddr::V6(ip)), zone, close + 1)
    } else {
        let end = bytes.iter().position(|&b| b == b':').unwrap_or(bytes.len());
        let raw = authority
            .get(..end)
            .ok_or(err(UriErrorKind::InvalidHost, 0))?;
        (parse_reg_name_or_ipv4(raw, base)?, None, end)
    };
    let port = match authority.get(host_end..).unwrap_or_default() {
        "" => None,
        rest => match rest.strip_prefix(':') {
            Some(digits) => parse_port(digits, base + host_end + 1)?,
            None => return Err(err(UriErrorKind::InvalidHost, host_end)),
        },
    };
    Ok(Authority { host, zone, port })
}

/// Parses the inside of `[...]`: an IPv6 address, optionally with `%25` and a zone id.
fn parse_ip_literal(inside: &str, base: usize) -> Result<(Ipv6Addr, Option<&str>), UriError> {
    let (address, zone) = match inside.find('%') {
        None => (inside, None),
        Some(p) => {
            let zone = inside
                .get(p..)
                .and_then(|z| z.strip_prefix("%25"))
                .filter(|z| !z.is_empty())
                .ok_or(UriError::new(UriErrorKind::InvalidZone, base + p))?;
            check_chars(zone, base + p + 3, is_unreserved, UriErrorKind::InvalidZone)?;
            (inside.get(..p).unwrap_or_default(), Some(zone))
        }
    };
    // IPvFuture ("v1.x") and anything else that is not IPv6 text fails here.
    let ip = address
        .parse::<Ipv6Addr>()
        .map_err(|_| UriError::new(UriErrorKind::InvalidHost, base))?;
    Ok((ip, zone))
}

/// Parses a host that is not bracketed. Decoding comes first, so that an IPv4 address written
/// with percent-encoded digits is still an address (they are equivalent, RFC 3986 §6.2.2.2).
fn parse_reg_name_or_ipv4(raw: &str, base: usize) -> Result<Host<'_>, UriError> {
    if raw.is_empty() {
        return Err(UriError::new(UriErrorKind::EmptyHost, base));
    }
    check_chars(raw, base, is_reg_name_char, UriErrorKind::InvalidHost)?;
    let mut buf = [0u8; MAX_VALUE_LEN];
    let text = decode_text(raw, base, &mut buf)?;
    Ok(match text.parse::<Ipv4Addr>() {
        Ok(ip) => Host::Ip(IpAddr::V4(ip)),
        Err(_) => Host::Name(raw),
    })
}

/// Parses `*DIGIT` as a port; empty means "the default".
fn parse_port(digits: &str, base: usize) -> Result<Option<u16>, UriError> {
    if digits.is_empty() {
        return Ok(None);
    }
    let mut value: u32 = 0;
    for (i, b) in digits.bytes().enumerate() {
        if !b.is_ascii_digit() {
            return Err(UriError::new(UriErrorKind::InvalidPort, base + i));
        }
        // value <= 65535 here, so this cannot overflow a u32.
        value = value * 10 + u32::from(b - b'0');
        if value > u32::from(u16::MAX) {
            return Err(UriError::new(UriErrorKind::InvalidPort, base));
        }
    }
    Ok(u16::try_from(value).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(a: &str) -> Result<Authority<'_>, UriError> {
        parse_authority(a, 0)
    }

    #[test]
    fn names_addresses_and_ports() {
        let a = host("Example.COM:61616").unwrap();
        assert_eq!(a.host, Host::Name("Example.COM"));
        assert_eq!(a.port, Some(61616));
        let a = host("192.0.2.1").unwrap();
        assert_eq!(a.host, Host::Ip("192.0.2.1".parse().unwrap()));
        assert_eq!(a.port, None);
        let a = host("[::1]:").unwrap();
        assert_eq!(a.host, Host::Ip("::1".parse().unwrap()));
        assert_eq!(a.port, None);
        // Percent-encoded digits still make an address.
        let a = host("%31%39%32.0.2.1").unwrap();
        assert_eq!(a.host, Host::Ip("192.0.2.1".parse().unwrap()));
        // Leading zeros are not a dec-octet, so this is a registered name.
        assert_eq!(host("01.2.3.4").unwrap().host, Host::Name("01.2.3.4"));
    }

    #[test]
    fn zones() {
        let a = host("[fe80::1%25eth0]:5684").unwrap();
        assert_eq!(a.zone, Some("eth0"));
        assert_eq!(a.port, Some(5684));
        assert_eq!(a.host, Host::Ip("fe80::1".parse().unwrap()));
        let kind = |a| host(a).unwrap_err();
        assert_eq!(
            kind("[fe80::1%eth0]"),
            UriError::new(UriErrorKind::InvalidZone, 8)
        );
        assert_eq!(
            kind("[fe80::1%25]"),
            UriError::new(UriErrorKind::InvalidZone, 8)
        );
        assert_eq!(
            kind("[fe80::1%25a:b]"),
            UriError::new(UriErrorKind::InvalidZone, 12)
        );
    }

    #[test]
    fn errors() {
        let e = |a| host(a).unwrap_err();
        assert_eq!(e(""), UriError::new(UriErrorKind::EmptyHost, 0));
        assert_eq!(e(":5683"), UriError::new(UriErrorKind::EmptyHost, 0));
        assert_eq!(e("u@h"), UriError::new(UriErrorKind::UserInfo, 1));
        assert_eq!(e("[::1"), UriError::new(UriErrorKind::InvalidHost, 0));
        assert_eq!(e("[]"), UriError::new(UriErrorKind::InvalidHost, 1));
        assert_eq!(e("[v1.x]"), UriError::new(UriErrorKind::InvalidHost, 1));
        assert_eq!(e("[::1]x"), UriError::new(UriErrorKind::InvalidHost, 5));
        assert_eq!(e("h:70000"), UriError::new(UriErrorKind::InvalidPort, 2));
        assert_eq!(
            e("h:99999999999999999999"),
            UriError::new(UriErrorKind::InvalidPort, 2)
        );
        assert_eq!(e("h:5a"), UriError::new(UriErrorKind::InvalidPort, 3));
        assert_eq!(e("h:1:2"), UriError::new(UriErrorKind::InvalidPort, 3));
        assert_eq!(e("h<"), UriError::new(UriErrorKind::InvalidHost, 1));
        assert_eq!(
            e("h%zz"),
            UriError::new(UriErrorKind::InvalidPercentEncoding, 1)
        );
        assert_eq!(e("h%FF"), UriError::new(UriErrorKind::InvalidUtf8, 0));
        assert_eq!(host("h:65535").unwrap().port, Some(65535));
        assert_eq!(host("h:0").unwrap().port, Some(0));
    }
}
