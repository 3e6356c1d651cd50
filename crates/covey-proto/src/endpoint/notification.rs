//! The endpoint's side of notifications (RFC 7641 §4.2, §4.5): a new state of a resource
//! starts its round in the observe layer, and each observer's notification becomes NON or
//! CON there. A CON takes a transmission of the message layer (or replaces the one in
//! flight, keeping its retransmission counter and timer) and is written from the round like
//! a NON, so a CON in flight holds no copy of the representation. An error response ends
//! the observations.

use super::Endpoint;
use crate::message::outbox::OutSource;
use crate::message::transmission::TransmissionOwner;
use crate::message::wire::Outgoing;
use crate::observe::notification_mids::MidRole;
use crate::observe::observer::{NotificationType, Observer};
use crate::request::Response;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::Instant;
use covey_core::MessageType;

/// Bytes an observer's notification adds to the round's representation besides its token:
/// the Observe option (a one-byte header and at most three bytes of value). Inserting it
/// never lengthens the options after it, whose deltas only shrink.
const OBSERVE_OPTION_MAX: usize = 4;

impl Endpoint {
    /// Sends `response` as a notification to every observer of `resource`; returns how
    /// many were notified or are due to be. A non-2.xx response ends those observations.
    /// Notifications are written as `poll_transmit` sends them, from one copy of the
    /// representation; an observer still due from an earlier call gets only the newest.
    pub fn notify(&mut self, now: Instant, resource: u64, response: &Response<'_>) -> usize {
        self.notify_as(now, resource, response, NotificationType::Auto)
    }

    /// Like [`Endpoint::notify`], with the message type chosen by the caller (e.g. a
    /// resource whose notifications are always NON).
    pub fn notify_as(
        &mut self,
        now: Instant,
        resource: u64,
        response: &Response<'_>,
        kind: NotificationType,
    ) -> usize {
        let mut notified = 0;
        // The shared representation, encoded when the first observer is met.
        let mut round: Option<bool> = None;
        for index in 0..self.observers.slots_created() {
            let Some(key) = self.observers.key_at(index) else {
                continue;
            };
            let confirmable = match self.observers.get(key) {
                Some(o) if o.resource == resource => self.is_confirmable(now, o, response, kind),
                _ => continue,
            };
            #[cfg(feature = "oscore")]
            if self.observers.get(key).is_some_and(Observer::is_protected) {
                if self.notify_protected(now, key, response, confirmable) {
                    notified += 1;
                }
                if !response.code.is_success() {
                    self.remove_observer(now, key);
                }
                continue;
            }
            if !response.code.is_success() {
                // An error ends the observation right away, so it cannot wait in a round.
                self.observers.settle(key, &mut self.pool);
                if self.notify_error(now, key, response, confirmable) {
                    notified += 1;
                }
                self.remove_observer(now, key);
                continue;
            }
            let started = *round.get_or_insert_with(|| self.start_round(resource, response));
            if !started {
                continue;
            }
            let due = match confirmable {
                true => self.confirm_notification(now, key),
                false => {
                    let there = self.observers.get(key).is_some();
                    self.observers.mark_due(key);
                    there
                }
            };
            if due {
                notified += 1;
            }
        }
        if round == Some(true) {
            self.observers.end_round_if_idle(resource, &mut self.pool);
        }
        notified
    }

    /// Encodes `response` as `resource`'s newest representation for its round; false when
    /// it does not fit a datagram.
    fn start_round(&mut self, resource: u64, response: &Response<'_>) -> bool {
        let m = Outgoing {
            message_type: MessageType::NonConfirmable,
            code: response.code,
            message_id: 0,
            token: &[],
            options: response.options,
            extra: &[],
            payload: response.payload,
        };
        // An observer's NON copy that then does not fit the caller's buffer (its token and
        // Observe option added) is dropped and counted as it is sent, as a queued one was.
        let encoded = self.observers.start_round(resource, &m, &mut self.pool);
        if !encoded {
            self.stats.drop(DropCause::TooLarge);
        }
        encoded
    }

    /// Whether observer `o`'s next notification is CON: while the last CON's fate is
    /// unknown (it then replaces that one), at least once per interval and every n-th time,
    /// and while the observer's address is unverified (its ACK verifies it; without one the
    /// observation ends, so a spoofed registration costs a bounded number of bytes).
    /// A periodic CON waits for a free transmission slot; meanwhile the state goes NON and
    /// the next notification tries again (RFC 7641 §4.5 asks for a CON at least daily).
    fn is_confirmable(
        &self,
        now: Instant,
        o: &Observer,
        response: &Response<'_>,
        kind: NotificationType,
    ) -> bool {
        match kind {
            NotificationType::Confirmable => true,
            // Still CON when one is unconfirmed: it is replaced, not doubled.
            NotificationType::NonConfirmable => o.in_flight.is_some(),
            NotificationType::Auto => {
                let periodic = o.since_con + 1 >= self.config.observe_con_every
                    || now.saturating_duration_since(o.last_con)
                        >= self.config.observe_con_interval;
                o.in_flight.is_some()
                    || !response.code.is_success()
                    || ((periodic || !self.is_observer_verified(now, o))
                        && !self.transmissions.is_full())
            }
        }
    }

