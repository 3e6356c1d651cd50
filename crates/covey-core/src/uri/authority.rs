//! The authority of a `coap://` URI naming a socket address, as every crate writes it.

use super::Scheme;
use core::fmt;
use core::net::SocketAddr;

/// Displays `addr` as the authority of a `coap://` URI: `[2001:db8::1]:5684`, `10.0.0.1`, the
/// port left out when it is 5683 and an IPv6 scope id written as a zone (`%25` + index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketAuthority(pub SocketAddr);

impl fmt::Display for SocketAuthority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_socket_authority(f, Scheme::Coap, self.0, None)
    }
}

/// Writes the host of `destination` and its port (or `port`) unless it is the scheme's
/// default.
pub(crate) fn write_socket_authority<W: fmt::Write + ?Sized>(
    out: &mut W,
    scheme: Scheme,
    destination: SocketAddr,
    port: Option<u16>,
) -> fmt::Result {
    match destination {
        SocketAddr::V4(d) => write!(out, "{}", d.ip())?,
        SocketAddr::V6(d) => {
            write!(out, "[{}", d.ip())?;
            // A scope id is the only zone a socket address knows (RFC 6874).
            if d.scope_id() != 0 {
                write!(out, "%25{}", d.scope_id())?;
            }
            out.write_char(']')?;
        }
    }
    let port = port.unwrap_or(destination.port());
    if port != scheme.default_port() {
        write!(out, ":{port}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::string::ToString;

    #[test]
    fn written_as_in_a_uri() {
        let a = |s: &str| SocketAuthority(s.parse().unwrap()).to_string();
        assert_eq!(a("[::1]:5683"), "[::1]");
        assert_eq!(a("[2001:db8::1]:5684"), "[2001:db8::1]:5684");
        assert_eq!(a("127.0.0.1:7000"), "127.0.0.1:7000");
        assert_eq!(a("[fe80::1%2]:5683"), "[fe80::1%252]");
    }
}
