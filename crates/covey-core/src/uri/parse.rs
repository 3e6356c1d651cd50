//! The [`Uri`] view: a validated `coap`/`coaps` URI borrowing its text (RFC 7252 §6.1–6.2).

use core::net::{IpAddr, SocketAddr, SocketAddrV6};

use super::error::{UriError, UriErrorKind};
use super::host::{parse_authority, Authority, Host};
use super::percent::{check_chars, decode_text, is_pchar, is_query_char};
use super::segments::{PathSegments, QueryArgs};
use super::{Scheme, MAX_VALUE_LEN};

/// A parsed CoAP URI borrowing the string it was read from. Parsing validates everything the
/// option decomposition needs, so [`Uri::options`] cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uri<'a> {
    pub(super) text: &'a str,
    pub(super) scheme: Scheme,
    pub(super) host: Host<'a>,
    pub(super) zone: Option<&'a str>,
    pub(super) port: Option<u16>,
    pub(super) path: &'a str,
    pub(super) query: Option<&'a str>,
}

/// The end of a URI scheme (the index of its ":"), if `bytes` starts with one (RFC 3986 §3.1).
fn scheme_end(bytes: &[u8]) -> Option<usize> {
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let end = bytes
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (bytes.get(end) == Some(&b':')).then_some(end)
}

/// Checks each `/`-separated segment of `path` (which starts at byte `base`).
fn check_path(path: &str, base: usize) -> Result<(), UriError> {
    let Some(body) = path.strip_prefix('/') else {
        return Ok(()); // Empty: the authority ends the path only at "/" or "?".
    };
    let mut at = base + 1;
    let mut buf = [0u8; MAX_VALUE_LEN];
    for segment in body.split('/') {
        check_chars(segment, at, is_pchar, UriErrorKind::InvalidCharacter)?;
        decode_text(segment, at, &mut buf)?;
        at += segment.len() + 1;
    }
    Ok(())
}

/// Checks each `&`-separated argument of `query` (which starts at byte `base`).
fn check_query(query: &str, base: usize) -> Result<(), UriError> {
    let mut at = base;
    let mut buf = [0u8; MAX_VALUE_LEN];
    for arg in query.split('&') {
        check_chars(arg, at, is_query_char, UriErrorKind::InvalidCharacter)?;
        decode_text(arg, at, &mut buf)?;
        at += arg.len() + 1;
    }
    Ok(())
}

impl<'a> Uri<'a> {
    /// Parses an absolute `coap` or `coaps` URI, rejecting what cannot become request options.
    pub fn parse(text: &'a str) -> Result<Uri<'a>, UriError> {
        let bytes = text.as_bytes();
        let colon = scheme_end(bytes).ok_or(UriError::new(UriErrorKind::NotAbsolute, 0))?;
        let scheme = text
            .get(..colon)
            .and_then(Scheme::from_name)
            .ok_or(UriError::new(UriErrorKind::UnsupportedScheme, 0))?;
        if let Some(at) = bytes.iter().position(|&b| b == b'#') {
            return Err(UriError::new(UriErrorKind::Fragment, at));
        }
        let after_scheme = colon + 1;
        let rest = text
            .get(after_scheme..)
            .and_then(|r| r.strip_prefix("//"))
            .ok_or(UriError::new(UriErrorKind::MissingAuthority, after_scheme))?;
        let authority_start = after_scheme + 2;
        let authority_len = rest
            .bytes()
            .position(|b| b == b'/' || b == b'?')
            .unwrap_or(rest.len());
        let (authority, rest) = rest.split_at_checked(authority_len).unwrap_or((rest, ""));
        let Authority { host, zone, port } = parse_authority(authority, authority_start)?;
        let path_start = authority_start + authority_len;
        let (path, query) = match rest.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (rest, None),
        };
        check_path(path, path_start)?;
        if let Some(query) = query {
            check_query(query, path_start + path.len() + 1)?;
        }
        Ok(Uri {
            text,
            scheme,
            host,
            zone,
            port,
            path,
            query,
        })
    }