    /// Whether observer `o`'s address may be sent more than its amplification budget.
    fn is_observer_verified(&self, now: Instant, o: &Observer) -> bool {
        let (Some(addr), Some(local)) = (self.peers.addr(o.peer), self.peers.local(o.peer)) else {
            return false;
        };
        self.address_validation
            .is_unlimited(now, addr, self.local_addr(local))
    }

    /// Sends the error `response` that ends observer `key`'s observation (RFC 7641 §4.2),
    /// with no Observe option; a CON replaces the one in flight, if any. The message is
    /// the server's own from then on: the caller removes the observer.
    fn notify_error(
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
        let (token, peer, replaced, resource) = (o.token, o.peer, o.in_flight, o.resource);
        let Some(remote) = self.peers.addr(peer) else {
            return false;
        };
        let Some(mid) = self.peers.allocate_mid(peer, now, reuse) else {
            return false;
        };
        let m = Outgoing {
            message_type: if confirmable {
                MessageType::Confirmable
            } else {
                MessageType::NonConfirmable
            },
            code: response.code,
            message_id: mid,
            token: token.as_bytes(),
            options: response.options,
            extra: &[],
            payload: response.payload,
        };
        if !confirmable {
            let Ok(source) = self.messages.encode_out(&mut self.pool, &m, false) else {
                return false;
            };
            self.queue_datagram(remote, source);
            return true;
        }
        let Some(tx) = replaced.or_else(|| self.transmissions.reserve(peer, remote)) else {
            return false;
        };
        if self
            .transmissions
            .buf_mut(tx)
            .encode(&m, &mut self.pool)
            .is_err()
        {
            if replaced.is_none() {
                self.transmissions.unreserve(tx);
            }
            return false;
        }
        match replaced {
            Some(tx) => {
                // RFC 7641 §4.5.2: the error replaces the CON in flight, keeping its
                // retransmission counter and timer; it has its own copy now.
                self.transmissions.renumber(tx, mid);
                self.transmissions
                    .set_owner(tx, TransmissionOwner::SeparateResponse);
                self.observers.release_round(resource, &mut self.pool);
                if let Some(o) = self.observers.get_mut(key) {
                    o.in_flight = None;
                }
                self.queue_datagram(remote, OutSource::Transmission(tx));
            }
            None => {
                let ongoing = self.exchanges.in_flight(peer);
                self.start_transmission(now, tx, mid, TransmissionOwner::SeparateResponse, ongoing);
            }
        }
        true
    }

    /// Makes observer `key`'s notification of the round under way a CON: a new
    /// transmission, or the one in flight with a new message ID (RFC 7641 §4.5.2: the newer
    /// state replaces it, keeping its retransmission counter and timer). The round sends
    /// its first copy. False when no message ID or transmission is free, or when the
    /// notification would not fit a datagram.
    fn confirm_notification(&mut self, now: Instant, key: SlabKey) -> bool {
        let reuse = self.lifetimes.mid_reuse;
        let Some(o) = self.observers.get(key) else {
            return false;
        };
        let (token, peer, resource, replaced) = (o.token, o.peer, o.resource, o.in_flight);
        let Some(template) = self.observers.template(resource) else {
            return false;
        };
        if template.len() + token.len() + OBSERVE_OPTION_MAX > self.config.max_message_size {
            self.stats.drop(DropCause::TooLarge);
            return false;
        }
        let Some((remote, mid)) = self
            .peers
            .addr(peer)
            .and_then(|addr| Some((addr, self.peers.allocate_mid(peer, now, reuse)?)))
        else {
            return false;
        };
        match replaced {
            Some(tx) => {
                if let Some(old) = self.transmissions.renumber(tx, mid) {
                    // An RST to the replaced copy still ends the observation.
                    self.observers
                        .set_mid(&self.peers, key, MidRole::Replaced, Some(old));
                }
            }
            None => {
                let Some(tx) = self.transmissions.reserve(peer, remote) else {
                    return false;
                };
                let ongoing = self.exchanges.in_flight(peer);
                self.arm_transmission(now, tx, mid, TransmissionOwner::Notification(key), ongoing);
                self.observers.hold_round(resource);
                if let Some(o) = self.observers.get_mut(key) {
                    o.in_flight = Some(tx);
                }
            }
        }
        let Some(o) = self.observers.get_mut(key) else {
            return false;
        };
        o.sequence = (o.sequence + 1) & 0xFF_FFFF;
        o.last_con = now;
        o.since_con = 0;
        self.observers.mark_due(key);
        true
    }
}
