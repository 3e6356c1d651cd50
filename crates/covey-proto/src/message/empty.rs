//! Empty messages (RFC 7252 §4.2–4.3): the ACK or RST that carries no request or response.

use crate::endpoint::Endpoint;
use crate::message::outbox::OutSource;
use crate::message::reply_cache::ReplyRef;
use crate::message::wire::Outgoing;
use core::net::SocketAddr;
use covey_core::{Code, MessageType};

impl Endpoint {
    /// Sends an empty ACK or RST; with `cache`, remembers it for duplicates.
    pub(crate) fn send_empty(
        &mut self,
        remote: SocketAddr,
        message_type: MessageType,
        mid: u16,
        cache: bool,
    ) -> Option<ReplyRef> {
        let m = Outgoing {
            message_type,
            code: Code::EMPTY,
            message_id: mid,
            token: &[],
            options: &[],
            extra: &[],
            payload: &[],
        };
        if cache {
            let reply = self.replies.encode(&m).ok()?;
            self.queue_datagram(remote, OutSource::Reply(reply));
            Some(reply)
        } else {
            let slot = self.outbox.take_slot()?;
            if self.outbox.buf_mut(slot).encode(&m, &mut self.pool).is_ok() {
                self.queue_datagram(remote, OutSource::Slot(slot));
            } else {
                self.outbox.release(slot, &mut self.pool);
            }
            None
        }
    }
}