    /// The text this URI was parsed from.
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host: an IP address or a registered name as written.
    pub fn host(&self) -> Host<'a> {
        self.host
    }

    /// The IPv6 zone id as written after "%25" (RFC 6874), still percent-encoded.
    pub fn zone(&self) -> Option<&'a str> {
        self.zone
    }

    /// The port written in the URI, if any.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The written port, or the scheme's default.
    pub fn port_or_default(&self) -> u16 {
        self.port.unwrap_or(self.scheme.default_port())
    }

    /// The path as written ("" or starting with "/"), still percent-encoded.
    pub fn path(&self) -> &'a str {
        self.path
    }

    /// The query after "?" as written, still percent-encoded; `None` without a "?".
    pub fn query(&self) -> Option<&'a str> {
        self.query
    }

    /// The raw path segments after removing dot-segments; each becomes one Uri-Path.
    pub fn path_segments(&self) -> PathSegments<'a> {
        PathSegments::new(self.path)
    }

    /// The raw `&`-separated query arguments; each becomes one Uri-Query.
    pub fn query_args(&self) -> QueryArgs<'a> {
        QueryArgs::new(self.query)
    }

    /// The socket address of an IP-literal host with the effective port; a numeric zone
    /// becomes the IPv6 scope id, a named one is left to the caller (see [`Uri::zone`]).
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        let Host::Ip(ip) = self.host else {
            return None;
        };
        let port = self.port_or_default();
        Some(match ip {
            IpAddr::V6(v6) => {
                let scope = self.zone.and_then(|z| z.parse::<u32>().ok()).unwrap_or(0);
                SocketAddr::V6(SocketAddrV6::new(v6, port, 0, scope))
            }
            IpAddr::V4(_) => SocketAddr::new(ip, port),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn err(text: &str) -> UriError {
        Uri::parse(text).unwrap_err()
    }

    #[test]
    fn accessors() {
        let u = Uri::parse("COAPS://Example.COM/a/b%2Fc/?x=1&y").unwrap();
        assert_eq!(u.as_str(), "COAPS://Example.COM/a/b%2Fc/?x=1&y");
        assert_eq!(u.scheme(), Scheme::Coaps);
        assert_eq!(u.host(), Host::Name("Example.COM"));
        assert_eq!(u.port(), None);
        assert_eq!(u.port_or_default(), 5684);
        assert_eq!(u.path(), "/a/b%2Fc/");
        assert_eq!(u.query(), Some("x=1&y"));
        assert_eq!(u.path_segments().collect::<Vec<_>>(), ["a", "b%2Fc", ""]);
        assert_eq!(u.query_args().collect::<Vec<_>>(), ["x=1", "y"]);
        assert_eq!(u.socket_addr(), None);
    }

    #[test]
    fn empty_path_and_query() {
        let u = Uri::parse("coap://h").unwrap();
        assert_eq!((u.path(), u.query()), ("", None));
        assert_eq!(u.path_segments().count(), 0);
        let u = Uri::parse("coap://h?").unwrap();
        assert_eq!((u.path(), u.query()), ("", Some("")));
        assert_eq!(u.query_args().collect::<Vec<_>>(), [""]);
        let u = Uri::parse("coap://h:/").unwrap();
        assert_eq!(u.port(), None);
    }

    #[test]
    fn ip_hosts() {
        let u = Uri::parse("coap://[::1]:5684/a").unwrap();
        assert_eq!(u.host(), Host::Ip("::1".parse().unwrap()));
        assert_eq!(u.port(), Some(5684));
        assert_eq!(u.socket_addr(), Some("[::1]:5684".parse().unwrap()));
        let u = Uri::parse("coap://[fe80::1%2542]/").unwrap();
        assert_eq!(u.zone(), Some("42"));
        assert_eq!(u.socket_addr(), Some("[fe80::1%42]:5683".parse().unwrap()));
        let u = Uri::parse("coap://[fe80::1%25eth0]/").unwrap();
        assert_eq!(u.zone(), Some("eth0"));
        assert_eq!(u.socket_addr(), Some("[fe80::1]:5683".parse().unwrap()));
        let u = Uri::parse("coap://192.0.2.1:7/").unwrap();
        assert_eq!(u.socket_addr(), Some("192.0.2.1:7".parse().unwrap()));
    }

    #[test]
    fn errors_carry_offsets() {
        use UriErrorKind::*;
        let cases = [
            ("http://h/", UnsupportedScheme, 0),
            ("/relative", NotAbsolute, 0),
            ("//h/x", NotAbsolute, 0),
            ("example.com", NotAbsolute, 0),
            ("", NotAbsolute, 0),
            ("coap:h/x", MissingAuthority, 5),
            ("coap:///x", EmptyHost, 7),
            ("coap://h/a#frag", Fragment, 10),
            ("coap://h/a?b#", Fragment, 12),
            ("coap://h/%G1", InvalidPercentEncoding, 9),
            ("coap://h/a?q=%4", InvalidPercentEncoding, 13),
            ("coap://h:70000/", InvalidPort, 9),
            ("coap://h/a b", InvalidCharacter, 10),
            ("coap://h/a/[", InvalidCharacter, 11),
            ("coap://h/é", InvalidCharacter, 9),
            ("coap://h/?a&b|", InvalidCharacter, 13),
            ("coap://h/%C3", InvalidUtf8, 9),
            ("coap://u@h/", UserInfo, 8),
        ];
        for (text, kind, offset) in cases {
            assert_eq!(err(text), UriError::new(kind, offset), "{text}");
        }
    }

    #[test]
    fn error_display() {
        assert_eq!(
            std::format!("{}", err("coap://h/a#frag")),
            "at byte 10: fragment not allowed in a CoAP URI"
        );
    }

    #[test]
    fn values_over_255_decoded_bytes_are_rejected() {
        let ok = std::format!("coap://h/{}", "a".repeat(255));
        assert!(Uri::parse(&ok).is_ok());
        // The limit is on decoded bytes, not on the text.
        let short = std::format!("coap://h/{}", "%41".repeat(255));
        assert!(Uri::parse(&short).is_ok());
        let long = std::format!("coap://h/x/{}", "a".repeat(256));
        assert_eq!(err(&long), UriError::new(UriErrorKind::ValueTooLong, 11));
        let long = std::format!("coap://h/?{}", "%62".repeat(256));
        assert_eq!(err(&long), UriError::new(UriErrorKind::ValueTooLong, 10));
        let long = std::format!("coap://{}/", "h".repeat(256));
        assert_eq!(err(&long), UriError::new(UriErrorKind::ValueTooLong, 7));
    }
}
