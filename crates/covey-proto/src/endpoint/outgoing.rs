//! The endpoint's side of outgoing datagrams: it picks the local socket a datagram leaves
//! from and queues it in the outbox, and sends the empty ACKs and RSTs the message layer
//! encodes.

use super::Endpoint;
use crate::message::outbox::{LocalId, OutSource};
use crate::message::reply_cache::ReplyRef;
use crate::stats::DropCause;
use core::net::SocketAddr;
use covey_core::MessageType;

impl Endpoint {
    /// The local socket address interned as `id`.
    pub(crate) fn local_addr(&self, id: LocalId) -> Option<SocketAddr> {
        self.messages.local_addr(id)
    }

    /// Interns a local socket address (unknown past a bound on the number of addresses).
    pub(crate) fn local_id(&mut self, socket: Option<SocketAddr>) -> LocalId {
        self.messages.intern_local(socket)
    }

    /// Queues a datagram for `poll_transmit`, from the socket being answered from, else the
    /// one the destination last reached; a full queue drops it and counts the drop.
    pub(crate) fn queue_datagram(&mut self, destination: SocketAddr, source: OutSource) {
        if !self
            .messages
            .queue(&self.peers, &mut self.pool, destination, source)
        {
            self.stats.drop(DropCause::OutboxFull);
        }
    }

    /// Sends an empty ACK or RST; with `cache`, remembers it for duplicates.
    pub(crate) fn send_empty(
        &mut self,
        remote: SocketAddr,
        message_type: MessageType,
        mid: u16,
        cache: bool,
    ) -> Option<ReplyRef> {
        let source = self
            .messages
            .encode_empty(&mut self.pool, message_type, mid, cache)?;
        self.queue_datagram(remote, source);
        match source {
            OutSource::Reply(reply) => Some(reply),
            _ => None,
        }
    }
}
