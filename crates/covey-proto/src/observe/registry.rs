//! The server side of Observe (RFC 7641 §4): registrations keyed by (client, token),
//! 24-bit sequence numbers, CON/NON notifications, and removal on RST, timeout or error.

use crate::endpoint::{Endpoint, RespondError};
use crate::exchange::incoming_exchange::IncomingState;
use crate::exchange::incoming_exchange::ObserveRequest;
use crate::message::outbox::OutSource;
use crate::message::transmission::{TransmissionEnd, TransmissionOwner};
use crate::message::wire::Outgoing;
use crate::observe::notification_mids::MidRole;
use crate::observe::observer::{NotificationType, Observer};
use crate::request::Response;
use crate::storage::slab::SlabKey;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{uint, CoapOption, MessageType, OptionNumber, Token};

impl Endpoint {
    /// Answers a request for an observable `resource`: an Observe 0 request with a 2.xx
    /// response registers (or renews) the client as an observer and the response carries
    /// the current sequence number; Observe 1, or a GET without Observe from a registered
    /// client, deregisters. Returns whether the client is now registered.
    pub fn respond_observable(
        &mut self,
        now: Instant,
        id: crate::IncomingId,
        resource: u64,
        response: &Response<'_>,
    ) -> Result<bool, RespondError> {
        let inc = self
            .incoming
            .get(id.0)
            .ok_or(RespondError::UnknownRequest)?;
        if inc.state != IncomingState::Waiting {
            return Err(RespondError::UnknownRequest);
        }
        let existing = self.find_observer(inc.remote, inc.token);
        let wants = inc.observe;
        let register = wants == ObserveRequest::Register && response.code.is_success();
        if !register {
            if let Some(o) = existing {
                self.remove_observer(now, o);
            }
            self.respond(now, id, response)?;
            return Ok(false);
        }
        let (remote, token) = (inc.remote, inc.token);
        let observer = match existing {
            Some(o) => Some(o),
            None if self.make_room_for_observer(now, remote) => {
                self.add_observer(now, remote, token, resource)
            }
            None => None,
        };
        let Some(o) = observer else {
            // No room (or the client holds its share): answer without Observe, which tells
            // the client it is not registered (RFC 7641 §4.1).
            self.respond(now, id, response)?;
            return Ok(false);
        };
        if let Some(tx) = self.observers.get(o).and_then(|obs| obs.in_flight) {
            // The response carries the current state with a newer Observe value, so a CON
            // notification still in flight is obsolete; the request shows the client is there.
            self.end_transmission(now, tx, TransmissionEnd::TimedOut);
            if let Some(obs) = self.observers.get_mut(o) {
                obs.in_flight = None;
            }
        }
        let sequence = match self.observers.get_mut(o) {
            Some(obs) => {
                // The response carries the current state: a notification still due in a
                // round would only repeat it (and its round is the old resource's).
                self.rounds.settle(obs, &mut self.pool);
                obs.resource = resource;
                obs.sequence = (obs.sequence + 1) & 0xFF_FFFF;
                obs.sequence
            }
            None => 0,
        };
        let mut value = [0u8; 4];
        let extra = [CoapOption {
            number: OptionNumber::OBSERVE,
            value: uint::encode(sequence, &mut value),
        }];
        self.respond_with_extra(now, id, response, &extra)?;
        Ok(true)
    }

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
            if !response.code.is_success() {
                // An error ends the observation right away, so it cannot wait in a round.
                if let Some(o) = self.observers.get_mut(key) {
                    self.rounds.settle(o, &mut self.pool);
                }
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
                false => match self.observers.get_mut(key) {
                    Some(o) => {
                        self.rounds.mark_due(o);
                        true
                    }
                    None => false,
                },
            };
            if due {
                notified += 1;
            }
        }
        if round == Some(true) {
            self.rounds.end_if_idle(resource, &mut self.pool);
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
        let encoded = self.rounds.set_template(resource, &m, &mut self.pool);
        if !encoded {
            self.stats.drop(crate::stats::DropCause::TooLarge);
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
        self.is_unlimited(now, addr, self.local_addr(local))
    }

    /// Number of observers registered for `resource`.
    pub fn observer_count(&self, resource: u64) -> usize {
        self.observers
            .iter()
            .filter(|(_, o)| o.resource == resource)
            .count()
    }

    fn add_observer(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        token: Token,
        resource: u64,
    ) -> Option<SlabKey> {
        let peer = self.peer_for(remote, now)?;
        let key = self
            .observers
            .insert(Observer {
                token,
                resource,
                peer,
                sequence: self.rng.next_u64() as u32 & 0xFF_FFFF,
                in_flight: None,
                last_non_mid: None,
                replaced_mid: None,
                last_con: now,
                since_con: 0,
                due: false,
            })
            .ok()?;
        self.peers.hold(peer);
        self.observer_index
            .insert(&self.observers, &self.peers, key, remote, token);
        Some(key)
    }

    /// The network says nothing listens at `remote` any more (ICMP port unreachable): its
    /// client exchanges fail as with [`Endpoint::handle_unreachable`], and the observations
    /// registered from there end, as an RST to a notification ends them (RFC 7641 §3.6,
    /// §4.5): notifying a closed port only draws more ICMP errors. Returns how many ended.
    pub fn handle_port_closed(&mut self, now: Instant, remote: SocketAddr) -> usize {
        let mut ended = 0;
        for index in 0..self.observers.capacity() {
            let Some(key) = self.observers.key_at(index) else {
                continue;
            };
            let there = self
                .observers
                .get(key)
                .is_some_and(|o| self.observer_addr(o) == Some(remote));
            if there {
                self.remove_observer(now, key);
                ended += 1;
            }
        }
        self.handle_unreachable(now, remote);
        ended
    }

    /// The address of observer `o`'s peer.
    fn observer_addr(&self, o: &Observer) -> Option<SocketAddr> {
        self.peers.addr(o.peer)
    }

    /// The observer registered by `remote` with `token`.
    fn find_observer(&self, remote: SocketAddr, token: Token) -> Option<SlabKey> {
        self.observer_index
            .find(&self.observers, &self.peers, remote, token)
    }

    /// Sets observer `key`'s `role` message ID (`None` forgets it), so that an RST to that
    /// notification ends the observation.
    pub(crate) fn set_notification_mid(&mut self, key: SlabKey, role: MidRole, mid: Option<u16>) {
        let Some(o) = self.observers.get_mut(key) else {
            return;
        };
        let old = core::mem::replace(role.field(o), mid);
        let Some(remote) = self.peers.addr(o.peer) else {
            return;
        };
        // The entry of the old ID goes before the new one is indexed: a rehash reads IDs
        // from the observers.
        if let Some(old) = old {
            self.notification_mids.remove(key, role, remote, old);
        }
        if let Some(mid) = mid {
            self.notification_mids
                .insert(&self.observers, &self.peers, key, role, remote, mid);
        }
    }

    pub(crate) fn remove_observer(&mut self, now: Instant, key: SlabKey) {
        self.set_notification_mid(key, MidRole::LastNon, None);
        self.set_notification_mid(key, MidRole::Replaced, None);
        // Ended while the observer is still there: its round learns the CON is gone.
        if let Some(tx) = self.observers.get(key).and_then(|o| o.in_flight) {
            self.end_transmission(now, tx, TransmissionEnd::TimedOut);
        }
        let Some(mut o) = self.observers.remove(key) else {
            return;
        };
        self.observer_refusals.entry_removed();
        self.rounds.settle(&mut o, &mut self.pool);
        if let Some(remote) = self.observer_addr(&o) {
            self.observer_index.remove(key, remote, o.token);
        }
        self.peers.release(o.peer);
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
        let (token, peer, replaced) = (o.token, o.peer, o.in_flight);
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
            let Some(slot) = self.messages.take_slot() else {
                return false;
            };
            if self
                .messages
                .slot_mut(slot)
                .encode(&m, &mut self.pool)
                .is_err()
            {
                self.messages.release_slot(slot, &mut self.pool);
                return false;
            }
            self.queue_datagram(remote, OutSource::Slot(slot));
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
        let resource = self.observers.get(key).map(|o| o.resource);
        match replaced {
            Some(tx) => {
                // RFC 7641 §4.5.2: the error replaces the CON in flight, keeping its
                // retransmission counter and timer; it has its own copy now.
                self.transmissions.renumber(tx, mid);
                self.transmissions
                    .set_owner(tx, TransmissionOwner::SeparateResponse);
                if let Some(resource) = resource {
                    self.rounds.release(resource, &mut self.pool);
                }
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

    /// A CON notification ended: acknowledged keeps the observer, RST or timeout removes it.
    pub(crate) fn on_notification_ended(&mut self, now: Instant, key: SlabKey, acknowledged: bool) {
        if let Some(o) = self.observers.get_mut(key) {
            o.in_flight = None;
        }
        if acknowledged {
            self.set_notification_mid(key, MidRole::Replaced, None);
        } else {
            self.remove_observer(now, key);
        }
    }

    /// An RST that matched no transmission may reject a NON notification.
    pub(crate) fn reset_notification(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        mid: u16,
    ) -> bool {
        match self
            .notification_mids
            .find(&self.observers, &self.peers, remote, mid)
        {
            Some(key) => {
                self.remove_observer(now, key);
                true
            }
            None => false,
        }
    }
}
