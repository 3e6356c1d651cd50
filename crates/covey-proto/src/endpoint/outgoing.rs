//! The endpoint's side of outgoing datagrams: it picks the local socket a datagram leaves
//! from and queues it in the outbox, and sends the empty ACKs and RSTs the message layer
//! encodes.

use super::Endpoint;
use crate::message::empty::encode_empty;
use crate::message::local_socket::source_socket;
use crate::message::outbox::{LocalId, OutSource};
use crate::message::reply_cache::ReplyRef;
use crate::stats::DropCause;
use core::net::SocketAddr;
use covey_core::MessageType;

impl Endpoint {
    /// The local socket address interned as `id`.
    pub(crate) fn local_addr(&self, id: LocalId) -> Option<SocketAddr> {
        self.locals.addr(id)
    }

    /// Interns a local socket address (unknown past a bound on the number of addresses).
    pub(crate) fn local_id(&mut self, socket: Option<SocketAddr>) -> LocalId {
        self.locals.intern(socket)
    }

    /// Queues a datagram for `poll_transmit`, from the socket being answered from, else the
    /// one the destination last reached; a full queue drops it and counts the drop.
    pub(crate) fn queue_datagram(&mut self, destination: SocketAddr, source: OutSource) {
        let local = source_socket(self.replying_from, &self.peers, destination);
        if !self.outbox.push(destination, source, local, &mut self.pool) {
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
        let source = encode_empty(
            &mut self.replies,
            &mut self.outbox,
            &mut self.pool,
            message_type,
            mid,
            cache,
        )?;
        self.queue_datagram(remote, source);
        match source {
            OutSource::Reply(reply) => Some(reply),
            _ => None,
        }
    }
}
