//! Sending a notification round: `poll_transmit` writes each due observer's NON
//! notification (its token, a fresh message ID, its Observe value) straight into the
//! caller's buffer from the round's shared representation.

use crate::endpoint::Endpoint;
use crate::message::datagram::{LocalAddr, Transmit};
use crate::message::wire::notification_into;
use crate::observe::notification_mids::MidRole;
use crate::stats::DropCause;
use crate::Instant;
use covey_core::{uint, CoapOption, Header, MessageType, OptionNumber};

impl Endpoint {
    /// Writes the next due observer's NON notification into `buf`; `None` once nobody is
    /// due. An observer whose notification cannot go (no message ID free towards its
    /// client, or too large for `buf`) is skipped and the drop counted.
    pub(crate) fn transmit_notification(
        &mut self,
        now: Instant,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        let reuse = self.lifetimes.mid_reuse;
        while let Some(key) = self.rounds.next_due(&self.observers) {
            let Some(o) = self.observers.get_mut(key) else {
                continue;
            };
            let (token, resource) = (o.token, o.resource);
            let sequence = (o.sequence + 1) & 0xFF_FFFF;
            let addressed = self
                .peers
                .get_mut(o.peer)
                .and_then(|p| Some((p.addr, p.local, p.allocate_mid(now, reuse)?)));
            let mut value = [0u8; 4];
            let observe = [CoapOption {
                number: OptionNumber::OBSERVE,
                value: uint::encode(sequence, &mut value),
            }];
            let written = addressed.and_then(|(_, _, mid)| {
                let template = self.rounds.template(resource)?;
                notification_into(template, mid, token.as_bytes(), &observe, buf).ok()
            });
            self.rounds.settle(o, &mut self.pool);
            let (Some((remote, local, mid)), Some(size)) = (addressed, written) else {
                let cause = match addressed {
                    Some(_) => DropCause::TooLarge,
                    None => DropCause::Overload,
                };
                self.stats.drop(cause);
                continue;
            };
            o.sequence = sequence;
            o.since_con += 1;
            self.set_notification_mid(key, MidRole::LastNon, Some(mid));
            self.stats.transmissions += 1;
            self.stats.bytes_sent += size as u64;
            let code = Header::parse(&buf[..size]).ok()?.code;
            return Some(Transmit {
                destination: remote,
                size,
                source: LocalAddr {
                    socket: self.local_addr(local),
                    multicast_group: None,
                },
                message_type: MessageType::NonConfirmable,
                code,
                message_id: mid,
                request: None,
                retransmission: 0,
            });
        }
        None
    }
}
