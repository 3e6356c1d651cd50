//! Turning a `coap://` URI into a destination address and the request's URI options.

use std::net::{IpAddr, SocketAddr, SocketAddrV6};

use covey_core::uri::{percent_decode, Host, Scheme, Uri};

use crate::driver::SocketRoles;
use crate::multicast::interface_index;
use crate::{Error, Options};

/// Where a request goes and the Uri-* options it carries.
#[derive(Debug, Clone)]
pub struct Target {
    /// The destination address.
    pub remote: SocketAddr,
    /// The request's Uri-* options (Uri-Host and Uri-Port only where the URI needs them).
    pub options: Options,
    /// Whether the URI is `coaps://` (DTLS).
    pub secure: bool,
}

/// Where a URI points before any name is looked up.
enum Destination {
    Address(SocketAddr),
    Name { host: String, port: u16 },
}

/// Parses and resolves `uri` (a registered name goes through the system resolver), so a
/// caller can look at the destination before sending with [`RequestBuilder::resolved`].
///
/// [`RequestBuilder::resolved`]: crate::RequestBuilder::resolved
pub async fn resolve(uri: &str) -> Result<Target, Error> {
    let parsed = parse(uri)?;
    let remote = match destination(uri, &parsed)? {
        Destination::Address(a) => a,
        Destination::Name { host, port } => {
            let found = tokio::net::lookup_host((host.as_str(), port)).await;
            first_address(&host, found)?
        }
    };
    Ok(target(&parsed, remote))
}

/// [`resolve`] for callers without a runtime: a name is looked up on this thread.
pub fn resolve_blocking(uri: &str) -> Result<Target, Error> {
    let parsed = parse(uri)?;
    let remote = match destination(uri, &parsed)? {
        Destination::Address(a) => a,
        Destination::Name { host, port } => {
            let found = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port));
            first_address(&host, found)?
        }
    };
    Ok(target(&parsed, remote))
}

fn bad(uri: &str, reason: String) -> Error {
    Error::InvalidUri {
        uri: uri.to_string(),
        reason,
    }
}

fn parse(uri: &str) -> Result<Uri<'_>, Error> {
    Uri::parse(uri).map_err(|e| bad(uri, e.to_string()))
}

fn destination(uri: &str, parsed: &Uri<'_>) -> Result<Destination, Error> {
    let port = parsed.port_or_default();
    Ok(match parsed.host() {
        Host::Ip(IpAddr::V6(ip)) => {
            let scope = match parsed.zone() {
                Some(zone) => interface_index(zone).map_err(|e| bad(uri, e.to_string()))?,
                None => 0,
            };
            Destination::Address(SocketAddr::V6(SocketAddrV6::new(ip, port, 0, scope)))
        }
        Host::Ip(ip) => Destination::Address(SocketAddr::new(ip, port)),
        Host::Name(name) => {
            let mut buf = [0u8; covey_core::uri::MAX_VALUE_LEN];
            let host = percent_decode(name, &mut buf)
                .ok()
                .and_then(|b| std::str::from_utf8(b).ok())
                .ok_or_else(|| Error::Resolve {
                    host: name.to_string(),
                    reason: "not a valid host name".to_string(),
                })?
                .to_string();
            Destination::Name { host, port }
        }
    })
}

fn first_address(
    host: &str,
    found: std::io::Result<impl Iterator<Item = SocketAddr>>,
) -> Result<SocketAddr, Error> {
    let fail = |reason: String| Error::Resolve {
        host: host.to_string(),
        reason,
    };
    found
        .map_err(|e| fail(e.to_string()))?
        .next()
        .ok_or_else(|| fail("no address found".to_string()))
}

fn target(parsed: &Uri<'_>, remote: SocketAddr) -> Target {
    // An IPv4-mapped IPv6 address is the IPv4 host: its answers come from the IPv4
    // address, which would not match a request sent to the mapped one.
    let remote = SocketAddr::new(remote.ip().to_canonical(), remote.port());
    let mut options = Options::new();
    for (number, value) in parsed.options(Some(remote)) {
        options.push(number, value.as_bytes());
    }
    Target {
        remote,
        options,
        secure: parsed.scheme() == Scheme::Coaps,
    }
}

/// Checks that `target`'s scheme is what the client speaks: `coaps://` needs DTLS
/// credentials, and a secured client sends nothing in the clear.
pub(crate) fn check_scheme(uri: &str, target: &Target, secured: bool) -> Result<(), Error> {
    match (target.secure, secured) {
        (true, false) => Err(bad(
            uri,
            "coaps:// needs DTLS credentials (a pre-shared key or a certificate)".into(),
        )),
        (false, true) => Err(bad(uri, "this client speaks DTLS: use coaps://".into())),
        _ => Ok(()),
    }
}

/// The local socket a request to `target` leaves from: on a driver with both coap and
/// coaps sockets, one of the scheme's that reaches the target; otherwise the engine's choice,
/// once the scheme is what the client speaks.
pub(crate) fn source(
    uri: &str,
    target: &Target,
    roles: &SocketRoles,
) -> Result<Option<SocketAddr>, Error> {
    if !roles.is_mixed() {
        check_scheme(uri, target, roles.any_secured())?;
        return Ok(None);
    }
    match roles.source(target.remote, target.secure) {
        Some(local) => Ok(Some(local)),
        None => Err(bad(
            uri,
            format!(
                "no {} socket of this client reaches {}",
                if target.secure { "coaps" } else { "coap" },
                target.remote
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use covey_core::OptionNumber;

    #[test]
    fn blocking_and_async_resolution_agree() {
        let uri = "coap://[::1]:5684/sensors/temp?unit=c";
        let blocking = resolve_blocking(uri).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let awaited = runtime.block_on(resolve(uri)).unwrap();
        assert_eq!(blocking.remote, "[::1]:5684".parse().unwrap());
        assert_eq!(blocking.remote, awaited.remote);
        assert_eq!(blocking.options.path(), "/sensors/temp");
        assert_eq!(blocking.options.query("unit").as_deref(), Some("c"));
        assert!(
            resolve_blocking("localhost:5683").is_err(),
            "a scheme is needed"
        );
        let local = resolve_blocking("coap://localhost/x").unwrap();
        assert!(local.remote.ip().is_loopback());
        assert!(matches!(
            resolve_blocking("http://[::1]/x"),
            Err(Error::InvalidUri { .. })
        ));
        let mapped = resolve_blocking("coap://[::ffff:127.0.0.1]:5684/x").unwrap();
        assert_eq!(mapped.remote, "127.0.0.1:5684".parse().unwrap());
        assert!(mapped.options.get(OptionNumber::URI_HOST).is_none());
        let secure = resolve_blocking("coaps://[::1]/x").unwrap();
        assert_eq!(secure.remote, "[::1]:5684".parse().unwrap());
        assert!(secure.secure && !blocking.secure);
        assert!(check_scheme("coaps://[::1]/x", &secure, false).is_err());
        assert!(check_scheme("coap://[::1]/x", &blocking, true).is_err());
        assert!(check_scheme("coaps://[::1]/x", &secure, true).is_ok());
    }
}
