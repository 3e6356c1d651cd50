//! Sending a notification round: `poll_transmit` writes each due observer's notification
//! (its token, message ID and Observe value) straight into the caller's buffer from the
//! round's shared representation: a NON with a fresh message ID, or the first copy of the
//! observer's CON in flight. Retransmissions of that CON are written the same way.

use super::Endpoint;
use crate::message::datagram::{LocalAddr, Transmit};
use crate::observe::notification_mids::MidRole;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::Instant;
use covey_core::{Header, MessageType};

impl Endpoint {
    /// Writes the next due observer's notification into `buf`; `None` once nobody is due.
    /// An observer whose NON notification cannot go (no message ID free towards its client,
    /// or too large for `buf`) is skipped and the drop counted.
    pub(crate) fn transmit_notification(
        &mut self,
        now: Instant,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        let reuse = self.lifetimes.mid_reuse;
        while let Some(key) = self.observers.next_due() {
            let Some(o) = self.observers.get(key) else {
                continue;
            };
            // A CON in flight goes with its own message ID, retransmission count and
            // Observe value (set when it was made); a NON takes the next of each.
            let confirmable = o
                .in_flight
                .and_then(|tx| self.transmissions.get(tx))
                .map(|t| (t.message_id, t.retransmissions));
            let sequence = match confirmable {
                Some(_) => o.sequence,
                None => (o.sequence + 1) & 0xFF_FFFF,
            };
            let peer = o.peer;
            let addressed = self.peers.addr(peer).and_then(|addr| {
                let local = self.peers.local(peer)?;
                let mid = match confirmable {
                    Some((mid, _)) => mid,
                    None => self.peers.allocate_mid(peer, now, reuse)?,
                };
                Some((addr, local, mid))
            });
            let message_type = match confirmable {
                Some(_) => MessageType::Confirmable,
                None => MessageType::NonConfirmable,
            };
            let written = addressed.and_then(|(_, _, mid)| {
                self.observers
                    .write_notification(key, message_type, mid, sequence, buf)
            });
            self.observers.settle(key, &mut self.pool);
            let (Some((remote, local, mid)), Some(size)) = (addressed, written) else {
                let cause = match addressed {
                    Some(_) => DropCause::TooLarge,
                    None => DropCause::Overload,
                };
                self.stats.drop(cause);
                continue;
            };
            if !self
                .address_validation
                .spend(now, remote, self.local_addr(local), size)
            {
                // A CON stays in flight unsent: it times out and ends the observation.
                self.stats.drop(DropCause::AmplificationLimit);
                continue;
            }
            if confirmable.is_none() {
                if let Some(o) = self.observers.get_mut(key) {
                    o.sequence = sequence;
                    o.since_con += 1;
                }
                self.observers
                    .set_mid(&self.peers, key, MidRole::LastNon, Some(mid));
            }
            self.stats.transmissions += 1;
            self.stats.bytes_sent += size as u64;
            let code = Header::parse(&buf[..size]).ok()?.code;
            return Some(Transmit {
                destination: remote,
                size,
                source: LocalAddr {
                    socket: self.local_addr(local),
                    ..LocalAddr::UNICAST
                },
                message_type,
                code,
                message_id: mid,
                request: None,
                retransmission: confirmable.map_or(0, |(_, r)| r),
            });
        }
        None
    }

    /// Writes a retransmission of observer `key`'s CON notification (message ID
    /// `message_id`) into `buf`.
    pub(crate) fn write_confirmable(
        &self,
        key: SlabKey,
        message_id: u16,
        buf: &mut [u8],
    ) -> Option<usize> {
        let sequence = self.observers.get(key)?.sequence;
        self.observers
            .write_notification(key, MessageType::Confirmable, message_id, sequence, buf)
    }
}
