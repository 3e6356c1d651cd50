//! How a client reached the EM, so the entity URIs in its replies name the EM as that client
//! does: the scheme the request came in (`coaps` over DTLS), the address it was sent to and
//! the port of the socket that took it.

use core::net::SocketAddr;

use covey_core::uri::SocketAuthority;
use covey_proto::{AppContext, Received};

/// The scheme and address a request reached the EM at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReachedAt {
    /// It came over DTLS (`coaps`).
    pub secured: bool,
    /// The address and port it was sent to.
    pub addr: SocketAddr,
}

impl ReachedAt {
    /// How `request` reached the host, when the host told the address it was sent to; `port`
    /// is the EM's port, for a host with one socket (which does not name it).
    pub fn of(cx: &AppContext<'_>, request: &Received<'_>, port: Option<u16>) -> Option<ReachedAt> {
        let destination = request.destination?;
        let port = request.local.map(|l| l.port()).or(port)?;
        let secure = cx.secure_socket(request.source);
        let secured = match request.local {
            Some(local) => secure == Some(local) || cx.peer_identity(request).is_some(),
            None => secure.is_some(),
        };
        Some(ReachedAt {
            secured,
            addr: SocketAddr::new(destination, port),
        })
    }

    /// The URI of entity `name` as the client names the EM, e.g. `coaps://[::1]/e/room1`.
    pub fn entity_uri(self, name: &str) -> String {
        let (scheme, default_port) = match self.secured {
            true => ("coaps", 5684),
            false => ("coap", 5683),
        };
        // SocketAuthority leaves coap's default port out; the scheme's own is left out here.
        let host = SocketAuthority(SocketAddr::new(self.addr.ip(), 5683));
        match self.addr.port() {
            p if p == default_port => format!("{scheme}://{host}/e/{name}"),
            p => format!("{scheme}://{host}:{p}/e/{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_the_scheme_and_leave_its_default_port_out() {
        let at = |secured, addr: &str| ReachedAt {
            secured,
            addr: addr.parse().unwrap(),
        };
        assert_eq!(at(false, "[::1]:5683").entity_uri("r"), "coap://[::1]/e/r");
        assert_eq!(at(true, "[::1]:5684").entity_uri("r"), "coaps://[::1]/e/r");
        assert_eq!(
            at(true, "127.0.0.1:5683").entity_uri("r"),
            "coaps://127.0.0.1:5683/e/r"
        );
        assert_eq!(
            at(false, "[fd00::2]:5684").entity_uri("r"),
            "coap://[fd00::2]:5684/e/r"
        );
    }
}
