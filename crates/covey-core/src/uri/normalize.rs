//! The normalised form of a [`Uri`] (RFC 7252 §6.3, RFC 3986 §6.2.2): what composing its
//! options gives back.

use core::fmt::{self, Write as _};
use core::net::IpAddr;

use super::host::Host;
use super::parse::Uri;
use super::percent::{write_encoded, Decoded, EncodeSet};

/// Displays a [`Uri`] normalised: lower-case scheme and host, no default port, dot-segments
/// removed, "/" for an empty path, and only the percent-encodings that are needed, upper-case.
#[derive(Debug, Clone, Copy)]
pub struct Normalized<'a> {
    uri: Uri<'a>,
}

impl<'a> Uri<'a> {
    /// This URI in normalised form, for display or comparison.
    pub fn normalized(&self) -> Normalized<'a> {
        Normalized { uri: *self }
    }
}

impl fmt::Display for Normalized<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let uri = &self.uri;
        f.write_str(uri.scheme.as_str())?;
        f.write_str("://")?;
        match uri.host {
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}")?,
            Host::Ip(IpAddr::V6(ip)) => {
                write!(f, "[{ip}")?;
                if let Some(zone) = uri.zone {
                    f.write_str("%25")?;
                    write_encoded(f, Decoded::new(zone), EncodeSet::Zone)?;
                }
                f.write_char(']')?;
            }
            Host::Name(name) => write_encoded(f, Decoded::new(name), EncodeSet::Host)?,
        }
        let port = uri.port_or_default();
        if port != uri.scheme.default_port() {
            write!(f, ":{port}")?;
        }
        let mut segments = uri.path_segments().peekable();
        if segments.peek().is_none() {
            f.write_char('/')?;
        }
        for segment in segments {
            f.write_char('/')?;
            write_encoded(f, Decoded::new(segment), EncodeSet::PathSegment)?;
        }
        for (i, arg) in uri.query_args().enumerate() {
            f.write_char(if i == 0 { '?' } else { '&' })?;
            write_encoded(f, Decoded::new(arg), EncodeSet::QueryArg)?;
        }
        Ok(())
    }
}
