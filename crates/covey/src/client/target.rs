//! Turning a `coap://` URI into a destination address and the request's URI options.

use std::net::{IpAddr, SocketAddr, SocketAddrV6};

use covey_core::uri::{percent_decode, Host, Scheme, Uri};

use crate::multicast::interface_index;
use crate::{Error, Options};

/// Where a request goes and the Uri-* options it carries.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub remote: SocketAddr,
    pub options: Options,
}

/// Parses and resolves `uri` (a registered name goes through the system resolver).
pub(crate) async fn resolve(uri: &str) -> Result<Target, Error> {
    let bad = |reason: String| Error::InvalidUri {
        uri: uri.to_string(),
        reason,
    };
    let parsed = Uri::parse(uri).map_err(|e| bad(e.to_string()))?;
    if parsed.scheme() != Scheme::Coap {
        return Err(bad(format!(
            "scheme {} is not supported (only coap://)",
            parsed.scheme()
        )));
    }
    let port = parsed.port_or_default();
    let remote = match parsed.host() {
        Host::Ip(IpAddr::V6(ip)) => {
            let scope = match parsed.zone() {
                Some(zone) => interface_index(zone).map_err(|e| bad(e.to_string()))?,
                None => 0,
            };
            SocketAddr::V6(SocketAddrV6::new(ip, port, 0, scope))
        }
        Host::Ip(ip) => SocketAddr::new(ip, port),
        Host::Name(name) => lookup(name, port).await?,
    };
    let mut options = Options::new();
    for (number, value) in parsed.options(Some(remote)) {
        options.push(number, value.as_bytes());
    }
    Ok(Target { remote, options })
}

async fn lookup(name: &str, port: u16) -> Result<SocketAddr, Error> {
    let fail = |reason: String| Error::Resolve {
        host: name.to_string(),
        reason,
    };
    let mut buf = [0u8; covey_core::uri::MAX_VALUE_LEN];
    let host = percent_decode(name, &mut buf)
        .ok()
        .and_then(|b| std::str::from_utf8(b).ok())
        .ok_or_else(|| fail("not a valid host name".to_string()))?
        .to_string();
    let mut addrs = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| fail(e.to_string()))?;
    addrs
        .next()
        .ok_or_else(|| fail("no address found".to_string()))
}
