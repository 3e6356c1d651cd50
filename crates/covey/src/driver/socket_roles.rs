//! Which of the driver's sockets speak DTLS (`coaps`) and which speak plain `coap`, and the
//! socket a request in either scheme leaves from.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::socket::{reaches, Socket};

/// One bound socket as far as choosing a source goes.
#[derive(Debug, Clone, Copy)]
struct Role {
    local: SocketAddr,
    dual_stack: bool,
    secured: bool,
}

/// The security of each socket, in the driver's socket order; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct SocketRoles(Arc<[Role]>);

impl SocketRoles {
    /// The roles of `sockets`, where `secured[i]` says whether socket `i` speaks DTLS.
    pub fn new(sockets: &[Arc<Socket>], secured: &[bool]) -> SocketRoles {
        SocketRoles(
            sockets
                .iter()
                .zip(secured)
                .map(|(s, &secured)| Role {
                    local: s.local_addr(),
                    dual_stack: s.is_dual_stack(),
                    secured,
                })
                .collect(),
        )
    }

    /// Whether socket `i` speaks DTLS.
    pub fn is_secured(&self, i: usize) -> bool {
        self.0.get(i).is_some_and(|r| r.secured)
    }

    /// Whether any socket speaks DTLS.
    pub fn any_secured(&self) -> bool {
        self.0.iter().any(|r| r.secured)
    }

    /// Whether some sockets speak DTLS and others do not.
    pub fn is_mixed(&self) -> bool {
        self.any_secured() && self.0.iter().any(|r| !r.secured)
    }

    /// The addresses of the sockets that speak DTLS.
    pub fn secured_addrs(&self) -> Vec<SocketAddr> {
        self.0
            .iter()
            .filter(|r| r.secured)
            .map(|r| r.local)
            .collect()
    }

    /// The first socket of the given security that reaches `destination`.
    pub fn source(&self, destination: SocketAddr, secured: bool) -> Option<SocketAddr> {
        self.0
            .iter()
            .find(|r| r.secured == secured && reaches(r.local, r.dual_stack, destination))
            .map(|r| r.local)
    }
}
