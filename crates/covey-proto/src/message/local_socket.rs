//! Which local socket a datagram leaves from (RFC 7252 §5.3.2: a response goes out from
//! where its request arrived): local addresses interned as small ids, and the queueing of
//! datagrams with the socket to send them from.

use crate::endpoint::Endpoint;
use crate::message::outbox::{LocalId, OutSource};
use crate::stats::DropCause;
use core::net::SocketAddr;

/// Local socket addresses interned at most; others are reported as unknown.
const MAX_LOCALS: usize = 64;

impl Endpoint {
    /// The local socket address interned as `id`.
    pub(crate) fn local_addr(&self, id: LocalId) -> Option<SocketAddr> {
        (id.0 as usize)
            .checked_sub(1)
            .and_then(|i| self.locals.get(i))
            .copied()
    }

    /// Interns a local socket address (unknown past `MAX_LOCALS` addresses).
    pub(crate) fn local_id(&mut self, socket: Option<SocketAddr>) -> LocalId {
        let Some(socket) = socket else {
            return LocalId::default();
        };
        if let Some(i) = self.locals.iter().position(|&l| l == socket) {
            return LocalId(i as u16 + 1);
        }
        if self.locals.len() >= MAX_LOCALS {
            return LocalId::default();
        }
        self.locals.push(socket);
        LocalId(self.locals.len() as u16)
    }

    /// Queues a datagram for `poll_transmit`, from the socket being answered from, else the
    /// one the destination last reached; a full queue drops it and counts the drop.
    pub(crate) fn queue_datagram(&mut self, destination: SocketAddr, source: OutSource) {
        let local = match self.replying_from {
            LocalId(0) => self
                .peers
                .lookup(&destination)
                .and_then(|k| self.peers.get(k))
                .map_or(LocalId::default(), |p| p.local),
            id => id,
        };
        if !self.outbox.push(destination, source, local, &mut self.pool) {
            self.stats.drop(DropCause::OutboxFull);
        }
    }
}
