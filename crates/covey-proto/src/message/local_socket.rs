//! Which local socket a datagram leaves from (RFC 7252 §5.3.2: a response goes out from
//! where its request arrived): local addresses interned as small ids, and the choice of the
//! socket a queued datagram leaves from.

use crate::message::outbox::LocalId;
use crate::message::peer::PeerTable;
use alloc::vec::Vec;
use core::net::SocketAddr;

/// Local socket addresses interned at most; others are reported as unknown.
const MAX_LOCALS: usize = 64;

/// The local socket addresses seen, so queued datagrams and peers name them by index + 1
/// (0 is "unknown").
#[derive(Debug, Default)]
pub(crate) struct LocalSockets {
    addrs: Vec<SocketAddr>,
}

impl LocalSockets {
    /// The local socket address interned as `id`.
    pub fn addr(&self, id: LocalId) -> Option<SocketAddr> {
        (id.0 as usize)
            .checked_sub(1)
            .and_then(|i| self.addrs.get(i))
            .copied()
    }

    /// Interns a local socket address (unknown past `MAX_LOCALS` addresses).
    pub fn intern(&mut self, socket: Option<SocketAddr>) -> LocalId {
        let Some(socket) = socket else {
            return LocalId::default();
        };
        if let Some(i) = self.addrs.iter().position(|&l| l == socket) {
            return LocalId(i as u16 + 1);
        }
        if self.addrs.len() >= MAX_LOCALS {
            return LocalId::default();
        }
        self.addrs.push(socket);
        LocalId(self.addrs.len() as u16)
    }
}

/// The local socket a datagram to `destination` leaves from: `replying_from`, the socket
/// being answered from, if known, else the one the destination last reached.
pub(crate) fn source_socket(
    replying_from: LocalId,
    peers: &PeerTable,
    destination: SocketAddr,
) -> LocalId {
    match replying_from {
        LocalId(0) => peers
            .lookup(&destination)
            .and_then(|k| peers.local(k))
            .unwrap_or_default(),
        id => id,
    }
}
