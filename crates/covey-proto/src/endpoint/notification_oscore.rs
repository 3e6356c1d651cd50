//! OSCORE-protected notifications (RFC 8613 §4.1.3.5.2, §8.3): an observer registered by a
//! protected request gets each notification sealed on its own, under the server's next
//! Partial IV, so it cannot be written from its round's shared representation as a plain
//! observer's is. The sealed datagram is the message's own: a NON's slot, or a CON's
//! transmission, which retransmits it as it is.

use super::Endpoint;
use crate::message::outbox::OutSource;
use crate::message::transmission::TransmissionOwner;
use crate::message::wire::Outgoing;
use crate::observe::notification_mids::MidRole;
use crate::request::Response;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::Instant;
use core::mem::take;
use core::net::SocketAddr;
use covey_core::{uint, CoapOption, MessageType, OptionNumber};
use covey_oscore::ResponsePartialIv;

/// Where a sealed notification goes, and what it replaces.
struct Addressed {
    remote: SocketAddr,
    message_id: u16,
    /// The observer's CON in flight, which a newer notification replaces (RFC 7641 §4.5.2).
    replaced: Option<SlabKey>,
    /// Its Observe value; `None` for an error, which ends the observation.
    sequence: Option<u32>,
    confirmable: bool,
}

impl Endpoint {
    /// Sends observer `key`, registered under OSCORE, its notification of `response`,
    /// protected; a CON replaces the one in flight. An error response goes without Observe
    /// and is the server's own from then on: the caller removes the observer.
    pub(crate) fn notify_protected(
        &mut self,
        now: Instant,
        key: SlabKey,
        response: &Response<'_>,
        confirmable: bool,
    ) -> bool {
        let reuse = self.lifetimes.mid_reuse;
        let Some(o) = self.observers.get(key) else {
            return false;
        };
        let (token, peer, replaced) = (o.token, o.peer, o.in_flight);
        let binding = self.oscore.observations.get(&key).copied();
        let success = response.code.is_success();
        let sequence = success.then_some((o.sequence + 1) & 0xFF_FFFF);
        let addressed = binding.zip(self.peers.addr(peer)).and_then(|(b, remote)| {
            let message_id = self.peers.allocate_mid(peer, now, reuse)?;
            Some((b, remote, message_id))
        });
        let Some((binding, remote, message_id)) = addressed else {
            self.stats.drop(DropCause::Overload);
            return false;
        };
        let mut value = [0u8; 4];
        let observe = sequence.map(|s| CoapOption {
            number: OptionNumber::OBSERVE,
            value: uint::encode(s, &mut value),
        });
        let m = Outgoing {
            message_type: match confirmable {
                true => MessageType::Confirmable,
                false => MessageType::NonConfirmable,
            },
            code: response.code,
            message_id,
            token: token.as_bytes(),
            options: response.options,
            extra: observe.as_slice(),
            payload: response.payload,
        };
        let mut plain = take(&mut self.oscore.buffers.plain);
        let mut sealed = take(&mut self.oscore.buffers.sealed);
        // §8.3: a notification always carries the server's own Partial IV.
        let protected =
            self.protect_response(&m, binding, ResponsePartialIv::Own, &mut plain, &mut sealed);
        let sent = match protected {
            Ok(len) => {
                let addressed = Addressed {
                    remote,
                    message_id,
                    replaced,
                    sequence,
                    confirmable,
                };
                self.send_sealed_notification(now, key, &sealed[..len], addressed)
            }
            Err(_) => {
                self.stats.drop(DropCause::TooLarge);
                false
            }
        };
        self.oscore.buffers.plain = plain;
        self.oscore.buffers.sealed = sealed;
        sent
    }

    /// Sends `sealed`, observer `key`'s protected notification, as `to` says: a NON from a
    /// slot, a CON in a new transmission or in place of the one in flight.
    fn send_sealed_notification(
        &mut self,
        now: Instant,
        key: SlabKey,
        sealed: &[u8],
        to: Addressed,
    ) -> bool {
        let Some(peer) = self.observers.get(key).map(|o| o.peer) else {
            return false;
        };
        if !to.confirmable {
            let Some(slot) = self.messages.take_slot() else {
                self.stats.drop(DropCause::Overload);
                return false;
            };
            if !self
                .messages
                .slot_mut(slot)
                .copy_from(sealed, &mut self.pool)
            {
                self.messages.release_slot(slot, &mut self.pool);
                return false;
            }
            self.queue_datagram(to.remote, OutSource::Slot(slot));
            if let Some(sequence) = to.sequence {
                if let Some(o) = self.observers.get_mut(key) {
                    o.sequence = sequence;
                    o.since_con += 1;
                }
                self.observers
                    .set_mid(&self.peers, key, MidRole::LastNon, Some(to.message_id));
            }
            return true;
        }
        let Some(tx) = to
            .replaced
            .or_else(|| self.transmissions.reserve(peer, to.remote))
        else {
            self.stats.drop(DropCause::Overload);
            return false;
        };
        if !self
            .transmissions
            .buf_mut(tx)
            .copy_from(sealed, &mut self.pool)
        {
            match to.replaced {
                // The copy in flight is gone: so is the observation.
                Some(_) => self.remove_observer(now, key),
                None => self.transmissions.unreserve(tx),
            }
            return false;
        }
        match to.replaced {
            Some(tx) => {
                let old = self.transmissions.renumber(tx, to.message_id);
                if to.sequence.is_some() {
                    // An RST to the replaced copy still ends the observation.
                    self.observers
                        .set_mid(&self.peers, key, MidRole::Replaced, old);
                } else {
                    self.transmissions
                        .set_owner(tx, TransmissionOwner::SeparateResponse);
                    if let Some(o) = self.observers.get_mut(key) {
                        o.in_flight = None;
                    }
                }
                self.queue_datagram(to.remote, OutSource::Transmission(tx));
            }
            None => {
                let owner = match to.sequence {
                    Some(_) => TransmissionOwner::Notification(key),
                    None => TransmissionOwner::SeparateResponse,
                };
                let ongoing = self.exchanges.in_flight(peer);
                self.start_transmission(now, tx, to.message_id, owner, ongoing);
                if to.sequence.is_some() {
                    if let Some(o) = self.observers.get_mut(key) {
                        o.in_flight = Some(tx);
                    }
                }
            }
        }
        if let (Some(sequence), Some(o)) = (to.sequence, self.observers.get_mut(key)) {
            o.sequence = sequence;
            o.last_con = now;
            o.since_con = 0;
        }
        true
    }
}
